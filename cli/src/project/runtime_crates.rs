//! operator-gen's crates a generated project builds on, and where its local, git-ignored cargo
//! config takes them from until they are published (a checkout or a git repository).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::versions;
use crate::error::{Error, Result};

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

/// Where the local cargo config points one of operator-gen's crates.
#[derive(Clone, Debug, Serialize)]
pub struct LocalCrate {
    /// The package name.
    pub name: String,
    /// The source, a TOML inline table (`{ path = "..." }` or `{ git = "..." }`).
    pub source: String,
}

/// The checkout this CLI was built from.
pub fn default_checkout() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Where the local cargo config takes operator-gen's crates from: the source `--runtime-git` or
/// `--runtime-path` gives, else the
/// checkout this CLI was built from when it is still there, else nowhere (the registry).
pub fn local_crates(
    runtime_git: Option<&str>,
    runtime_path: Option<&Path>,
) -> Result<Vec<LocalCrate>> {
    let source = |each: &dyn Fn(&OurCrate) -> String| {
        OUR_CRATES
            .iter()
            .map(|c| LocalCrate {
                name: c.name.to_owned(),
                source: each(c),
            })
            .collect()
    };
    if let Some(url) = runtime_git {
        if url.trim().is_empty() {
            return Err(Error::msg(
                "--runtime-git is empty; pass the URL of an operator-gen git repository",
            ));
        }
        return Ok(source(&|_| format!("{{ git = {} }}", toml_string(url))));
    }
    let checkout = match runtime_path {
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
    let is_runtime = crate::gate::read_text_lenient(&canonical.join("Cargo.toml"))
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
    let version = crate::gate::read_text_lenient(&checkout.join("Cargo.toml"))
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

#[cfg(test)]
mod tests {
    use super::*;

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
