//! `operator-gen init`: its flags, and a run that writes the files of
//! [`crate::scaffolding::init`] into the current directory.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::printer::Printer;
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
}

/// Files whose presence means the directory already holds a project.
const GUARDED: &[&str] = &["PROJECT", "Cargo.toml", "src/main.rs"];

/// Run `init` in `root`.
pub fn run(args: &InitArgs, root: &Path, printer: &Printer) -> Result<()> {
    for guarded in GUARDED {
        if root.join(guarded).symlink_metadata().is_ok() {
            return Err(Error::msg(format!(
                "target directory is already initialized: {guarded} exists; run `operator-gen init` in an empty directory"
            )));
        }
    }
    let request = Request {
        project_name: match &args.project_name {
            Some(name) => name.clone(),
            None => root
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                .unwrap_or_default(),
        },
        domain: args.domain.clone(),
        owner: args.owner.clone(),
        license: args.license,
        multigroup: args.multigroup.unwrap_or(false),
        namespaced: args.namespaced.unwrap_or(false),
        k8s_version: args.k8s_version.clone(),
        runtime_path: args.runtime_path.clone(),
        runtime_git: args.runtime_git.clone(),
    };
    let ctx = context(&request)?;
    if ctx.local_crates.is_empty() {
        printer.warn(&format!(
            "no operator-gen checkout at {} (the one this CLI was built from): wrote no {LOCAL_CONFIG}, so cargo takes operator-gen's crates from the registry; until they are published, run init with --runtime-path <checkout> or --runtime-git <url>",
            default_checkout().display()
        ));
    }
    let mut scaffold = Scaffold::new(root);
    for (rel, text) in files(&ctx)? {
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
