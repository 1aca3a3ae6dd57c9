//! `operator-gen alpha migrate`: an operator-gen project from a kubebuilder v4 Go project.
//!
//! kubebuilder's `PROJECT` is carried over to operator-gen's ([`project`]) and replayed through
//! the commands themselves, in this process ([`super::replay`]: `init`, every `create api`,
//! every `create webhook`, the Helm plugin), into a staging directory beside the output. Over
//! that scaffold go the API types translated from Go ([`go`] reads them, [`types`] translates
//! them and `operator_gen_codegen::rustgen` writes them), the controllers' RBAC markers and
//! the webhooks' markers with the Go functions kept as comments ([`code`]); then `manifests`
//! runs, `MIGRATION.md` is written ([`report`]), and the staging directory becomes the output
//! (a rename), so a failed run leaves no partial output. The report is also printed.

pub mod code;
pub mod go;
pub mod project;
pub mod report;
pub mod types;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;

use super::generate::absolute;
use super::replay::Runner;
use crate::error::{Error, Result};
use crate::printer::Printer;
use crate::project::{Project, paths};
use crate::transaction::Steps;
use report::Report;

/// Flags of `alpha migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The kubebuilder project: the directory holding its PROJECT (layout go.kubebuilder.io/v4).
    #[arg(long, value_name = "DIR")]
    pub input_dir: PathBuf,
    /// Where the operator-gen project goes: a new or empty directory outside the input.
    #[arg(long, value_name = "DIR")]
    pub output_dir: PathBuf,
}

/// Most Go files read from a project.
const MAX_GO_FILES: usize = 5000;

/// Directories never read for Go files.
const SKIPPED_DIRS: &[&str] = &[
    ".git",
    "vendor",
    "bin",
    "testdata",
    "target",
    "node_modules",
];

/// Run `alpha migrate` from `cwd`, replaying the scaffold through `runner`.
pub fn run(args: &MigrateArgs, cwd: &Path, printer: &Printer, runner: Runner) -> Result<()> {
    let input = absolute(&cwd.join(&args.input_dir))?;
    let out = absolute(&cwd.join(&args.output_dir))?;
    let Some(text) = crate::gate::read_text(&input.join("PROJECT"))? else {
        return Err(Error::msg(format!(
            "no PROJECT file in {}; pass --input-dir the root of a kubebuilder v4 project",
            input.display()
        )));
    };
    if out.starts_with(&input) {
        return Err(Error::msg(format!(
            "--output-dir {} is inside the input directory {}; pass a directory outside the Go project",
            out.display(),
            input.display()
        )));
    }
    let check_output = || {
        if out.exists() && !out.is_dir() {
            return Err(Error::msg(format!(
                "output directory {} is a file; pass a new or empty directory to --output-dir",
                out.display()
            )));
        }
        if std::fs::read_dir(&out).is_ok_and(|mut e| e.next().is_some()) {
            return Err(Error::msg(format!(
                "output directory {} is not empty; pass a new or empty directory to --output-dir",
                out.display()
            )));
        }
        Ok(())
    };
    check_output()?;
    let plan = read_plan(&text, &input)?;
    let staging = staging_dir(&out)?;
    // one migration into a directory at a time: the staging directory is theirs to share
    let parent = staging.parent().unwrap_or(&out);
    // each file operation counts for the test-only pause hook: `fill`'s commits count their
    // own, and its last operation, the report written, is counted when it returns
    let mut steps = Steps::from_env();
    std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
    steps.done();
    let _lock = crate::transaction::lock_dir(parent, printer)?;
    steps.done();
    check_output()?;
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(|e| Error::io("remove", &staging, e))?;
        steps.done();
    }
    std::fs::create_dir_all(&staging).map_err(|e| Error::io("create", &staging, e))?;
    steps.done();
    let report = match fill(plan, &input, &staging, printer, runner) {
        Ok(report) => report,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    steps.done();
    if out.exists() {
        std::fs::remove_dir(&out).map_err(|e| Error::io("replace", &out, e))?;
        steps.done();
    }
    std::fs::rename(&staging, &out).map_err(|e| Error::io("move into place", &out, e))?;
    steps.done();
    printer.out(&report);
    printer.hint(&format!(
        "Migrated {} into {}; the report is in {}.",
        input.display(),
        out.display(),
        out.join(REPORT_FILE).display()
    ));
    Ok(())
}

/// Read PROJECT and the Go sources, and translate the API packages.
fn read_plan(project_text: &str, input: &Path) -> Result<Plan> {
    let go = project::parse(project_text)?;
    let name = project::crate_name(&go)?;
    let mut report = Report::default();
    let sources = read_go(input, &mut report)?;
    // the API packages, by Go directory: (group, version)
    let mut packages: BTreeMap<String, (String, String)> = BTreeMap::new();
    for r in go
        .resources
        .iter()
        .filter(|r| r.api.is_some() && !r.core && !r.external)
    {
        packages.insert(
            project::package_dir(&go, r),
            (r.group.clone(), r.version.clone()),
        );
    }
    let probe = project::carry(&go, &name, &BTreeMap::new(), &mut Report::default());
    let modules: BTreeMap<String, String> = packages
        .iter()
        .map(|(dir, (g, v))| {
            (
                format!("{}/{dir}", go.repo),
                paths::version_module_path(&probe, g, v),
            )
        })
        .collect();
    let mut translated = Vec::new();
    let mut scopes = BTreeMap::new();
    for (dir, (group, version)) in &packages {
        let files: Vec<(String, go::GoFile)> = sources
            .files
            .iter()
            .filter(|(p, _)| Path::new(p.as_str()).parent() == Some(Path::new(dir)))
            .filter(|(p, _)| !p.contains("zz_generated"))
            .filter_map(|(p, (_, f))| f.clone().map(|f| (p.clone(), f)))
            .collect();
        let ctx = types::Context {
            group: probe.qualified_group(group),
            version: version.clone(),
            packages: &modules,
        };
        let pkg = types::Package {
            dir: dir.clone(),
            files,
        };
        let t = types::translate(&pkg, &ctx, &mut report);
        for k in &t.kinds {
            if let Some(ns) = k.namespaced {
                scopes.insert(format!("{group}/{version} {}", k.kind), ns);
            }
        }
        translated.push((group.clone(), version.clone(), dir.clone(), t));
    }
    let project = project::carry(&go, &name, &scopes, &mut report);
    let (types, shared) = assign_types(&project, &go, translated, &mut report)?;
    Ok(Plan {
        go,
        project,
        sources,
        types,
        shared,
        report,
    })
}

type Assigned = (
    BTreeMap<String, Vec<operator_gen_codegen::rustgen::Item>>,
    std::collections::BTreeSet<String>,
);

/// Each kind's items at its types file; a PROJECT kind without a Go type is an error.
fn assign_types(
    project: &Project,
    go: &project::GoProject,
    translated: Vec<(String, String, String, types::Translated)>,
    report: &mut Report,
) -> Result<Assigned> {
    let mut files = BTreeMap::new();
    let mut shared = std::collections::BTreeSet::new();
    for (group, version, dir, mut t) in translated {
        let kinds: Vec<&str> = go
            .resources
            .iter()
            .filter(|r| r.api.is_some() && r.group == group && r.version == version)
            .map(|r| r.kind.as_str())
            .collect();
        for kind in &kinds {
            if !t.kinds.iter().any(|k| k.kind == *kind) {
                return Err(Error::msg(format!(
                    "PROJECT lists kind {kind} in {dir}, but no Go type there is a kind (`+kubebuilder:object:root=true` on type {kind}); fix PROJECT or the types"
                )));
            }
        }
        for k in &t.kinds {
            if !kinds.contains(&k.kind.as_str()) {
                report.add(
                    "project",
                    format!("{}: {}", k.file, k.kind),
                    "a kind PROJECT does not list: its types are written, but no CRD; run `operator-gen create api` for it",
                );
            }
        }
        let several = t.items.len() > 1;
        for (kind, items) in std::mem::take(&mut t.items) {
            let rel = paths::types_file(project, &group, &version, &kind);
            if several {
                shared.insert(rel.clone());
            }
            files.insert(rel, items);
        }
    }
    Ok((files, shared))
}

/// Every Go file of the project (but tests and the skipped directories), with its parse; a
/// file of an API package that does not parse is an error.
fn read_go(input: &Path, report: &mut Report) -> Result<code::GoSources> {
    let mut files = BTreeMap::new();
    let mut stack = vec![input.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| Error::io("read", &dir, e))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && !SKIPPED_DIRS.contains(&name.as_str()) {
                stack.push(path);
            } else if !kind.is_dir() && name.ends_with(".go") && !name.ends_with("_test.go") {
                // a link, a FIFO or a device named *.go goes to the gate, which refuses what
                // is not a regular file by name (skipped, its kinds would go missing unnamed)
                if files.len() >= MAX_GO_FILES {
                    return Err(Error::msg(format!(
                        "{} holds more than {MAX_GO_FILES} Go files; pass the root of one kubebuilder project",
                        input.display()
                    )));
                }
                let rel = path
                    .strip_prefix(input)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .replace('\\', "/");
                let Some(text) = crate::gate::read_text(&path)? else {
                    continue;
                };
                let parsed = match go::parse_file(&text) {
                    Ok(f) => Some(f),
                    Err(e) if rel.starts_with("api/") => {
                        return Err(Error::msg(format!(
                            "{rel}:{}:{}: {}; alpha migrate reads the Go of API packages (types, constants, functions): fix the file",
                            e.line, e.col, e.message
                        )));
                    }
                    Err(e) => {
                        report.add(
                            "code",
                            format!("{rel}:{}:{}", e.line, e.col),
                            format!(
                                "not read ({}): its code and markers are not carried",
                                e.message
                            ),
                        );
                        None
                    }
                };
                files.insert(rel, (text, parsed));
            }
        }
    }
    Ok(code::GoSources { files })
}

fn staging_dir(out: &Path) -> Result<PathBuf> {
    let name = out.file_name().ok_or_else(|| {
        Error::msg(format!(
            "{} has no directory name; pass --output-dir with a directory name",
            out.display()
        ))
    })?;
    Ok(out.with_file_name(format!(".{}.operator-gen-migrate", name.to_string_lossy())))
}

mod fill;
pub use fill::REPORT_FILE;
use fill::{Plan, fill};
