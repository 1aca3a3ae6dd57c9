//! `operator-gen init`: validate the flags, render `templates/init/` and the `PROJECT` file into
//! the current directory.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::printer::Printer;
pub use crate::project::boilerplate::BOILERPLATE;
use crate::project::boilerplate::{License, current_year, rust_header};
pub use crate::project::runtime_crates::{LOCAL_CONFIG, LocalCrate, OUR_CRATES, OurCrate};
use crate::project::runtime_crates::{default_checkout, local_crates};
use crate::project::validate::{check_domain, check_project_name};
use crate::project::{self, Project, names, versions};
use crate::scaffold::{IfExists, Scaffold};
use crate::templates::{Engine, SUFFIX};
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

/// What every `init` template sees.
#[derive(Debug, Serialize)]
pub struct InitContext {
    /// License header for `.rs` files (`//` lines and a blank line), maybe empty.
    pub header: String,
    /// Project name (a DNS-1123 label), also the package name.
    pub project_name: String,
    /// The library crate name (`-` → `_`).
    pub crate_name: String,
    /// Domain for groups.
    pub domain: String,
    /// Multi-group layout.
    pub multigroup: bool,
    /// Namespace-scoped manager.
    pub namespaced: bool,
    /// Kubernetes minor version, e.g. `1.37`.
    pub k8s_version: String,
    /// The k8s-openapi feature, e.g. `v1_37`.
    pub k8s_feature: String,
    /// The version requirement on operator-gen's crates in Cargo.toml (this CLI's version).
    pub runtime_version: String,
    /// operator-gen's crates the project builds on.
    pub our_crates: Vec<OurCrate>,
    /// The `[patch.crates-io]` entries of the local cargo config (crate name → inline table);
    /// empty when cargo takes the published crates (then no local config is written).
    pub local_crates: Vec<LocalCrate>,
    /// The Rust version of Cargo.toml's `rust-version` and the image's toolchain.
    pub rust_version: String,
    /// kube version.
    pub kube_version: String,
    /// k8s-openapi version.
    pub k8s_openapi_version: String,
    /// operator-gen version.
    pub cli_version: String,
    /// operator-gen's repository, for installing the CLI in CI.
    pub repository: String,
}

/// Run `init` in `root`.
pub fn run(args: &InitArgs, root: &Path, printer: &Printer) -> Result<()> {
    for guarded in GUARDED {
        if root.join(guarded).symlink_metadata().is_ok() {
            return Err(Error::msg(format!(
                "target directory is already initialized: {guarded} exists; run `operator-gen init` in an empty directory"
            )));
        }
    }
    let ctx = context(args, root)?;
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

/// Every file `init` writes for `ctx` (path relative to the project → contents), in a fixed
/// order: the rendered `templates/init/` tree (minus files that render empty), the license
/// header for later commands and the `PROJECT` file. `alpha export-template` renders the same set.
pub fn files(ctx: &InitContext) -> Result<Vec<(String, String)>> {
    let engine = Engine::new()?;
    let mut out = Vec::new();
    for name in engine.names_under("init/") {
        let rel = name
            .trim_start_matches("init/")
            .trim_end_matches(SUFFIX)
            .to_owned();
        let text = engine.render(&name, ctx)?;
        if text.trim().is_empty() {
            continue;
        }
        out.push((rel, text));
    }
    out.push((BOILERPLATE.to_owned(), ctx.header.clone()));
    let project = Project {
        cli_version: Some(ctx.cli_version.clone()),
        domain: ctx.domain.clone(),
        k8s_version: Some(ctx.k8s_version.clone()),
        layout: vec![project::LAYOUT.to_owned()],
        multigroup: ctx.multigroup,
        namespaced: ctx.namespaced,
        plugins: Default::default(),
        project_name: ctx.project_name.clone(),
        resources: Vec::new(),
        version: "3".to_owned(),
    };
    out.push((project::FILE_NAME.to_owned(), project.render()?));
    Ok(out)
}

fn context(args: &InitArgs, root: &Path) -> Result<InitContext> {
    let project_name = match &args.project_name {
        Some(name) => name.clone(),
        None => root
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default(),
    };
    check_project_name(&project_name)
        .map_err(|problem| Error::msg(format!("{problem}; pass another --project-name")))?;
    let crate_name = names::module_name(&project_name);
    check_domain(&args.domain)
        .map_err(|problem| Error::msg(format!("{problem}; pass e.g. --domain example.com")))?;
    if args
        .owner
        .as_deref()
        .is_some_and(|o| o.contains(['\n', '\r']))
    {
        return Err(Error::msg(
            "--owner spans several lines; pass the owner on one line",
        ));
    }
    let minor = parse_k8s_version(&args.k8s_version)?;
    let local_crates = local_crates(args.runtime_git.as_deref(), args.runtime_path.as_deref())?;
    let year = current_year();
    Ok(InitContext {
        header: rust_header(args.license, args.owner.as_deref(), year),
        project_name,
        crate_name,
        domain: args.domain.clone(),
        multigroup: args.multigroup.unwrap_or(false),
        namespaced: args.namespaced.unwrap_or(false),
        k8s_version: format!("1.{minor}"),
        k8s_feature: format!("v1_{minor}"),
        runtime_version: versions::CLI.to_owned(),
        our_crates: OUR_CRATES.to_vec(),
        local_crates,
        rust_version: versions::RUST.to_owned(),
        kube_version: versions::KUBE.to_owned(),
        k8s_openapi_version: versions::K8S_OPENAPI.to_owned(),
        cli_version: versions::CLI.to_owned(),
        repository: env!("CARGO_PKG_REPOSITORY").to_owned(),
    })
}

fn parse_k8s_version(text: &str) -> Result<u32> {
    let supported = || {
        versions::K8S_MINORS
            .iter()
            .map(|m| format!("1.{m}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let trimmed = text.trim_start_matches('v');
    let minor = trimmed
        .strip_prefix("1.")
        .and_then(|m| m.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    match minor {
        Some(m) if versions::K8S_MINORS.contains(&m) => Ok(m),
        _ => Err(Error::msg(format!(
            "kubernetes version {text:?} is not supported by k8s-openapi {}; pass --k8s-version with one of {}",
            versions::K8S_OPENAPI,
            supported()
        ))),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k8s_versions() {
        assert_eq!(parse_k8s_version("1.37").ok(), Some(37));
        assert_eq!(parse_k8s_version("v1.33").ok(), Some(33));
        assert_eq!(parse_k8s_version("1.33.2").ok(), Some(33));
        assert!(parse_k8s_version("1.32").is_err());
        assert!(parse_k8s_version("2.0").is_err());
    }
}
