//! kubebuilder's `PROJECT` (layout `go.kubebuilder.io/v4`) read and carried over to
//! operator-gen's [`Project`]: the domain, the project name (from `projectName`, else the
//! repository's last element), multigroup, every resource (kind, group, version, plural,
//! namespaced or cluster, controller, webhooks with their paths, conversion hub and spokes) and
//! the Helm plugin.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::report::Report;
use crate::error::{Error, Result};
use crate::project::{ApiEntry, LAYOUT, Project, ResourceEntry, WebhooksEntry, validate};

/// The layout `alpha migrate` reads.
pub const GO_LAYOUT: &str = "go.kubebuilder.io/v4";

/// kubebuilder's `PROJECT`, the fields `alpha migrate` reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoProject {
    pub domain: String,
    #[serde(default)]
    pub layout: Vec<String>,
    #[serde(default)]
    pub multigroup: bool,
    #[serde(default)]
    pub project_name: Option<String>,
    #[serde(default)]
    pub repo: String,
    #[serde(default)]
    pub resources: Vec<GoResource>,
    #[serde(default)]
    pub plugins: BTreeMap<String, serde_json::Value>,
    pub version: String,
}

/// A resource of kubebuilder's `PROJECT`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoResource {
    #[serde(default)]
    pub api: Option<GoApi>,
    #[serde(default)]
    pub controller: bool,
    #[serde(default)]
    pub core: bool,
    #[serde(default)]
    pub external: bool,
    #[serde(default)]
    pub group: String,
    pub kind: String,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub plural: Option<String>,
    pub version: String,
    #[serde(default)]
    pub webhooks: Option<GoWebhooks>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoApi {
    #[serde(default)]
    pub namespaced: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoWebhooks {
    #[serde(default)]
    pub defaulting: bool,
    #[serde(default)]
    pub validation: bool,
    #[serde(default)]
    pub conversion: bool,
    #[serde(default)]
    pub spoke: Vec<String>,
    #[serde(default)]
    pub defaulting_path: Option<String>,
    #[serde(default)]
    pub validation_path: Option<String>,
}

/// Read kubebuilder's `PROJECT` text.
pub fn parse(text: &str) -> Result<GoProject> {
    let go: GoProject = serde_saphyr::from_str(text).map_err(|e| {
        Error::msg(format!(
            "PROJECT is not a kubebuilder project file: {e}; pass the directory of a kubebuilder v4 project"
        ))
    })?;
    if go.version != "3" {
        return Err(Error::msg(format!(
            "PROJECT version {:?} is not supported; alpha migrate reads kubebuilder's version \"3\"",
            go.version
        )));
    }
    if !go.layout.iter().any(|l| l == GO_LAYOUT) {
        return Err(Error::msg(format!(
            "PROJECT has layout [{}]; alpha migrate reads kubebuilder projects of layout {GO_LAYOUT} (run `kubebuilder alpha generate` to move an older project to it)",
            go.layout.join(", ")
        )));
    }
    validate::check_domain(&go.domain)
        .map_err(|problem| Error::msg(format!("PROJECT: {problem}; fix domain in PROJECT")))?;
    Ok(go)
}

/// The crate name: `projectName` when it is a valid one, else the repository's last element.
pub fn crate_name(go: &GoProject) -> Result<String> {
    let candidates = [
        go.project_name.clone().unwrap_or_default(),
        go.repo.rsplit('/').next().unwrap_or_default().to_owned(),
    ];
    for c in &candidates {
        let name = c.to_ascii_lowercase().replace(['_', '.'], "-");
        if validate::check_project_name(&name).is_ok() {
            return Ok(name);
        }
    }
    Err(Error::msg(format!(
        "PROJECT's projectName {:?} and repo {:?} give no crate name operator-gen takes; set projectName to a lowercase name such as my-operator",
        candidates[0], go.repo
    )))
}

/// The Go package directory of a resource (relative to the project), from its `path`.
pub fn package_dir(go: &GoProject, r: &GoResource) -> String {
    if let Some(rest) = r
        .path
        .as_deref()
        .and_then(|p| p.strip_prefix(&go.repo))
        .and_then(|p| p.strip_prefix('/'))
    {
        return rest.to_owned();
    }
    if go.multigroup {
        format!("api/{}/{}", r.group, r.version)
    } else {
        format!("api/{}", r.version)
    }
}

/// operator-gen's `PROJECT` for `go`; `scopes` overrides a resource's namespaced flag with
/// its kind's `+kubebuilder:resource:scope` (by `group/version/kind`).
pub fn carry(
    go: &GoProject,
    name: &str,
    scopes: &BTreeMap<String, bool>,
    report: &mut Report,
) -> Project {
    let mut resources = Vec::new();
    for r in &go.resources {
        let id = format!("{}/{} {}", r.group, r.version, r.kind);
        if r.core || r.external || (r.api.is_none() && !r.controller && r.webhooks.is_some()) {
            report.add(
                "project",
                format!("PROJECT: {id}"),
                "a built-in or external type: not migrated; run `operator-gen create api`/`create webhook` for it",
            );
            continue;
        }
        let api = r.api.as_ref().map(|a| {
            let namespaced = scopes.get(&id).copied().unwrap_or(a.namespaced);
            if namespaced != a.namespaced {
                report.add(
                    "project",
                    format!("PROJECT: {id}"),
                    "PROJECT's namespaced flag disagrees with the kind's +kubebuilder:resource:scope; the marker is followed",
                );
            }
            ApiEntry {
                crd_version: "v1".into(),
                namespaced,
            }
        });
        let dir =
            crate::project::paths::version_module_path(&probe(go.multigroup), &r.group, &r.version);
        resources.push(ResourceEntry {
            api,
            controller: r.controller,
            core: false,
            domain: go.domain.clone(),
            external: false,
            group: r.group.clone(),
            kind: r.kind.clone(),
            path: dir.replacen("crate", &name.replace('-', "_"), 1),
            plural: r.plural.clone(),
            version: r.version.clone(),
            webhooks: r.webhooks.as_ref().map(|w| WebhooksEntry {
                conversion: w.conversion,
                defaulting: w.defaulting,
                defaulting_path: w.defaulting_path.clone(),
                spoke: w.spoke.clone(),
                validation: w.validation,
                validation_path: w.validation_path.clone(),
                webhook_version: "v1".into(),
            }),
        });
    }
    let mut plugins = BTreeMap::new();
    for key in go.plugins.keys() {
        if key.starts_with("helm.kubebuilder.io/") {
            plugins.insert(
                crate::chart::PLUGIN_KEY.to_owned(),
                serde_json::json!({ "manifests": crate::chart::DEFAULT_MANIFESTS }),
            );
        } else {
            report.add(
                "project",
                format!("PROJECT: plugin {key}"),
                "operator-gen has no such plugin: not carried",
            );
        }
    }
    Project {
        cli_version: None,
        domain: go.domain.clone(),
        k8s_version: None,
        layout: vec![LAYOUT.into()],
        multigroup: go.multigroup,
        namespaced: false,
        plugins,
        project_name: name.to_owned(),
        resources,
        version: "3".into(),
    }
}

/// A project with only the multigroup flag set, for the path helpers.
fn probe(multigroup: bool) -> Project {
    Project {
        cli_version: None,
        domain: "probe.io".into(),
        k8s_version: None,
        layout: vec![LAYOUT.into()],
        multigroup,
        namespaced: false,
        plugins: BTreeMap::new(),
        project_name: "probe".into(),
        resources: Vec::new(),
        version: "3".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROJECT: &str = r#"cliVersion: 4.15.0
domain: my.domain
layout:
- go.kubebuilder.io/v4
multigroup: true
plugins:
  helm.kubebuilder.io/v2-alpha: {}
projectName: Fleet_Ops
repo: example.com/fleet
resources:
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: my.domain
  group: crew
  kind: Captain
  path: example.com/fleet/api/crew/v1
  plural: captainz
  version: v1
  webhooks:
    conversion: true
    defaulting: true
    defaultingPath: /custom-mutate
    spoke:
    - v2
    webhookVersion: v1
- core: true
  group: apps
  kind: Deployment
  path: k8s.io/api/apps/v1
  version: v1
  webhooks:
    defaulting: true
    webhookVersion: v1
version: "3"
"#;

    #[test]
    fn carries_kinds_webhooks_and_helm() {
        let go = parse(PROJECT).expect("parse");
        assert_eq!(crate_name(&go).expect("name"), "fleet-ops");
        assert_eq!(package_dir(&go, &go.resources[0]), "api/crew/v1");
        let mut report = Report::default();
        let scopes = BTreeMap::from([("crew/v1 Captain".to_owned(), false)]);
        let p = carry(&go, "fleet-ops", &scopes, &mut report);
        assert_eq!(p.resources.len(), 1);
        let r = &p.resources[0];
        assert_eq!(r.path, "fleet_ops::api::crew::v1");
        assert_eq!(r.plural.as_deref(), Some("captainz"));
        assert!(!r.api.as_ref().expect("api").namespaced);
        let w = r.webhooks.as_ref().expect("webhooks");
        assert!(w.conversion && w.defaulting && !w.validation);
        assert_eq!(w.spoke, ["v2"]);
        assert_eq!(w.defaulting_path.as_deref(), Some("/custom-mutate"));
        assert!(p.plugins.contains_key(crate::chart::PLUGIN_KEY));
        assert!(p.multigroup);
        let project = report.lines("project");
        assert!(
            project
                .iter()
                .any(|(at, _)| at == "PROJECT: apps/v1 Deployment")
        );
        assert!(
            project
                .iter()
                .any(|(at, w)| at == "PROJECT: crew/v1 Captain" && w.contains("scope"))
        );
    }

    #[test]
    fn other_layouts_are_refused() {
        let e = parse(&PROJECT.replace("go.kubebuilder.io/v4", "go.kubebuilder.io/v3"))
            .expect_err("v3");
        assert!(e.to_string().contains("layout"), "{e}");
    }
}
