//! The replay of a project: the one list of operator-gen commands that rebuilds a project's
//! scaffold from its `PROJECT` file, which `alpha generate` runs in-process and `alpha update`
//! runs through this and an older operator-gen binary.

use std::path::Path;

use crate::error::Result;
use crate::printer::Printer;
use crate::project::boilerplate::BOILERPLATE;
use crate::project::storage_version as storage;
use crate::project::{Project, paths};
use crate::scaffolding::{autoupdate, grafana};

/// Runs one command line of a replay (`init`, `create`, `delete` or `edit` with its flags, no
/// program name) in a directory, in this process: the CLI's parser and dispatcher
/// ([`crate::cli::run_in`]), which the commands that replay are handed rather than call, as the
/// CLI is what calls them.
pub type Runner = fn(&[String], &Path, &Printer) -> Result<()>;

/// One step of a replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Run `operator-gen <args>` in the project.
    Run(Vec<String>),
    /// Copy this file (relative path) from the project being replayed, when it has it.
    Copy(String),
}

/// The commands that rebuild `project`'s scaffold, in order: the project's own templates that
/// `PROJECT` lists copied over; `init` with its domain, project
/// name, layout, scope, Kubernetes version and license; the project's license header copied
/// over before any `create`; every resource's `create api` in `PROJECT` order (group, version,
/// kind, plural, namespaced or not, type or not, controller or not, the deploy-image plugin's
/// `--image` and its options, `--storage` on a later version whose types file carries the
/// storage marker); every resource's `create webhook`
/// with all its webhook types and spokes; then, with the Helm plugin, the manifests it was derived
/// from copied over and `edit --plugins helm`; with the autoupdate plugin, `edit --plugins
/// autoupdate`; with the grafana plugin, its custom-metrics configuration copied over and `edit
/// --plugins grafana`. `read` gives a file of the project being replayed
/// (relative path → contents), for the license header and the storage markers.
pub fn steps(project: &Project, read: &dyn Fn(&str) -> Option<String>) -> Vec<Step> {
    // the project's own templates first: every command of the replay renders with them
    let own = crate::templates::recorded(project)
        .into_iter()
        .map(Step::Copy);
    let mut out: Vec<Step> = own.collect();
    out.push(Step::Run(init_args(project, read)));
    out.push(Step::Copy(BOILERPLATE.to_owned()));
    // as kubebuilder's replay: every `create api`, then every `create webhook` (PROJECT keeps
    // resources in creation order, not when their webhooks came)
    for (i, r) in project.resources.iter().enumerate() {
        if r.api.is_some() || r.controller {
            out.push(Step::Run(api_args(project, i, read)));
        } // else a built-in type with webhooks only: `create webhook` alone scaffolds it
    }
    for r in project.resources.iter().filter(|r| r.webhooks.is_some()) {
        out.push(Step::Run(webhook_args(r)));
    }
    if let Some(helm) = project.plugins.get(crate::chart::PLUGIN_KEY) {
        let manifests = helm["manifests"]
            .as_str()
            .unwrap_or(crate::chart::DEFAULT_MANIFESTS)
            .to_owned();
        out.push(Step::Copy(manifests.clone()));
        out.push(Step::Run(words(&[
            "edit",
            "--plugins",
            "helm",
            "--manifests",
            &manifests,
        ])));
    }
    if project.plugins.contains_key(autoupdate::PLUGIN_KEY) {
        out.push(Step::Run(words(&["edit", "--plugins", "autoupdate"])));
    }
    if project.plugins.contains_key(grafana::PLUGIN_KEY) {
        out.push(Step::Copy(grafana::CONFIG.to_owned()));
        out.push(Step::Run(words(&["edit", "--plugins", "grafana"])));
    }
    out
}

/// `create api` for resource `i` with the flags it was created with.
fn api_args(project: &Project, i: usize, read: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let r = &project.resources[i];
    let mut args = words(&["create", "api", "--group", &r.group]);
    args.extend(words(&["--version", &r.version, "--kind", &r.kind]));
    if let Some(plural) = &r.plural {
        args.extend(words(&["--plural", plural]));
    }
    args.push(format!("--resource={}", r.api.is_some()));
    if let Some(a) = &r.api {
        args.push(format!("--namespaced={}", a.namespaced));
    }
    args.push(format!("--controller={}", r.controller));
    if let Some(options) = crate::scaffolding::deploy_image::options_of(project, r) {
        args.extend(crate::scaffolding::deploy_image::flags(&options));
    }
    if r.api.is_some() && is_later_stored_version(project, i, read) {
        args.push("--storage".to_owned());
    }
    args.push("--yes".to_owned());
    args
}

/// `create webhook` for resource `r` with every webhook type PROJECT records for it.
fn webhook_args(r: &crate::project::ResourceEntry) -> Vec<String> {
    let mut args = words(&["create", "webhook", "--group", &r.group]);
    args.extend(words(&["--version", &r.version, "--kind", &r.kind]));
    if let Some(plural) = &r.plural {
        args.extend(words(&["--plural", plural]));
    }
    let Some(w) = &r.webhooks else { return args };
    if w.defaulting {
        args.push("--defaulting".to_owned());
    }
    if w.validation {
        args.push("--programmatic-validation".to_owned());
    }
    if let Some(path) = &w.defaulting_path {
        args.extend(words(&["--defaulting-path", path]));
    }
    if let Some(path) = &w.validation_path {
        args.extend(words(&["--validation-path", path]));
    }
    if w.conversion {
        args.push("--conversion".to_owned());
        if !w.spoke.is_empty() {
            args.extend(words(&["--spoke", &w.spoke.join(",")]));
        }
    }
    args
}

/// A step as the command line a user would type.
pub fn display(step: &Step) -> String {
    match step {
        Step::Run(args) => format!("operator-gen {}", args.join(" ")),
        Step::Copy(rel) => format!("copy {rel}"),
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| (*s).to_owned()).collect()
}

fn init_args(project: &Project, read: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut args = words(&[
        "init",
        "--domain",
        &project.domain,
        "--project-name",
        &project.project_name,
    ]);
    if project.multigroup {
        args.push("--multigroup".to_owned());
    }
    if project.namespaced {
        args.push("--namespaced".to_owned());
    }
    if let Some(k8s) = &project.k8s_version {
        args.extend(words(&["--k8s-version", k8s]));
    }
    // the header's own text is copied over after init; the flags pick init's own files' header
    let header = read(BOILERPLATE).unwrap_or_default();
    match owner(&header) {
        _ if header.trim().is_empty() => args.extend(words(&["--license", "none"])),
        Some(owner) => args.extend(words(&["--owner", &owner])),
        None => {}
    }
    args
}

/// The owner in an Apache header's `// Copyright <year> <owner>.` line.
fn owner(header: &str) -> Option<String> {
    let line = header.lines().next()?.strip_prefix("// Copyright ")?;
    let (_year, rest) = line.split_once(' ').unwrap_or((line, ""));
    let owner = rest.trim().trim_end_matches('.').trim();
    (!owner.is_empty()).then(|| owner.to_owned())
}

/// Whether resource `i` is a version of its kind created after another one and its types file
/// carries the storage marker: only `--storage` gives a later version the marker.
fn is_later_stored_version(
    project: &Project,
    i: usize,
    read: &dyn Fn(&str) -> Option<String>,
) -> bool {
    let r = &project.resources[i];
    let earlier = project.resources[..i]
        .iter()
        .any(|o| o.api.is_some() && o.group == r.group && o.kind == r.kind);
    earlier
        && read(&paths::types_file(project, &r.group, &r.version, &r.kind))
            .is_some_and(|text| storage::mentions_marker(&text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::{ApiEntry, LAYOUT, ResourceEntry, WebhooksEntry};

    fn resource(kind: &str, version: &str, controller: bool) -> ResourceEntry {
        ResourceEntry {
            api: Some(ApiEntry {
                crd_version: "v1".into(),
                namespaced: true,
            }),
            controller,
            core: false,
            domain: "example.com".into(),
            external: false,
            group: "crew".into(),
            kind: kind.into(),
            path: format!("demo::api::{version}"),
            plural: None,
            version: version.into(),
            webhooks: None,
        }
    }

    #[test]
    fn replays_init_apis_then_webhooks() {
        let mut v2 = resource("Captain", "v2", false);
        v2.webhooks = Some(WebhooksEntry {
            defaulting: true,
            validation: true,
            webhook_version: "v1".into(),
            ..Default::default()
        });
        let project = Project {
            cli_version: Some("0.1.0".into()),
            domain: "example.com".into(),
            k8s_version: Some("1.36".into()),
            layout: vec![LAYOUT.into()],
            multigroup: true,
            namespaced: false,
            plugins: Default::default(),
            project_name: "demo".into(),
            resources: vec![resource("Captain", "v1", true), v2],
            version: "3".into(),
        };
        let read = |rel: &str| match rel {
            "hack/boilerplate.rs.txt" => Some("// Copyright 2026 The Crew.\n//\n".to_owned()),
            "src/api/crew/v2/captain.rs" => Some("/// +kubebuilder:storageversion\n".to_owned()),
            _ => None,
        };
        let lines: Vec<String> = steps(&project, &read).iter().map(display).collect();
        assert_eq!(
            lines,
            [
                "operator-gen init --domain example.com --project-name demo --multigroup --k8s-version 1.36 --owner The Crew",
                "copy hack/boilerplate.rs.txt",
                "operator-gen create api --group crew --version v1 --kind Captain --resource=true --namespaced=true --controller=true --yes",
                "operator-gen create api --group crew --version v2 --kind Captain --resource=true --namespaced=true --controller=false --storage --yes",
                "operator-gen create webhook --group crew --version v2 --kind Captain --defaulting --programmatic-validation",
            ]
        );
    }

    #[test]
    fn replays_the_plugins_after_the_resources() {
        let mut plugins = std::collections::BTreeMap::new();
        for key in [
            grafana::PLUGIN_KEY,
            autoupdate::PLUGIN_KEY,
            crate::chart::PLUGIN_KEY,
        ] {
            plugins.insert(key.to_owned(), serde_json::json!({}));
        }
        let project = Project {
            cli_version: Some("0.1.0".into()),
            domain: "example.com".into(),
            k8s_version: None,
            layout: vec![LAYOUT.into()],
            multigroup: false,
            namespaced: false,
            plugins,
            project_name: "demo".into(),
            resources: vec![resource("Captain", "v1", true)],
            version: "3".into(),
        };
        let read = |_: &str| None;
        let lines: Vec<String> = steps(&project, &read).iter().map(display).collect();
        assert_eq!(
            lines[3..],
            [
                "copy dist/install.yaml",
                "operator-gen edit --plugins helm --manifests dist/install.yaml",
                "operator-gen edit --plugins autoupdate",
                "copy grafana/custom-metrics/config.yaml",
                "operator-gen edit --plugins grafana",
            ]
        );
    }

    #[test]
    fn no_header_means_no_license() {
        let project = Project {
            cli_version: None,
            domain: "example.com".into(),
            k8s_version: None,
            layout: vec![LAYOUT.into()],
            multigroup: false,
            namespaced: true,
            plugins: Default::default(),
            project_name: "demo".into(),
            resources: vec![],
            version: "3".into(),
        };
        let read = |_: &str| Some(String::new());
        assert_eq!(
            steps(&project, &read)[0],
            Step::Run(words(&[
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "demo",
                "--namespaced",
                "--license",
                "none"
            ]))
        );
    }
}
