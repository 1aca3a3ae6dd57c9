//! `operator-gen init`: its flags, and a run that writes the files of
//! [`crate::scaffolding::init`] into the current directory.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::printer::Printer;
use crate::project::boilerplate::BOILERPLATE;
use crate::project::boilerplate::License;
use crate::project::runtime_crates::default_checkout;
pub use crate::project::runtime_crates::{LOCAL_CONFIG, OUR_CRATES};
use crate::scaffold::{IfExists, Scaffold};
use crate::scaffolding::init::{Request, context, files};
use clap::{ArgAction, Args};

/// Flags of `init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Domain for groups; API groups become `<group>.<domain>`.
    #[arg(long, default_value = "my.domain")]
    pub domain: String,
    /// Name of the project; defaults to the directory's name. Must be a DNS-1123 label.
    #[arg(long)]
    pub project_name: Option<String>,
    /// Owner named in the copyright header.
    #[arg(long)]
    pub owner: Option<String>,
    /// License header on every generated source file.
    #[arg(long, value_enum, default_value_t = License::Apache2)]
    pub license: License,
    /// Lay APIs out as `src/api/<group>/<version>/` so the project can hold several groups.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, value_name = "BOOL")]
    pub multigroup: Option<bool>,
    /// Namespace-scoped manager: watches `WATCH_NAMESPACE` with Role/RoleBinding RBAC.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, value_name = "BOOL")]
    pub namespaced: Option<bool>,
    /// Kubernetes minor version to target (selects the k8s-openapi feature `v1_NN`): 1.33 to 1.37.
    #[arg(long, default_value = "1.37", value_name = "VERSION")]
    pub k8s_version: String,
    /// Take operator-gen's crates from this checkout (or its runtime/ directory) until they are
    /// published, through the local `.cargo/config.toml` (default: the checkout this CLI was
    /// built from, when it exists). Cargo.toml names them by version only.
    #[arg(long, value_name = "DIR", conflicts_with = "runtime_git")]
    pub runtime_path: Option<PathBuf>,
    /// Take operator-gen's crates from this git repository until they are published, through
    /// the local `.cargo/config.toml`.
    #[arg(long, value_name = "URL")]
    pub runtime_git: Option<String>,
    /// Add PROJECT, config/ and the Makefile around an existing crate (a kube-rs operator)
    /// without changing its Cargo.toml or sources; the CRDs of the kinds `manifests` reads in it
    /// are listed in config/crd.
    #[arg(long)]
    pub existing: bool,
}

/// Files whose presence means the directory already holds a project.
const GUARDED: &[&str] = &["PROJECT", "Cargo.toml", "src/main.rs"];

/// Run `init` in `root`.
pub fn run(args: &InitArgs, root: &Path, printer: &Printer) -> Result<()> {
    if args.existing {
        return run_existing(args, root, printer);
    }
    for guarded in GUARDED {
        if root.join(guarded).symlink_metadata().is_ok() {
            return Err(Error::msg(format!(
                "target directory is already initialized: {guarded} exists; run `operator-gen init` in an empty directory"
            )));
        }
    }
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let ctx = context(&request(args, name))?;
    if ctx.local_crates.is_empty() {
        printer.warn(&format!(
            "no operator-gen checkout at {} (the one this CLI was built from): wrote no {LOCAL_CONFIG}, so cargo takes operator-gen's crates from the registry; until they are published, run init with --runtime-path <checkout> or --runtime-git <url>",
            default_checkout().display()
        ));
    }
    let mut scaffold = Scaffold::new(root);
    let engine = crate::templates::Engine::for_project(root)?;
    for (rel, text) in crate::scaffolding::init::files_with(&ctx, &engine)? {
        if scaffold.exists(&rel) {
            return Err(Error::msg(format!(
                "init would overwrite {rel}; move it out of the directory and run init again"
            )));
        }
        scaffold.file(&rel, text, IfExists::Error)?;
    }
    scaffold.check()?;
    warn_about_content(root, printer);
    scaffold.commit(printer)?;
    printer.hint("Next: define a resource with:\n$ operator-gen create api --group <group> --version <version> --kind <Kind>");
    Ok(())
}

/// What `args` ask for, the project named `name` unless `--project-name` names it.
fn request(args: &InitArgs, name: String) -> Request {
    Request {
        project_name: args.project_name.clone().unwrap_or(name),
        domain: args.domain.clone(),
        owner: args.owner.clone(),
        license: args.license,
        multigroup: args.multigroup.unwrap_or(false),
        namespaced: args.namespaced.unwrap_or(false),
        k8s_version: args.k8s_version.clone(),
        runtime_path: args.runtime_path.clone(),
        runtime_git: args.runtime_git.clone(),
    }
}

fn warn_about_content(root: &Path, printer: &Printer) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let mut others: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !(n.starts_with('.') && n != ".github") && n != "LICENSE")
        .collect();
    others.sort();
    if !others.is_empty() {
        printer.warn(&format!(
            "the directory is not empty ({}); init writes its files next to them",
            others.join(", ")
        ));
    }
}

/// The files of `init --existing` besides the crate's own: `PROJECT`, `config/`, the Makefile
/// and the license header of later commands.
fn kept_by_existing(rel: &str) -> bool {
    rel == crate::project::FILE_NAME
        || rel == "Makefile"
        || rel == BOILERPLATE
        || rel.starts_with("config/")
}

/// `init --existing`: `PROJECT`, `config/` and the Makefile around the crate at `root`, its
/// Cargo.toml and sources untouched. The crate is read as `manifests` reads it first (a crate
/// it cannot read is refused, nothing written), and its kinds' CRDs are listed in config/crd.
fn run_existing(args: &InitArgs, root: &Path, printer: &Printer) -> Result<()> {
    if root
        .join(crate::project::FILE_NAME)
        .symlink_metadata()
        .is_ok()
    {
        return Err(Error::msg(
            "target directory is already initialized: PROJECT exists; run `operator-gen init --existing` in a crate without one",
        ));
    }
    let manifest = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).map_err(|_| {
        Error::msg(
            "no Cargo.toml here: run `operator-gen init --existing` at the root of the crate",
        )
    })?;
    let package = toml::from_str::<toml::Table>(&text)
        .ok()
        .and_then(|t| t.get("package")?.get("name")?.as_str().map(str::to_owned))
        .ok_or_else(|| {
            Error::msg("Cargo.toml has no [package] name: run `operator-gen init --existing` in a package's directory")
        })?;
    let ctx = context(&request(args, package.replace('_', "-").to_lowercase()))?;
    let outputs = crate::manifests::generate(root, &Default::default())?;
    let crds: Vec<&str> = outputs
        .keys()
        .filter_map(|k| k.strip_prefix("config/crd/"))
        .filter(|k| k.starts_with("bases/"))
        .collect();
    let mut scaffold = Scaffold::new(root);
    for (rel, mut text) in files(&ctx)? {
        if !kept_by_existing(&rel) {
            continue;
        }
        if !crds.is_empty() {
            text = list_crds(&rel, text, &crds);
        }
        if scaffold.exists(&rel) {
            return Err(Error::msg(format!(
                "init --existing would overwrite {rel}; move it out of the directory and run init again"
            )));
        }
        scaffold.file(&rel, text, IfExists::Error)?;
    }
    scaffold.check()?;
    scaffold.commit(printer)?;
    printer.hint("Next: write the CRDs and the role with:\n$ make manifests");
    Ok(())
}

/// The kustomizations of config/ with the CRDs listed (`bases/<file>` in config/crd) and
/// config/crd enabled in config/default.
fn list_crds(rel: &str, text: String, crds: &[&str]) -> String {
    use crate::project::markers::CRD_RESOURCES;
    match rel {
        "config/crd/kustomization.yaml" => {
            let listed: String = crds.iter().map(|c| format!("- {c}\n")).collect();
            text.replacen(CRD_RESOURCES, &format!("{listed}{CRD_RESOURCES}"), 1)
        }
        "config/default/kustomization.yaml" => text.replacen("#- ../crd\n", "- ../crd\n", 1),
        _ => text,
    }
}
