//! The webhook emitter: `+kubebuilder:webhook` and `+kubebuilder:webhookconfiguration` markers
//! into a MutatingWebhookConfiguration and a ValidatingWebhookConfiguration, with controller-gen's
//! defaults and checks.

use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::Marker;
use crate::markers::Kind;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
    ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The marker that declares one webhook.
pub const WEBHOOK: &str = "kubebuilder:webhook";
/// The marker that names a configuration object.
pub const CONFIGURATION: &str = "kubebuilder:webhookconfiguration";

const DEFAULT_MUTATING_NAME: &str = "mutating-webhook-configuration";
const DEFAULT_VALIDATING_NAME: &str = "validating-webhook-configuration";
const DEFAULT_SERVICE_NAME: &str = "webhook-service";
const DEFAULT_SERVICE_NAMESPACE: &str = "system";

/// Whether a webhook server can serve a hook on `path`: `/`, or `/`-separated segments of ASCII
/// letters, digits, `-` and `_` (controller-runtime's rule for custom webhook paths).
pub fn is_served_path(path: &str) -> bool {
    path == "/"
        || path.strip_prefix('/').is_some_and(|rest| {
            rest.split('/').all(|seg| {
                !seg.is_empty()
                    && seg
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            })
        })
}

/// One object of the output, in file order.
#[derive(Clone, Debug, PartialEq)]
pub enum WebhookObject {
    Mutating(MutatingWebhookConfiguration),
    Validating(ValidatingWebhookConfiguration),
}

/// True for the markers this emitter reads.
pub fn is_webhook_marker(kind: Kind) -> bool {
    matches!(kind, Kind::Webhook | Kind::WebhookConfiguration)
}

/// The webhook configurations the markers describe: the mutating one first, then the validating
/// one, each only when it has webhooks, webhooks sorted by name (stable, so equal names keep
/// marker order). Markers with other names are skipped; problems carry the index of their marker
/// ([`Diagnostic::marker`]).
pub fn configurations(markers: &[Marker]) -> Result<Vec<WebhookObject>, Vec<Diagnostic>> {
    let mut errors = Diagnostics::new();
    let mut mutating: Vec<MutatingWebhook> = Vec::new();
    let mut validating: Vec<ValidatingWebhook> = Vec::new();
    // (name, marker index) per configuration kind
    let mut mutating_name: Option<(String, usize)> = None;
    let mut validating_name: Option<(String, usize)> = None;
    for (i, m) in markers.iter().enumerate() {
        let fail = |problem: Diagnostic| problem.on_marker(i);
        if m.kind == Kind::WebhookConfiguration {
            match configuration_name(m) {
                Ok((is_mutating, name)) => {
                    let slot = if is_mutating {
                        &mut mutating_name
                    } else {
                        &mut validating_name
                    };
                    if let Some((first, _)) = slot {
                        errors.push(fail(Diagnostic::new(format!(
                            "a second `+{CONFIGURATION}:mutating={is_mutating}` (the first names `{first}`): keep one per kind"
                        ))));
                    } else {
                        *slot = Some((name, i));
                    }
                }
                Err(msg) => errors.push(fail(msg)),
            }
        } else if m.kind == Kind::Webhook {
            match Config::parse(m) {
                Ok(c) if c.mutating => match c.mutating_webhook() {
                    Ok(w) => mutating.push(w),
                    Err(msg) => errors.push(fail(msg)),
                },
                Ok(c) => match c.validating_webhook() {
                    Ok(w) => validating.push(w),
                    Err(msg) => errors.push(fail(msg)),
                },
                Err(msg) => errors.push(fail(msg)),
            }
        }
    }
    for (named, webhooks, kind) in [
        (&mutating_name, mutating.len(), "mutating"),
        (&validating_name, validating.len(), "validating"),
    ] {
        if let (Some((name, i)), 0) = (named, webhooks) {
            errors.push(
                Diagnostic::new(format!(
                    "`+{CONFIGURATION}` names the {kind} configuration `{name}` but there is no {kind} webhook: add a `+{WEBHOOK}:mutating={},...` marker or drop this one",
                    kind == "mutating"
                ))
                .on_marker(*i),
            );
        }
    }
    errors.check()?;
    mutating.sort_by(|a, b| a.name.cmp(&b.name));
    validating.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = Vec::new();
    if !mutating.is_empty() {
        out.push(WebhookObject::Mutating(MutatingWebhookConfiguration {
            metadata: meta(mutating_name, DEFAULT_MUTATING_NAME),
            webhooks: Some(mutating),
        }));
    }
    if !validating.is_empty() {
        out.push(WebhookObject::Validating(ValidatingWebhookConfiguration {
            metadata: meta(validating_name, DEFAULT_VALIDATING_NAME),
            webhooks: Some(validating),
        }));
    }
    Ok(out)
}

fn meta(named: Option<(String, usize)>, default: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(named.map_or_else(|| default.to_string(), |(n, _)| n)),
        ..Default::default()
    }
}

/// The manifests file: every object as its own `---` document.
pub fn to_yaml(objects: &[WebhookObject]) -> String {
    let mut out = String::new();
    for o in objects {
        let value = match o {
            WebhookObject::Mutating(c) => serde_json::to_value(c),
            WebhookObject::Validating(c) => serde_json::to_value(c),
        };
        out.push_str(&crate::yaml::document(&value.unwrap_or_default()));
    }
    out
}

fn configuration_name(m: &Marker) -> Result<(bool, String), Diagnostic> {
    let Some(mutating) = m.arg("mutating").and_then(Value::as_bool) else {
        return Err(Diagnostic::new(format!(
            "`+{CONFIGURATION}` needs `mutating=true` or `mutating=false`"
        )));
    };
    match m.arg_str("name") {
        Some(n) if !n.is_empty() => Ok((mutating, n.to_string())),
        _ => Err(Diagnostic::new(format!(
            "`+{CONFIGURATION}` needs `name=...`, the name of the {} configuration object",
            if mutating { "mutating" } else { "validating" }
        ))),
    }
}

/// One `+kubebuilder:webhook` marker, checked and with defaults applied.
struct Config {
    mutating: bool,
    name: String,
    rule: RuleWithOperations,
    failure_policy: String,
    match_policy: Option<String>,
    side_effects: String,
    timeout_seconds: Option<i32>,
    client_config: WebhookClientConfig,
    admission_review_versions: Vec<String>,
    reinvocation_policy: Option<String>,
    patch: Option<Value>,
}

fn required_list(m: &Marker, key: &str, example: &str) -> Result<Vec<String>, Diagnostic> {
    if m.arg(key).is_none() {
        return Err(Diagnostic::new(format!(
            "`+{WEBHOOK}` needs `{key}=...`, e.g. {key}={example}"
        )));
    }
    Ok(m.arg_list(key))
}

fn required_str<'a>(m: &'a Marker, key: &str, example: &str) -> Result<&'a str, Diagnostic> {
    match m.arg_str(key) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(Diagnostic::new(format!(
            "`+{WEBHOOK}` needs `{key}=...`, e.g. {key}={example}"
        ))),
    }
}

fn int_arg(m: &Marker, key: &str) -> Option<i64> {
    m.arg(key).and_then(Value::as_i64)
}

/// Maps a value case-insensitively onto one of `allowed`.
fn one_of(value: &str, allowed: &[&str]) -> Option<String> {
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(value))
        .map(|a| (*a).to_string())
}

/// `sideEffects`, which admissionregistration.k8s.io/v1 requires to be None or NoneOnDryRun.
fn side_effects(m: &Marker) -> Result<String, Diagnostic> {
    match m.arg_str("sideEffects") {
        None | Some("") => Err(Diagnostic::new(format!(
            "`+{WEBHOOK}` needs `sideEffects=None` or `sideEffects=NoneOnDryRun` (admissionregistration.k8s.io/v1 requires it)"
        ))),
        Some(s) if s.eq_ignore_ascii_case("some") || s.eq_ignore_ascii_case("unknown") => {
            Err(Diagnostic::new(format!(
                "sideEffects `{s}` is not allowed by admissionregistration.k8s.io/v1: use None or NoneOnDryRun"
            )))
        }
        Some(s) => one_of(s, &["None", "NoneOnDryRun"]).ok_or_else(|| {
            Diagnostic::new(format!(
                "unknown sideEffects `{s}`: use None or NoneOnDryRun"
            ))
        }),
    }
}

/// `timeoutSeconds`, 1 to 30 when given.
fn timeout_seconds(m: &Marker) -> Result<Option<i32>, Diagnostic> {
    match m.arg("timeoutSeconds") {
        None => Ok(None),
        Some(_) => match int_arg(m, "timeoutSeconds") {
            Some(t @ 1..=30) => Ok(Some(t as i32)),
            other => Err(Diagnostic::new(format!(
                "timeoutSeconds `{}` is out of range: use 1 to 30 seconds, or drop it for the default of 10",
                other.map_or_else(|| "?".to_string(), |t| t.to_string())
            ))),
        },
    }
}

/// The rule: which groups, resources, versions and operations the webhook sees.
fn rule(m: &Marker) -> Result<RuleWithOperations, Diagnostic> {
    let groups = required_list(m, "groups", "apps (core for the core group)")?;
    let resources = required_list(m, "resources", "deployments")?;
    let versions = required_list(m, "versions", "v1")?;
    let verbs = required_list(m, "verbs", "create;update")?;
    let operations = verbs
        .iter()
        .map(|v| {
            one_of(v, &["CREATE", "UPDATE", "DELETE", "CONNECT", "*"]).ok_or_else(|| {
                Diagnostic::new(format!(
                    "unknown verb `{v}` in verbs: use create, update, delete, connect or *"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RuleWithOperations {
        api_groups: Some(
            groups
                .into_iter()
                .map(|g| if g == "core" { String::new() } else { g })
                .collect(),
        ),
        api_versions: Some(versions),
        operations: Some(operations),
        resources: Some(resources),
        scope: None,
    })
}

impl Config {
    fn parse(m: &Marker) -> Result<Config, Diagnostic> {
        let Some(mutating) = m.arg("mutating").and_then(Value::as_bool) else {
            return Err(Diagnostic::new(format!(
                "`+{WEBHOOK}` needs `mutating=true` (a mutating webhook) or `mutating=false` (a validating one)"
            )));
        };
        let name = required_str(m, "name", "vcronjob-v1.kb.io")?.to_string();
        let failure_policy = required_str(m, "failurePolicy", "fail")?;
        let failure_policy = one_of(failure_policy, &["Fail", "Ignore"]).ok_or_else(|| {
            Diagnostic::new(format!(
                "unknown failurePolicy `{failure_policy}`: use fail or ignore"
            ))
        })?;
        let match_policy = match m.arg_str("matchPolicy") {
            None => None,
            Some(p) => Some(one_of(p, &["Exact", "Equivalent"]).ok_or_else(|| {
                Diagnostic::new(format!(
                    "unknown matchPolicy `{p}`: use Exact or Equivalent, or drop it"
                ))
            })?),
        };
        let side_effects = side_effects(m)?;
        let timeout_seconds = timeout_seconds(m)?;
        let rule = rule(m)?;
        let admission_review_versions = required_list(m, "admissionReviewVersions", "v1")?;
        if admission_review_versions.is_empty() {
            return Err(Diagnostic::new(format!(
                "`+{WEBHOOK}` needs at least one admissionReviewVersions entry, e.g. admissionReviewVersions=v1"
            )));
        }
        for v in m.arg_list("webhookVersions") {
            if v != "v1" {
                return Err(Diagnostic::new(format!(
                    "unsupported webhookVersions `{v}`: only v1 is supported (admissionregistration.k8s.io/v1beta1 is gone since kubernetes 1.22), write webhookVersions=v1 or drop it"
                )));
            }
        }
        let reinvocation_policy = match m.arg_str("reinvocationPolicy") {
            None => None,
            Some(p) => Some(one_of(p, &["Never", "IfNeeded"]).ok_or_else(|| {
                Diagnostic::new(format!(
                    "unknown reinvocationPolicy `{p}`: use Never or IfNeeded, or drop it"
                ))
            })?),
        };
        let client_config = client_config(m)?;
        let patch = match m.arg_str("patch") {
            None => None,
            Some(p) => Some(parse_patch(p)?),
        };
        Ok(Config {
            mutating,
            name,
            rule,
            failure_policy,
            match_policy,
            side_effects,
            timeout_seconds,
            client_config,
            admission_review_versions,
            // controller-gen keeps reinvocationPolicy for mutating webhooks only
            reinvocation_policy: reinvocation_policy.filter(|_| mutating),
            patch,
        })
    }

    fn mutating_webhook(self) -> Result<MutatingWebhook, Diagnostic> {
        let w = MutatingWebhook {
            admission_review_versions: self.admission_review_versions,
            client_config: self.client_config,
            failure_policy: Some(self.failure_policy),
            match_policy: self.match_policy,
            name: self.name,
            reinvocation_policy: self.reinvocation_policy,
            rules: Some(vec![self.rule]),
            side_effects: self.side_effects,
            timeout_seconds: self.timeout_seconds,
            ..Default::default()
        };
        apply_patch(w, self.patch.as_ref())
    }

    fn validating_webhook(self) -> Result<ValidatingWebhook, Diagnostic> {
        let w = ValidatingWebhook {
            admission_review_versions: self.admission_review_versions,
            client_config: self.client_config,
            failure_policy: Some(self.failure_policy),
            match_policy: self.match_policy,
            name: self.name,
            rules: Some(vec![self.rule]),
            side_effects: self.side_effects,
            timeout_seconds: self.timeout_seconds,
            ..Default::default()
        };
        apply_patch(w, self.patch.as_ref())
    }
}

fn client_config(m: &Marker) -> Result<WebhookClientConfig, Diagnostic> {
    let path = m.arg_str("path").filter(|p| !p.is_empty());
    let url = m.arg_str("url").filter(|u| !u.is_empty());
    let service_keys = ["serviceName", "serviceNamespace", "servicePort"];
    match (path, url) {
        (Some(_), Some(_)) => Err(Diagnostic::new(format!(
            "`+{WEBHOOK}` has both `path` and `url`: keep `path` for a webhook served by the in-cluster service, or `url` for one outside it"
        ))),
        (None, None) => Err(Diagnostic::new(format!(
            "`+{WEBHOOK}` needs `path=...` (served by the in-cluster service, e.g. path=/validate-apps-v1-deployment) or `url=...`"
        ))),
        (None, Some(url)) => {
            if let Some(k) = service_keys.iter().find(|k| m.arg(k).is_some()) {
                return Err(Diagnostic::new(format!(
                    "`{k}` has no effect with `url`: drop it, or use `path` to reach the webhook through a service"
                )));
            }
            if !url.starts_with("https://") {
                return Err(Diagnostic::new(format!(
                    "url `{url}` must start with https:// (the apiserver calls webhooks over TLS only)"
                )));
            }
            Ok(WebhookClientConfig {
                url: Some(url.to_string()),
                ..Default::default()
            })
        }
        (Some(path), None) => {
            if !path.starts_with('/') {
                return Err(Diagnostic::new(format!(
                    "path `{path}` must start with `/`: write path=/{path}"
                )));
            }
            let port = match m.arg("servicePort") {
                None => None,
                Some(_) => match int_arg(m, "servicePort") {
                    Some(p @ 1..=65535) => Some(p as i32),
                    _ => {
                        return Err(Diagnostic::new(
                            "servicePort is out of range: use a port from 1 to 65535, or drop it for the default of 443",
                        ));
                    }
                },
            };
            let or_default = |key: &str, default: &str| {
                m.arg_str(key)
                    .filter(|s| !s.is_empty())
                    .unwrap_or(default)
                    .to_string()
            };
            Ok(WebhookClientConfig {
                service: Some(ServiceReference {
                    name: or_default("serviceName", DEFAULT_SERVICE_NAME),
                    namespace: or_default("serviceNamespace", DEFAULT_SERVICE_NAMESPACE),
                    path: Some(path.to_string()),
                    port,
                }),
                ..Default::default()
            })
        }
    }
}

fn parse_patch(raw: &str) -> Result<Value, Diagnostic> {
    let value: Value = serde_json::from_str(raw).map_err(|e| {
        format!("`patch` is not valid JSON ({e}): write a JSON object such as patch='{{\"namespaceSelector\":{{\"matchLabels\":{{\"a\":\"b\"}}}}}}'")
    })?;
    if !value.is_object() {
        return Err(Diagnostic::new(
            "`patch` must be a JSON object of webhook fields, e.g. patch='{\"objectSelector\":{...}}'",
        ));
    }
    if let Some(d) = directive(&value) {
        return Err(Diagnostic::new(format!(
            "strategic-merge directive `{d}` in `patch` is not supported yet: write the fields themselves"
        )));
    }
    Ok(value)
}

/// The first `$patch`-style directive key anywhere in a patch.
fn directive(v: &Value) -> Option<String> {
    match v {
        Value::Object(o) => o.iter().find_map(|(k, v)| {
            if k.starts_with('$') {
                Some(k.clone())
            } else {
                directive(v)
            }
        }),
        Value::Array(items) => items.iter().find_map(directive),
        _ => None,
    }
}

/// Applies a strategic-merge patch to a webhook: objects merge key by key, `null` deletes a key,
/// lists are replaced except `matchConditions`, which merges by `name` as the API declares.
fn apply_patch<W: Serialize + DeserializeOwned>(
    w: W,
    patch: Option<&Value>,
) -> Result<W, Diagnostic> {
    let Some(patch) = patch else { return Ok(w) };
    let mut value = serde_json::to_value(&w).map_err(|e| Diagnostic::new(e.to_string()))?;
    merge(&mut value, patch, "");
    let patched: W = serde_json::from_value(value.clone())
        .map_err(|e| format!("`patch` does not fit a webhook ({e}): fix the field it names"))?;
    let back = serde_json::to_value(&patched).map_err(|e| Diagnostic::new(e.to_string()))?;
    if let Some(p) = dropped(&value, &back, "") {
        return Err(Diagnostic::new(format!(
            "`patch` sets `{p}`, which is not a webhook field: check its spelling against admissionregistration.k8s.io/v1"
        )));
    }
    Ok(patched)
}

fn merge(target: &mut Value, patch: &Value, key: &str) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, pv) in p {
                if pv.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), pv, k);
                }
            }
        }
        (Value::Array(t), Value::Array(p)) if key == "matchConditions" => {
            for item in p {
                let name = item.get("name");
                match t
                    .iter_mut()
                    .find(|x| name.is_some() && x.get("name") == name)
                {
                    Some(existing) => merge(existing, item, ""),
                    None => t.push(item.clone()),
                }
            }
        }
        (t, p) => {
            *t = p.clone();
            if let Value::Object(o) = t {
                // a fresh object: null members mean absent
                o.retain(|_, v| !v.is_null());
            }
        }
    }
}

/// The first key path present in `a` but lost from `b`.
fn dropped(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x.iter().find_map(|(k, v)| {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            match y.get(k) {
                None if !v.is_null() => Some(p),
                None => None,
                Some(w) => dropped(v, w, &p),
            }
        }),
        (Value::Array(x), Value::Array(y)) => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| dropped(v, w, &format!("{path}[{i}]"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::parse_line;

    fn marker(line: &str) -> Marker {
        parse_line(line).expect("parses").expect("has effect")
    }

    const BASE: &str = "+kubebuilder:webhook:failurePolicy=fail,sideEffects=None,groups=apps,resources=deployments,verbs=create;update,versions=v1,admissionReviewVersions=v1";

    fn webhook(extra: &str) -> Marker {
        marker(&format!("{BASE},{extra}"))
    }

    fn error(markers: &[Marker]) -> String {
        match configurations(markers) {
            Ok(o) => panic!("expected an error, got {o:?}"),
            Err(e) => e
                .into_iter()
                .map(|e| e.message)
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    fn value(markers: &[Marker]) -> Vec<Value> {
        configurations(markers)
            .expect("valid markers")
            .iter()
            .map(|o| match o {
                WebhookObject::Mutating(c) => serde_json::to_value(c).expect("serializes"),
                WebhookObject::Validating(c) => serde_json::to_value(c).expect("serializes"),
            })
            .collect()
    }

    #[test]
    fn message_names_are_the_registry_names() {
        assert_eq!(WEBHOOK, Kind::Webhook.name());
        assert_eq!(CONFIGURATION, Kind::WebhookConfiguration.name());
    }

    #[test]
    fn defaults_and_order() {
        let ms = [
            webhook("mutating=false,path=/validate-b,name=b.kb.io"),
            webhook(
                "mutating=true,path=/mutate,name=m.kb.io,reinvocationPolicy=ifneeded,matchPolicy=exact",
            ),
            webhook(
                "mutating=false,path=/validate-a,name=a.kb.io,reinvocationPolicy=Never,timeoutSeconds=30",
            ),
        ];
        let docs = value(&ms);
        let kinds: Vec<&str> = docs
            .iter()
            .map(|d| d["kind"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(
            kinds,
            [
                "MutatingWebhookConfiguration",
                "ValidatingWebhookConfiguration"
            ]
        );
        assert_eq!(docs[0]["apiVersion"], "admissionregistration.k8s.io/v1");
        assert_eq!(docs[0]["metadata"]["name"], DEFAULT_MUTATING_NAME);
        let m = &docs[0]["webhooks"][0];
        assert_eq!(m["reinvocationPolicy"], "IfNeeded");
        assert_eq!(m["matchPolicy"], "Exact");
        assert_eq!(m["failurePolicy"], "Fail");
        assert_eq!(m["clientConfig"]["service"]["name"], "webhook-service");
        assert_eq!(m["clientConfig"]["service"]["namespace"], "system");
        assert_eq!(
            m["rules"][0]["operations"],
            serde_json::json!(["CREATE", "UPDATE"])
        );
        let names: Vec<&str> = docs[1]["webhooks"]
            .as_array()
            .expect("webhooks")
            .iter()
            .map(|w| w["name"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(names, ["a.kb.io", "b.kb.io"]);
        assert!(docs[1]["webhooks"][0].get("reinvocationPolicy").is_none());
        assert_eq!(docs[1]["webhooks"][0]["timeoutSeconds"], 30);
        assert!(docs[1]["webhooks"][1].get("timeoutSeconds").is_none());
    }

    #[test]
    fn only_validating_emits_one_document() {
        let docs = value(&[webhook("mutating=false,path=/v,name=v.kb.io")]);
        let kinds: Vec<&str> = docs
            .iter()
            .map(|d| d["kind"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(kinds, ["ValidatingWebhookConfiguration"]);
    }

    #[test]
    fn core_group_and_verbs() {
        let m = marker(
            "+kubebuilder:webhook:mutating=true,failurePolicy=Ignore,sideEffects=noneondryrun,groups=core,resources=pods,verbs=delete;CONNECT;*,versions=v1,admissionReviewVersions=v1,path=/mutate--v1-pod,name=p.kb.io",
        );
        let docs = value(&[m]);
        let w = &docs[0]["webhooks"][0];
        assert_eq!(w["rules"][0]["apiGroups"], serde_json::json!([""]));
        assert_eq!(
            w["rules"][0]["operations"],
            serde_json::json!(["DELETE", "CONNECT", "*"])
        );
        assert_eq!(w["failurePolicy"], "Ignore");
        assert_eq!(w["sideEffects"], "NoneOnDryRun");
        let empty = marker(
            "+kubebuilder:webhook:mutating=true,failurePolicy=fail,sideEffects=None,groups=\"\",resources=pods,verbs=create,versions=v1,admissionReviewVersions=v1,path=/p,name=e.kb.io",
        );
        assert_eq!(
            value(&[empty])[0]["webhooks"][0]["rules"][0]["apiGroups"],
            serde_json::json!([""])
        );
    }

    #[test]
    fn custom_service_and_url() {
        let docs = value(&[
            webhook(
                "mutating=false,path=/v,name=a.kb.io,serviceName=DEAD,serviceNamespace=BEEF,servicePort=1234",
            ),
            webhook("mutating=false,url=https://example.com:9443/v,name=b.kb.io"),
        ]);
        let ws = &docs[0]["webhooks"];
        assert_eq!(
            ws[0]["clientConfig"],
            serde_json::json!({"service": {"name": "DEAD", "namespace": "BEEF", "path": "/v", "port": 1234}})
        );
        assert_eq!(
            ws[1]["clientConfig"],
            serde_json::json!({"url": "https://example.com:9443/v"})
        );
    }

    #[test]
    fn configuration_names() {
        let docs = value(&[
            marker("+kubebuilder:webhookconfiguration:mutating=true,name=foo"),
            marker("+kubebuilder:webhookconfiguration:mutating=false,name=bar"),
            webhook("mutating=true,path=/m,name=m.kb.io"),
            webhook("mutating=false,path=/v,name=v.kb.io"),
        ]);
        assert_eq!(docs[0]["metadata"]["name"], "foo");
        assert_eq!(docs[1]["metadata"]["name"], "bar");
        let e = error(&[
            marker("+kubebuilder:webhookconfiguration:mutating=true,name=foo"),
            marker("+kubebuilder:webhookconfiguration:mutating=true,name=baz"),
            webhook("mutating=true,path=/m,name=m.kb.io"),
        ]);
        assert!(
            e.contains("a second") && e.contains("keep one per kind"),
            "{e}"
        );
        let e = error(&[marker(
            "+kubebuilder:webhookconfiguration:mutating=false,name=bar",
        )]);
        assert!(e.contains("no validating webhook"), "{e}");
    }

    #[test]
    fn checks_name_the_problem_and_the_fix() {
        let cases = [
            (
                BASE.replace(",sideEffects=None", "") + ",mutating=true,path=/m,name=m",
                "needs `sideEffects=None`",
            ),
            (
                BASE.replace("sideEffects=None", "sideEffects=Some")
                    + ",mutating=true,path=/m,name=m",
                "`Some` is not allowed",
            ),
            (
                BASE.replace("sideEffects=None", "sideEffects=Unknown")
                    + ",mutating=true,path=/m,name=m",
                "`Unknown` is not allowed",
            ),
            (
                BASE.to_string() + ",mutating=true,path=/m,url=https://x/m,name=m",
                "both `path` and `url`",
            ),
            (
                BASE.to_string() + ",mutating=true,name=m",
                "needs `path=...`",
            ),
            (
                BASE.to_string() + ",mutating=true,path=/m,name=m,timeoutSeconds=0",
                "use 1 to 30",
            ),
            (
                BASE.to_string() + ",mutating=true,path=/m,name=m,timeoutSeconds=31",
                "use 1 to 30",
            ),
            (
                BASE.to_string() + ",mutating=true,path=/m,name=m,matchPolicy=Fuzzy",
                "use Exact or Equivalent",
            ),
            (
                BASE.to_string() + ",mutating=true,path=/m,name=m,webhookVersions=v1beta1",
                "only v1",
            ),
            (
                BASE.to_string() + ",mutating=true,path=/m,name=m,reinvocationPolicy=Always",
                "use Never or IfNeeded",
            ),
            (
                BASE.replace("failurePolicy=fail", "failurePolicy=maybe")
                    + ",mutating=true,path=/m,name=m",
                "use fail or ignore",
            ),
            (
                BASE.replace("verbs=create;update", "verbs=get") + ",mutating=true,path=/m,name=m",
                "unknown verb `get`",
            ),
            (
                BASE.to_string() + ",path=/m,name=m",
                "needs `mutating=true`",
            ),
            (
                BASE.to_string() + ",mutating=true,path=/m",
                "needs `name=...`",
            ),
            (
                BASE.replace(",admissionReviewVersions=v1", "") + ",mutating=true,path=/m,name=m",
                "needs `admissionReviewVersions=...`",
            ),
            (
                BASE.to_string() + ",mutating=true,path=m,name=m",
                "must start with `/`",
            ),
            (
                BASE.to_string() + ",mutating=true,url=http://x/m,name=m",
                "must start with https://",
            ),
            (
                BASE.to_string() + ",mutating=true,url=https://x/m,name=m,serviceName=s",
                "no effect with `url`",
            ),
            (
                BASE.to_string() + ",mutating=true,path=/m,name=m,servicePort=0",
                "servicePort is out of range",
            ),
        ];
        for (line, want) in cases {
            let e = error(&[marker(&line)]);
            assert!(e.contains(want), "{line}: {e}");
            assert!(!e.ends_with('.'), "{e}");
            assert!(!e.starts_with(|c: char| c.is_uppercase()), "{e}");
        }
    }

    #[test]
    fn patch_is_applied_last() {
        let m = webhook(
            r#"mutating=true,path=/m,name=m.kb.io,patch='{"namespaceSelector":{"matchLabels":{"a":"b"}},"timeoutSeconds":5,"failurePolicy":null}'"#,
        );
        let docs = value(&[m]);
        let w = &docs[0]["webhooks"][0];
        assert_eq!(
            w["namespaceSelector"],
            serde_json::json!({"matchLabels": {"a": "b"}})
        );
        assert_eq!(w["timeoutSeconds"], 5);
        assert!(w.get("failurePolicy").is_none());
        let e = error(&[webhook(
            r#"mutating=true,path=/m,name=m,patch='{"namespaceSelecter":{}}'"#,
        )]);
        assert!(
            e.contains("`namespaceSelecter`, which is not a webhook field"),
            "{e}"
        );
        let e = error(&[webhook(
            r#"mutating=true,path=/m,name=m,patch='{"$patch":"replace"}'"#,
        )]);
        assert!(e.contains("not supported yet"), "{e}");
        let e = error(&[webhook(r#"mutating=true,path=/m,name=m,patch='not json'"#)]);
        assert!(e.contains("not valid JSON"), "{e}");
    }

    #[test]
    fn yaml_has_one_document_per_object() {
        let objects = configurations(&[
            webhook("mutating=true,path=/m,name=m.kb.io"),
            webhook("mutating=false,path=/v,name=v.kb.io"),
        ])
        .expect("valid markers");
        let text = to_yaml(&objects);
        let kinds: Vec<&str> = text
            .split("---\n")
            .skip(1)
            .map(|doc| {
                doc.lines()
                    .find_map(|l| l.strip_prefix("kind: "))
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "MutatingWebhookConfiguration",
                "ValidatingWebhookConfiguration"
            ],
            "{text}"
        );
        assert!(text.starts_with("---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"), "{text}");
    }
}
