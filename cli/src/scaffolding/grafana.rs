//! The grafana plugin of `operator-gen edit --plugins grafana`: Grafana dashboards (JSON to
//! import) for the metrics the manager serves, `grafana/controller-runtime-metrics.json`, and for
//! the user's own metrics, `grafana/custom-metrics/custom-metrics-dashboard.json`, one panel per
//! item of `grafana/custom-metrics/config.yaml`. The dashboards are the generator's: every `edit
//! --plugins grafana` writes them again (the custom one is removed when the configuration lists no
//! metric); the configuration is the user's, written only when missing.

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::{Error, Result};
use crate::project::Project;
use crate::scaffold::{IfExists, Scaffold};
use crate::templates::Engine;

/// The plugin's key in `PROJECT`'s `plugins`.
pub const PLUGIN_KEY: &str = "grafana.operator-gen.io/v1-alpha";
/// The names `--plugins` accepts for it.
pub const NAMES: &[&str] = &["grafana", "grafana/v1-alpha", PLUGIN_KEY];
/// The user's configuration of custom metrics.
pub const CONFIG: &str = "grafana/custom-metrics/config.yaml";
/// The dashboard of the manager's metrics.
pub const RUNTIME_DASHBOARD: &str = "grafana/controller-runtime-metrics.json";
/// The dashboard of the custom metrics.
pub const CUSTOM_DASHBOARD: &str = "grafana/custom-metrics/custom-metrics-dashboard.json";

/// `config.yaml` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    #[serde(default)]
    custom_metrics: Option<Vec<Item>>,
}

/// One item of `customMetrics`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Item {
    metric: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    expr: Option<String>,
    unit: Option<String>,
}

/// One panel of the custom dashboard: the metric's name and type as checked, the panel's own
/// PromQL and unit as JSON strings (the template writes the default PromQL of a type).
#[derive(Debug, Serialize, PartialEq)]
struct Panel {
    metric: String,
    kind: String,
    expr_json: Option<String>,
    unit_json: String,
}

/// Stage the dashboards, and the configuration when missing; a configuration that does not
/// parse, or an item without a valid metric name or type, is an error naming the item.
pub fn stage(s: &mut Scaffold, engine: &Engine, project: &Project) -> Result<()> {
    let config = s.read(CONFIG)?;
    let panels = match &config {
        Some(text) => panels(text)?,
        None => Vec::new(),
    };
    let ctx = json!({ "project_name": project.project_name, "panels": panels });
    s.file(
        RUNTIME_DASHBOARD,
        json_file(
            engine,
            "plugins/grafana/controller-runtime-metrics.json.tera",
            &ctx,
        )?,
        IfExists::Overwrite,
    )?;
    if config.is_none() {
        let text = engine.render("plugins/grafana/custom-metrics/config.yaml.tera", &ctx)?;
        s.file(CONFIG, text, IfExists::Skip)?;
    }
    if !panels.is_empty() {
        let template = "plugins/grafana/custom-metrics/custom-metrics-dashboard.json.tera";
        s.file(
            CUSTOM_DASHBOARD,
            json_file(engine, template, &ctx)?,
            IfExists::Overwrite,
        )?;
    } else if s.exists(CUSTOM_DASHBOARD) {
        s.remove(CUSTOM_DASHBOARD);
    }
    Ok(())
}

/// A dashboard rendered, and checked to be JSON.
fn json_file(engine: &Engine, template: &str, ctx: &serde_json::Value) -> Result<String> {
    let text = engine.render(template, ctx)?;
    if let Err(e) = serde_json::from_str::<serde_json::Value>(&text) {
        return Err(Error::msg(format!(
            "{template} rendered JSON that does not parse ({e}); report an operator-gen bug"
        )));
    }
    Ok(text)
}

/// The panels of the configuration `text`.
fn panels(text: &str) -> Result<Vec<Panel>> {
    let config: Config = if text.trim().is_empty() {
        Config::default()
    } else {
        serde_saphyr::from_str(text).map_err(|e| {
            let e = e.to_string().replace('\n', " ");
            Error::msg(format!(
                "{CONFIG} is not a custom-metrics configuration ({e}); fix it as its comments describe, or delete it to have it written again"
            ))
        })?
    };
    let items = config.custom_metrics.unwrap_or_default();
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| panel(i, item))
        .collect()
}

/// Item `i`'s panel, or the error naming what it lacks.
fn panel(i: usize, item: Item) -> Result<Panel> {
    let at = format!("{CONFIG}: customMetrics[{i}]");
    let metric = item.metric.unwrap_or_default();
    if !is_metric_name(&metric) {
        return Err(Error::msg(format!(
            "{at} has metric {metric:?}, not a Prometheus metric name; set `metric:` to the name /metrics serves, e.g. memcached_pods_created_total"
        )));
    }
    let kind = item.kind.unwrap_or_default().to_ascii_lowercase();
    if !["counter", "gauge", "histogram"].contains(&kind.as_str()) {
        return Err(Error::msg(format!(
            "{at} ({metric}) has type {kind:?}; set `type:` to counter, gauge or histogram"
        )));
    }
    let unit = item
        .unit
        .unwrap_or_else(|| default_unit(&metric).to_owned());
    let expr = item.expr.filter(|e| !e.trim().is_empty());
    Ok(Panel {
        metric,
        kind,
        expr_json: expr.map(|e| serde_json::Value::from(e).to_string()),
        unit_json: serde_json::Value::from(unit).to_string(),
    })
}

/// Prometheus's metric name syntax, `[a-zA-Z_:][a-zA-Z0-9_:]*`.
fn is_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// The unit a metric's name suggests.
fn default_unit(metric: &str) -> &'static str {
    let name = metric.to_ascii_lowercase();
    if name.contains("seconds") || name.contains("duration") {
        "s"
    } else if name.contains("bytes") {
        "bytes"
    } else if name.contains("ratio") {
        "percentunit"
    } else {
        "none"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_become_panels_with_default_units() {
        let text = "customMetrics:\n  - metric: memcached_pods_created_total\n    type: Counter\n  - metric: backup_duration_seconds\n    type: histogram\n  - metric: cache_bytes\n    type: gauge\n    expr: 'sum(cache_bytes{job=\"a\"})'\n    unit: decbytes\n";
        let got = panels(text).expect("panels");
        let summary: Vec<(&str, &str, Option<&str>, &str)> = got
            .iter()
            .map(|p| {
                (
                    p.metric.as_str(),
                    p.kind.as_str(),
                    p.expr_json.as_deref(),
                    p.unit_json.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("memcached_pods_created_total", "counter", None, r#""none""#),
                ("backup_duration_seconds", "histogram", None, r#""s""#),
                (
                    "cache_bytes",
                    "gauge",
                    Some(r#""sum(cache_bytes{job=\"a\"})""#),
                    r#""decbytes""#
                ),
            ]
        );
    }

    /// The `expr` of every target of a rendered dashboard.
    fn exprs(text: &str) -> Vec<String> {
        let dashboard: serde_json::Value = serde_json::from_str(text).expect("JSON");
        let mut out = Vec::new();
        for panel in dashboard["panels"].as_array().expect("panels") {
            for target in panel["targets"].as_array().expect("targets") {
                out.push(target["expr"].as_str().expect("expr").to_owned());
            }
        }
        out
    }

    #[test]
    fn the_custom_dashboard_has_a_panel_per_item() {
        let text = "customMetrics:\n  - metric: pods_created_total\n    type: counter\n  - metric: backup_seconds\n    type: histogram\n  - metric: queue_size\n    type: gauge\n  - metric: cache_bytes\n    type: gauge\n    expr: 'max(cache_bytes{job=\"a\"})'\n";
        let ctx = json!({ "project_name": "demo", "panels": panels(text).expect("panels") });
        let engine = Engine::new().expect("engine");
        let template = "plugins/grafana/custom-metrics/custom-metrics-dashboard.json.tera";
        let dashboard = json_file(&engine, template, &ctx).expect("render");
        assert_eq!(
            exprs(&dashboard),
            [
                r#"sum(rate(pods_created_total{job="$job", namespace="$namespace"}[5m])) by (pod)"#,
                r#"histogram_quantile(0.90, sum(rate(backup_seconds_bucket{job="$job", namespace="$namespace"}[5m])) by (le))"#,
                r#"queue_size{job="$job", namespace="$namespace"}"#,
                r#"max(cache_bytes{job="a"})"#,
            ]
        );
        let parsed: serde_json::Value = serde_json::from_str(&dashboard).expect("JSON");
        let places: Vec<(u64, u64)> = parsed["panels"]
            .as_array()
            .expect("panels")
            .iter()
            .map(|p| {
                let at = &p["gridPos"];
                (at["x"].as_u64().expect("x"), at["y"].as_u64().expect("y"))
            })
            .collect();
        assert_eq!(places, [(0, 0), (12, 0), (0, 8), (12, 8)]);
        assert_eq!(parsed["panels"][1]["fieldConfig"]["defaults"]["unit"], "s");
        let runtime = json_file(
            &engine,
            "plugins/grafana/controller-runtime-metrics.json.tera",
            &ctx,
        )
        .expect("render");
        let runtime = exprs(&runtime);
        for expr in [
            r#"sum(rate(controller_runtime_reconcile_total{job="$job", namespace="$namespace"}[5m])) by (controller, result)"#,
            r#"sum(workqueue_depth{job="$job", namespace="$namespace"}) by (name)"#,
            r#"sum(rate(workqueue_adds_total{job="$job", namespace="$namespace"}[5m])) by (name)"#,
            r#"histogram_quantile(0.99, sum(rate(workqueue_queue_duration_seconds_bucket{job="$job", namespace="$namespace"}[5m])) by (name, le))"#,
        ] {
            assert!(
                runtime.iter().any(|e| e == expr),
                "{expr} not in {runtime:#?}"
            );
        }
    }

    #[test]
    fn commented_out_or_empty_configurations_have_no_panels() {
        assert_eq!(panels("customMetrics:\n# - metric: x\n").expect("null"), []);
        assert_eq!(panels("customMetrics: []\n").expect("empty list"), []);
        assert_eq!(panels("# nothing yet\n").expect("comments only"), []);
    }

    #[test]
    fn bad_items_name_the_item_and_the_fix() {
        for (text, said) in [
            (
                "customMetrics:\n  - type: gauge\n",
                "customMetrics[0] has metric \"\"",
            ),
            (
                "customMetrics:\n  - metric: 1up\n    type: gauge\n",
                "not a Prometheus metric name",
            ),
            (
                "customMetrics:\n  - metric: up\n",
                "(up) has type \"\"; set `type:` to counter",
            ),
            (
                "customMetrics:\n  - metric: up\n    type: summary\n",
                "has type \"summary\"",
            ),
            (
                "customMetrics:\n  - metric: up\n    type: gauge\n    colour: red\n",
                "is not a custom-metrics configuration",
            ),
            (
                "custom_metrics: []\n",
                "is not a custom-metrics configuration",
            ),
        ] {
            let e = panels(text).expect_err(text).to_string();
            assert!(e.contains(said), "{text}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
