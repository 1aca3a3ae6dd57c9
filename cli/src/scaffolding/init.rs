//! What `init` scaffolds: its context (the flags checked) and its files, the rendered
//! `templates/init/` tree, the license header and the `PROJECT` file; `alpha export-template`
//! renders the same files.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::project::boilerplate::{BOILERPLATE, License, current_year, rust_header};
use crate::project::runtime_crates::{LocalCrate, OUR_CRATES, OurCrate, local_crates};
use crate::project::validate::{check_domain, check_project_name};
use crate::project::{self, Project, names, versions};
use crate::templates::{Engine, SUFFIX};

/// What `init` asks for: its flags, the project name resolved.
#[derive(Debug)]
pub struct Request {
    /// The project name (`--project-name`, else the directory's name in lower case).
    pub project_name: String,
    /// The domain.
    pub domain: String,
    /// The owner of the copyright header.
    pub owner: Option<String>,
    /// The license header.
    pub license: License,
    /// The multigroup layout.
    pub multigroup: bool,
    /// A namespace-scoped manager.
    pub namespaced: bool,
    /// The Kubernetes version as given.
    pub k8s_version: String,
    /// `--runtime-path`.
    pub runtime_path: Option<PathBuf>,
    /// `--runtime-git`.
    pub runtime_git: Option<String>,
}

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

/// Every file `init` writes for `ctx` (path relative to the project → contents), in a fixed
/// order: the rendered `templates/init/` tree (minus files that render empty), the license
/// header for later commands and the `PROJECT` file. `alpha export-template` renders the same set.
pub fn files(ctx: &InitContext) -> Result<Vec<(String, String)>> {
    files_with(ctx, &Engine::new()?)
}

/// [`files`] rendered by `engine`: a project's own templates ([`Engine::for_project`]) over the
/// embedded, recorded in `PROJECT`.
pub fn files_with(ctx: &InitContext, engine: &Engine) -> Result<Vec<(String, String)>> {
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
    let mut project = Project {
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
    crate::templates::record(&mut project, engine);
    out.push((project::FILE_NAME.to_owned(), project.render()?));
    Ok(out)
}

/// The context of `req`, or the one-line error of the first check that fails.
pub fn context(req: &Request) -> Result<InitContext> {
    let project_name = req.project_name.clone();
    check_project_name(&project_name)
        .map_err(|problem| Error::msg(format!("{problem}; pass another --project-name")))?;
    let crate_name = names::module_name(&project_name);
    check_domain(&req.domain)
        .map_err(|problem| Error::msg(format!("{problem}; pass e.g. --domain example.com")))?;
    if req
        .owner
        .as_deref()
        .is_some_and(|o| o.contains(['\n', '\r']))
    {
        return Err(Error::msg(
            "--owner spans several lines; pass the owner on one line",
        ));
    }
    let minor = parse_k8s_version(&req.k8s_version)?;
    let local_crates = local_crates(req.runtime_git.as_deref(), req.runtime_path.as_deref())?;
    let year = current_year();
    Ok(InitContext {
        header: rust_header(req.license, req.owner.as_deref(), year),
        project_name,
        crate_name,
        domain: req.domain.clone(),
        multigroup: req.multigroup,
        namespaced: req.namespaced,
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
