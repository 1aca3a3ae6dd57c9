//! The staging directory filled: the replayed scaffold, the translated types over it, the Go
//! code carried into the controllers, webhooks and conversions, the manifests and the report.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::report::Report;
use super::{code, project};
use crate::commands::replay::{self, Runner, Step};
use crate::error::{Error, Result};
use crate::printer::{Printer, Verbosity};
use crate::project::Project;
use crate::project::boilerplate::BOILERPLATE;
use crate::scaffold::{IfExists, Scaffold};
use operator_gen_codegen::rustgen::{Docs, Item, RustFile};

/// The report's file in the output.
pub const REPORT_FILE: &str = "MIGRATION.md";

/// Everything read and translated from the Go project, before anything is written.
pub(super) struct Plan {
    pub go: project::GoProject,
    pub project: Project,
    pub sources: code::GoSources,
    /// Types file (relative path) → its kind's items.
    pub types: BTreeMap<String, Vec<operator_gen_codegen::rustgen::Item>>,
    /// Types files of a package with several kind files (which need `use super::*`).
    pub shared: std::collections::BTreeSet<String>,
    pub report: Report,
}

/// The Go license header (`hack/boilerplate.go.txt`, a `/* */` block) as `//` lines.
fn rust_header(go: &str) -> String {
    let body = go.trim();
    let body = body.strip_prefix("/*").unwrap_or(body);
    let body = body.strip_suffix("*/").unwrap_or(body);
    let mut out = String::new();
    for line in body.trim_matches('\n').lines() {
        let line = line.trim_start_matches("//").trim_end();
        if line.is_empty() {
            out.push_str("//\n");
        } else {
            out.push_str(&format!("// {}\n", line.trim_start()));
        }
    }
    out
}

/// Fill `dir` from `plan`; returns the report's text.
pub(super) fn fill(
    plan: Plan,
    input: &Path,
    dir: &Path,
    printer: &Printer,
    runner: Runner,
) -> Result<String> {
    let Plan {
        go,
        project,
        sources,
        types,
        shared,
        mut report,
    } = plan;
    let header = crate::gate::read_text_lenient(&input.join("hack/boilerplate.go.txt"))
        .map(|t| rust_header(&t))
        .unwrap_or_default();
    // the translated types as the replay's storage-version check reads them
    let pre: BTreeMap<String, String> = types
        .iter()
        .map(|(rel, items)| (rel.clone(), render_items(items)))
        .collect();
    let helm = crate::chart::DEFAULT_MANIFESTS;
    let read = |rel: &str| -> Option<String> {
        if rel == BOILERPLATE {
            Some(header.clone())
        } else if rel == helm {
            crate::gate::read_text_lenient(&input.join(rel))
        } else {
            pre.get(rel).cloned()
        }
    };
    let quiet = Printer::new(Verbosity::Quiet);
    let mut skip_helm = false;
    for step in replay::steps(&project, &read) {
        match &step {
            Step::Run(args) if skip_helm && args.first().is_some_and(|a| a == "edit") => {}
            Step::Run(args) => {
                printer.status("replay", &replay::display(&step));
                runner(args, dir, &quiet)?;
            }
            Step::Copy(rel) => match read(rel) {
                Some(text) => {
                    let mut s = Scaffold::new(dir);
                    s.file(rel, text, IfExists::Overwrite)?;
                    s.commit(&quiet)?;
                }
                None if rel == helm => {
                    skip_helm = true;
                    report.add(
                        "project",
                        format!("PROJECT: plugin helm ({helm})"),
                        format!("the Go project has no {helm} to derive the chart from: run `make build-installer` and `operator-gen edit --plugins helm` in the migrated project"),
                    );
                }
                None => {}
            },
        }
    }
    write_types(dir, &types, &shared)?;
    carry_code(dir, &go, &project, &sources, &mut report)?;
    let opts = crate::manifests::ManifestsOptions {
        root: Some(dir.to_path_buf()),
        max_desc_len: None,
        allow_dangerous_types: true,
        role_name: "manager-role".to_owned(),
        cache: crate::manifests::Cache::Off,
        max_crd_size: None,
        allow_oversized_crds: false,
    };
    if let Err(e) = crate::manifests::run(&opts, &quiet) {
        let first = e.to_string().lines().next().unwrap_or_default().to_owned();
        report.add(
            "project",
            "make manifests",
            format!("failed on the migrated types: {first}; fix them and run `make manifests`"),
        );
        printer.warn(&format!(
            "manifests failed on the migrated types: {first}; fix them and run `make manifests`"
        ));
    }
    let name = input.file_name().map_or_else(
        || input.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let text = report.render(&name);
    let path = dir.join(REPORT_FILE);
    std::fs::write(&path, &text).map_err(|e| Error::io("write", &path, e))?;
    Ok(text)
}

fn render_items(items: &[Item]) -> String {
    items
        .iter()
        .map(Item::render)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Write each translated types file over the scaffold's, keeping the scaffold's header,
/// module doc and test module.
fn write_types(
    dir: &Path,
    types: &BTreeMap<String, Vec<Item>>,
    shared: &BTreeSet<String>,
) -> Result<()> {
    let mut s = Scaffold::new(dir);
    for (rel, items) in types {
        let scaffolded = s.read(rel)?.unwrap_or_default();
        let mut header = String::new();
        let mut inner = Vec::new();
        for line in scaffolded.lines() {
            if let Some(doc) = line.strip_prefix("//!") {
                inner.push(doc.strip_prefix(' ').unwrap_or(doc).to_owned());
            } else if inner.is_empty() {
                header.push_str(line);
                header.push('\n');
            } else {
                break;
            }
        }
        let body = render_items(items);
        let mut uses = vec![
            "operator_gen_runtime::prelude::*".to_owned(),
            "serde::{Deserialize, Serialize}".to_owned(),
        ];
        if body.contains("BTreeMap<") {
            uses.push("std::collections::BTreeMap".to_owned());
        }
        if shared.contains(rel) {
            uses.push("super::*".to_owned());
        }
        let mut items = items.clone();
        if let Some(at) = scaffolded.find("#[cfg(test)]") {
            items.push(Item::Raw(scaffolded[at..].to_owned()));
        }
        let file = RustFile {
            header,
            inner_doc: Docs {
                prose: inner,
                markers: Vec::new(),
            },
            uses,
            items,
        };
        let mut text = file.render();
        if shared.contains(rel) {
            text = text.replace("use super::*;", "#[allow(unused_imports)]\nuse super::*;");
        }
        s.file(rel, text, IfExists::Overwrite)?;
    }
    s.commit(&Printer::new(Verbosity::Quiet))
}

/// The Go controllers, webhooks and conversions carried into the scaffolded Rust files.
fn carry_code(
    dir: &Path,
    go: &project::GoProject,
    project: &Project,
    sources: &code::GoSources,
    report: &mut Report,
) -> Result<()> {
    let mut s = Scaffold::new(dir);
    let mut carried = BTreeSet::new();
    for r in go.resources.iter().filter(|r| !r.core && !r.external) {
        if r.controller {
            controller(&mut s, r, project, sources, report, &mut carried)?;
        }
        if r.webhooks
            .as_ref()
            .is_some_and(|w| w.defaulting || w.validation)
        {
            webhook(&mut s, r, project, sources, report, &mut carried)?;
        }
        if let Some(w) = r.webhooks.as_ref().filter(|w| w.conversion) {
            for spoke in &w.spoke {
                conversion(&mut s, go, r, spoke, project, sources, report)?;
            }
        }
    }
    for (path, (text, _)) in &sources.files {
        for prefix in ["+kubebuilder:rbac:", "+kubebuilder:webhook:"] {
            if !carried.contains(path.as_str()) {
                for m in code::marker_lines(text, prefix) {
                    report.add(
                        "markers",
                        format!("{path}: {m}"),
                        "in a file that is not a controller or webhook of a PROJECT resource: not carried; put it on a controller module",
                    );
                }
            }
        }
    }
    s.commit(&Printer::new(Verbosity::Quiet))
}

fn controller(
    s: &mut Scaffold,
    r: &project::GoResource,
    project: &Project,
    sources: &code::GoSources,
    report: &mut Report,
    carried: &mut BTreeSet<String>,
) -> Result<()> {
    let rel = code::controller_file(project, &r.group, &r.kind);
    let receiver = format!("{}Reconciler", r.kind);
    let found = code::find_receiver(sources, "internal/controller", &receiver, &r.group)
        .or_else(|| code::find_receiver(sources, "controllers", &receiver, &r.group));
    let (Some(rust), Some((go_path, text, file))) = (s.read(&rel)?, found) else {
        report.add(
            "code",
            format!("{}/{} {}", r.group, r.version, r.kind),
            format!("no Go {receiver} found: the controller is the scaffold's"),
        );
        return Ok(());
    };
    carried.insert(go_path.to_owned());
    let rbac = code::marker_lines(text, "+kubebuilder:rbac:");
    if !rbac.iter().any(|m| m.contains("events")) && rust.contains("resources=events") {
        report.add(
            "code",
            rel.clone(),
            "the Go controller grants no Events permission, so its rule is not carried; the scaffolded controller records Events: add `//! +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch` if you keep them",
        );
    }
    let mut out = code::replace_markers(&rust, "+kubebuilder:rbac:", &rbac);
    out.push_str(&code::commented(
        &format!("The Go controller ({go_path}), to port into reconcile above:"),
        &code::funcs_of(file, &[]),
    ));
    code::report_kept(
        report,
        go_path,
        &rel,
        "the Go Reconcile and the functions beside it",
    );
    s.file(&rel, out, IfExists::Overwrite)
}

fn webhook(
    s: &mut Scaffold,
    r: &project::GoResource,
    project: &Project,
    sources: &code::GoSources,
    report: &mut Report,
    carried: &mut BTreeSet<String>,
) -> Result<()> {
    let rel = code::webhook_file(project, &r.group, &r.version, &r.kind);
    let defaulter = format!("{}CustomDefaulter", r.kind);
    let validator = format!("{}CustomValidator", r.kind);
    let found = code::find_receiver(sources, "internal/webhook", &defaulter, &r.version)
        .or_else(|| code::find_receiver(sources, "internal/webhook", &validator, &r.version));
    let (Some(rust), Some((go_path, text, file))) = (s.read(&rel)?, found) else {
        report.add(
            "code",
            format!("{}/{} {}", r.group, r.version, r.kind),
            "no Go webhook (CustomDefaulter or CustomValidator) found: the webhook file is the scaffold's",
        );
        return Ok(());
    };
    carried.insert(go_path.to_owned());
    let markers = code::marker_lines(text, "+kubebuilder:webhook:");
    let mut out = code::replace_markers(&rust, "+kubebuilder:webhook:", &markers);
    out.push_str(&code::commented(
        &format!("The Go webhook ({go_path}), to port into the Defaulter and Validator above:"),
        &code::funcs_of(file, &[defaulter.as_str(), validator.as_str()]),
    ));
    code::report_kept(report, go_path, &rel, "the Go Default and Validate methods");
    s.file(&rel, out, IfExists::Overwrite)
}

fn conversion(
    s: &mut Scaffold,
    go: &project::GoProject,
    r: &project::GoResource,
    spoke: &str,
    project: &Project,
    sources: &code::GoSources,
    report: &mut Report,
) -> Result<()> {
    let rel = code::conversion_file(project, &r.group, spoke, &r.kind);
    let Some(rust) = s.read(&rel)? else {
        return Ok(());
    };
    let spoke_dir = go
        .resources
        .iter()
        .find(|o| o.group == r.group && o.version == spoke && o.kind == r.kind)
        .map(|o| project::package_dir(go, o))
        .unwrap_or_default();
    let found = sources.files.iter().find_map(|(p, (_, f))| {
        let f = f.as_ref()?;
        (Path::new(p).parent() == Some(Path::new(&spoke_dir))
            && f.funcs.iter().any(|func| {
                func.receiver.as_deref() == Some(r.kind.as_str())
                    && (func.name == "ConvertTo" || func.name == "ConvertFrom")
            }))
        .then_some((p.as_str(), f))
    });
    let (go_path, funcs) = match found {
        Some((p, f)) => (p.to_owned(), code::funcs_of(f, &[r.kind.as_str()])),
        None => (
            format!("{spoke_dir} (no ConvertTo/ConvertFrom found)"),
            Vec::new(),
        ),
    };
    let out = code::conversion(&rust, &r.kind, &go_path, &funcs);
    code::report_kept(report, &go_path, &rel, "the Go ConvertTo and ConvertFrom");
    s.file(&rel, out, IfExists::Overwrite)
}
