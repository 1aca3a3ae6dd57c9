//! `operator-gen init`: validate the flags, render `templates/init/` and the `PROJECT` file into
//! the current directory.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{License, current_year, rust_header, versions};
use crate::error::{Error, Result};
use crate::names;
use crate::printer::Printer;
use crate::project::{self, Project};
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

/// Where `init` keeps the license header for later commands.
pub const BOILERPLATE: &str = "hack/boilerplate.rs.txt";

/// operator-gen's crates a generated project builds on, each with its directory in a checkout:
/// the runtime, the crates of ours it depends on, and the control plane its controller tests
/// use (a dev-dependency). Cargo.toml names the runtime and the envtest crate by version; the
/// local cargo config patches all of them to one source.
pub const OUR_CRATES: &[OurCrate] = &[
    OurCrate {
        name: "operator-gen-runtime",
        dir: "runtime",
    },
    OurCrate {
        name: "operator-gen-codegen",
        dir: "codegen",
    },
    OurCrate {
        name: "operator-gen-macros",
        dir: "codegen-macros",
    },
    OurCrate {
        name: "operator-gen-envtest",
        dir: "envtest",
    },
];

/// One of operator-gen's crates.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct OurCrate {
    /// The package name.
    pub name: &'static str,
    /// Its directory in an operator-gen checkout.
    pub dir: &'static str,
}

/// The local, git-ignored cargo config where `init` says where operator-gen's crates come from.
pub const LOCAL_CONFIG: &str = ".cargo/config.toml";

/// Files whose presence means the directory already holds a project.
const GUARDED: &[&str] = &["PROJECT", "Cargo.toml", "src/main.rs"];

/// Crate names cargo refuses besides keywords.
pub const RESERVED_CRATES: &[&str] = &[
    "test",
    "core",
    "std",
    "alloc",
    "proc-macro",
    "proc_macro",
    "build",
    "deps",
    "examples",
    "incremental",
];

/// Names YAML reads as a boolean or null: a project name or domain written unquoted into the
/// manifests must stay a string.
pub const YAML_WORDS: &[&str] = &["y", "n", "yes", "no", "on", "off", "true", "false", "null"];

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

/// Where the local cargo config points one of operator-gen's crates.
#[derive(Clone, Debug, Serialize)]
pub struct LocalCrate {
    /// The package name.
    pub name: String,
    /// The source, a TOML inline table (`{ path = "..." }` or `{ git = "..." }`).
    pub source: String,
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
    if let Err(problem) = check_project_name(&project_name) {
        return Err(Error::msg(format!(
            "{problem}; pass another --project-name"
        )));
    }
    let crate_name = names::module_name(&project_name);
    if let Err(problem) = check_domain(&args.domain) {
        return Err(Error::msg(format!(
            "{problem}; pass e.g. --domain example.com"
        )));
    }
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
    let local_crates = local_crates(args)?;
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

/// Why `name` cannot be a project name (the problem, without the fix), or `Ok`.
pub fn check_project_name(name: &str) -> std::result::Result<(), String> {
    if !names::is_dns1123_label(name) {
        return Err(format!(
            "project name {name:?} is invalid: it must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending alphanumeric)"
        ));
    }
    let crate_name = names::module_name(name);
    if names::is_rust_keyword(&crate_name) || RESERVED_CRATES.contains(&name) {
        return Err(format!(
            "project name {name:?} cannot name a rust crate (it is a keyword or reserved by cargo)"
        ));
    }
    if !crate_name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(format!(
            "project name {name:?} must start with a letter to name a rust crate"
        ));
    }
    if YAML_WORDS.contains(&name) {
        return Err(format!(
            "project name {name:?} reads as a boolean or null in YAML manifests"
        ));
    }
    Ok(())
}

/// Why `domain` cannot be the project's domain (the problem, without the fix), or `Ok`.
pub fn check_domain(domain: &str) -> std::result::Result<(), String> {
    if !names::is_dns1123_subdomain(domain) {
        return Err(format!(
            "domain {domain:?} is invalid: it must be a DNS-1123 subdomain (lower-case labels separated by dots)"
        ));
    }
    if YAML_WORDS.contains(&domain) {
        return Err(format!(
            "domain {domain:?} reads as a boolean or null in YAML manifests"
        ));
    }
    Ok(())
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

/// The checkout this CLI was built from.
fn default_checkout() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Where the local cargo config takes operator-gen's crates from: the flags' source, else the
/// checkout this CLI was built from when it is still there, else nowhere (the registry).
fn local_crates(args: &InitArgs) -> Result<Vec<LocalCrate>> {
    let source = |each: &dyn Fn(&OurCrate) -> String| {
        OUR_CRATES
            .iter()
            .map(|c| LocalCrate {
                name: c.name.to_owned(),
                source: each(c),
            })
            .collect()
    };
    if let Some(url) = &args.runtime_git {
        if url.trim().is_empty() {
            return Err(Error::msg(
                "--runtime-git is empty; pass the URL of an operator-gen git repository",
            ));
        }
        return Ok(source(&|_| format!("{{ git = {} }}", toml_string(url))));
    }
    let checkout = match &args.runtime_path {
        Some(dir) => checkout_at(dir)?,
        None => match std::fs::canonicalize(default_checkout()) {
            Ok(dir) if is_checkout(&dir) => dir,
            _ => return Ok(Vec::new()),
        },
    };
    check_checkout_version(&checkout)?;
    Ok(source(&|c| {
        let path = checkout.join(c.dir);
        format!("{{ path = {} }}", toml_string(&path.to_string_lossy()))
    }))
}

/// Whether `dir` holds every crate of [`OUR_CRATES`].
fn is_checkout(dir: &Path) -> bool {
    OUR_CRATES
        .iter()
        .all(|c| dir.join(c.dir).join("Cargo.toml").is_file())
}

/// The canonical operator-gen checkout `--runtime-path` names: the directory itself, or the
/// checkout around it when it is the checkout's `runtime/`.
fn checkout_at(dir: &Path) -> Result<PathBuf> {
    let Some(canonical) = std::fs::canonicalize(dir)
        .ok()
        .filter(|p| p.join("Cargo.toml").is_file())
    else {
        return Err(Error::msg(format!(
            "--runtime-path {} holds no Cargo.toml; pass an operator-gen checkout (or its runtime/ directory)",
            dir.display()
        )));
    };
    let is_runtime = std::fs::read_to_string(canonical.join("Cargo.toml"))
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .is_some_and(|t| {
            t.get("package")
                .and_then(|p| p.get("name"))
                .and_then(toml::Value::as_str)
                == OUR_CRATES.first().map(|c| c.name)
        });
    let around = canonical.parent().filter(|_| is_runtime);
    match [Some(canonical.as_path()), around]
        .into_iter()
        .flatten()
        .find(|d| is_checkout(d))
    {
        Some(checkout) => Ok(checkout.to_path_buf()),
        None => Err(Error::msg(format!(
            "--runtime-path {} is not an operator-gen checkout: it lacks {}; pass a whole checkout (or its runtime/ directory)",
            dir.display(),
            OUR_CRATES
                .iter()
                .map(|c| format!("{}/Cargo.toml", c.dir))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A checkout whose version cargo cannot match against the requirement init writes
/// (`operator-gen-runtime = "<this CLI's version>"`) would leave the patch unused; say so now.
fn check_checkout_version(checkout: &Path) -> Result<()> {
    let version = std::fs::read_to_string(checkout.join("Cargo.toml"))
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .and_then(|t| {
            t.get("workspace")?
                .get("package")?
                .get("version")?
                .as_str()
                .map(str::to_owned)
        });
    let Some(version) = version else {
        // not a workspace like ours: cargo will say what it thinks of it
        return Ok(());
    };
    if semver_compatible(&version, versions::CLI) {
        return Ok(());
    }
    Err(Error::msg(format!(
        "the operator-gen checkout at {} is version {version}, but this operator-gen {} writes `operator-gen-runtime = \"{}\"` into Cargo.toml, which that version does not match; pass a checkout of a matching version, or use the operator-gen built from it",
        checkout.display(),
        versions::CLI,
        versions::CLI
    )))
}

/// Whether version `have` satisfies cargo's default (caret) requirement `want`.
fn semver_compatible(have: &str, want: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> {
        v.split(['-', '+'])
            .next()
            .unwrap_or("")
            .split('.')
            .map(|n| n.parse().unwrap_or(0))
            .collect()
    };
    let (h, w) = (parts(have), parts(want));
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    // the leftmost non-zero component of the requirement must be equal, and `have` not older
    let first = (0..3).find(|&i| at(&w, i) != 0).unwrap_or(2);
    (0..=first).all(|i| at(&h, i) == at(&w, i))
        && (at(&h, 0), at(&h, 1), at(&h, 2)) >= (at(&w, 0), at(&w, 1), at(&w, 2))
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
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

    #[test]
    fn caret_compatibility() {
        assert!(semver_compatible("0.1.0", "0.1.0"));
        assert!(semver_compatible("0.1.4", "0.1.0"));
        assert!(!semver_compatible("0.2.0", "0.1.0"));
        assert!(!semver_compatible("0.1.0", "0.1.3"));
        assert!(semver_compatible("1.4.0", "1.2.0"));
        assert!(!semver_compatible("2.0.0", "1.2.0"));
        assert!(semver_compatible("0.0.3", "0.0.3"));
        assert!(!semver_compatible("0.0.4", "0.0.3"));
    }

    #[test]
    fn our_crates_are_the_runtime_and_what_it_builds_on() {
        // the runtime's manifest lists the other crates of ours it depends on
        let runtime = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../runtime/Cargo.toml"
        ))
        .unwrap_or_default();
        let table = runtime.parse::<toml::Table>().unwrap_or_default();
        let mut deps: Vec<&str> = table
            .get("dependencies")
            .and_then(toml::Value::as_table)
            .map(|d| {
                d.keys()
                    .map(String::as_str)
                    .filter(|k| k.starts_with("operator-gen-"))
                    .collect()
            })
            .unwrap_or_default();
        deps.insert(0, "operator-gen-runtime");
        // the generated project's dev-dependency for its controller tests
        deps.push("operator-gen-envtest");
        let ours: Vec<&str> = OUR_CRATES.iter().map(|c| c.name).collect();
        assert_eq!(ours, deps);
        assert!(is_checkout(&default_checkout()));
    }

    #[test]
    fn toml_strings() {
        assert_eq!(toml_string(r#"a\b"c"#), r#""a\\b\"c""#);
    }
}
