//! The crates `manifests` reads besides the project's own: the workspace's members (when the
//! project is the workspace root) and path dependencies, transitively, as controller-gen follows
//! `paths=./...`. Found with `cargo metadata --no-deps --offline` (nothing is compiled or
//! fetched), asked only when the project's `Cargo.toml` has a `[workspace]` or a dependency by
//! path or from the workspace.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Another crate to scan: the name other crates use for it and its root file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crate {
    /// The name it is used by (`fleet_api` for package `fleet-api`).
    pub name: String,
    /// Its crate root (`api/src/lib.rs`).
    pub entry: PathBuf,
}

/// The crates the project at `root` brings in, sorted by name, without the project itself;
/// `own` is the name the project's own library is used by, when it has one.
#[derive(Clone, Debug, Default)]
pub struct Crates {
    pub own: Option<String>,
    pub others: Vec<Crate>,
}

/// operator-gen's own crates: a project may reach them by path (a checkout it depends on, or a
/// workspace of its own around one), and they hold no types of the user's, so they are never read.
const OURS: &[&str] = &[
    "operator-gen",
    "operator-gen-runtime",
    "operator-gen-macros",
    "operator-gen-codegen",
];

/// True when the manifest at `root` can bring in other local crates.
fn may_have_others(manifest: &str) -> bool {
    let Ok(table) = manifest.parse::<toml::Table>() else {
        // cargo will say what is wrong with it
        return true;
    };
    if table.contains_key("workspace") {
        return true;
    }
    let local = |deps: Option<&toml::Value>| {
        deps.and_then(toml::Value::as_table).is_some_and(|t| {
            t.iter().any(|(name, d)| {
                let package = d
                    .get("package")
                    .and_then(toml::Value::as_str)
                    .unwrap_or(name);
                !OURS.contains(&package)
                    && d.as_table()
                        .is_some_and(|d| d.contains_key("path") || d.contains_key("workspace"))
            })
        })
    };
    local(table.get("dependencies"))
        || table
            .get("target")
            .and_then(toml::Value::as_table)
            .is_some_and(|targets| {
                targets
                    .values()
                    .any(|t| local(t.as_table().and_then(|t| t.get("dependencies"))))
            })
}

/// The crates the project at `root` brings in.
pub fn discover(root: &Path) -> Result<Crates, String> {
    let Ok(manifest) = std::fs::read_to_string(root.join("Cargo.toml")) else {
        return Ok(Crates::default());
    };
    if !may_have_others(&manifest) {
        return Ok(Crates::default());
    }
    let mut packages: BTreeMap<PathBuf, Package> = BTreeMap::new();
    let first = metadata(&root.join("Cargo.toml"))?;
    let root_dir = canonical(root);
    let is_workspace_root = canonical(&first.workspace_root) == root_dir;
    let mut todo: Vec<PathBuf> = Vec::new();
    let mut own = None;
    // members of an enclosing workspace: read only when a path dependency names them
    let mut parked: BTreeMap<PathBuf, Package> = BTreeMap::new();
    for p in first.packages {
        let dir = canonical(p.dir());
        if dir == root_dir {
            own = p.lib_name();
        }
        if dir == root_dir || is_workspace_root {
            todo.extend(p.path_deps.iter().cloned());
            packages.insert(dir, p);
        } else {
            parked.insert(dir, p);
        }
    }
    // path dependencies, transitively
    while let Some(dep) = todo.pop() {
        let dir = canonical(&dep);
        if packages.contains_key(&dir) {
            continue;
        }
        let p = match parked.remove(&dir) {
            Some(p) => p,
            None => metadata(&dep.join("Cargo.toml"))?
                .packages
                .into_iter()
                .find(|p| canonical(p.dir()) == dir)
                .ok_or_else(|| {
                    format!(
                        "cargo metadata does not list the package at {}: check its Cargo.toml",
                        dep.display()
                    )
                })?,
        };
        todo.extend(p.path_deps.iter().cloned());
        packages.insert(dir, p);
    }
    let mut others: Vec<Crate> = packages
        .into_iter()
        .filter(|(dir, _)| *dir != root_dir)
        .filter_map(|(_, p)| {
            let (name, entry) = p.root_file()?;
            Some(Crate { name, entry })
        })
        .collect();
    others.sort_by(|a, b| a.name.cmp(&b.name).then(a.entry.cmp(&b.entry)));
    Ok(Crates { own, others })
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[derive(Debug, Default)]
struct Package {
    name: String,
    manifest_path: PathBuf,
    /// (kind, name, root file) of each target.
    targets: Vec<(String, String, PathBuf)>,
    path_deps: Vec<PathBuf>,
}

impl Package {
    fn dir(&self) -> &Path {
        self.manifest_path.parent().unwrap_or(Path::new(""))
    }

    fn lib_name(&self) -> Option<String> {
        self.targets
            .iter()
            .find(|(kind, _, _)| kind == "lib" || kind == "proc-macro")
            .map(|(_, name, _)| name.replace('-', "_"))
    }

    /// The library's name and root file, else the first binary's.
    fn root_file(&self) -> Option<(String, PathBuf)> {
        let lib = self
            .targets
            .iter()
            .find(|(kind, _, _)| kind == "lib" || kind == "proc-macro");
        let bin = self.targets.iter().find(|(kind, _, _)| kind == "bin");
        lib.or(bin)
            .map(|(_, name, file)| (name.replace('-', "_"), file.clone()))
            .or_else(|| {
                let lib = self.dir().join("src/lib.rs");
                lib.is_file().then(|| (self.name.replace('-', "_"), lib))
            })
    }
}

struct Metadata {
    workspace_root: PathBuf,
    packages: Vec<Package>,
}

/// `cargo metadata --no-deps --offline` of the manifest at `manifest`.
fn metadata(manifest: &Path) -> Result<Metadata, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(&cargo)
        .args(["metadata", "--no-deps", "--offline", "--format-version", "1", "--manifest-path"])
        .arg(manifest)
        .output()
        .map_err(|e| {
            format!("cannot run `{cargo} metadata` to find the workspace's crates: {e}; install cargo or put it on PATH")
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        return Err(format!(
            "`cargo metadata` fails on {}: {}; fix the manifest, then run again",
            manifest.display(),
            first.trim().trim_start_matches("error: ")
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("`cargo metadata` printed no JSON: {e}"))?;
    let str_of = |v: &serde_json::Value, k: &str| {
        v.get(k)
            .and_then(|s| s.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let packages = v
        .get("packages")
        .and_then(|p| p.as_array())
        .map(|ps| {
            ps.iter()
                .map(|p| Package {
                    name: str_of(p, "name"),
                    manifest_path: PathBuf::from(str_of(p, "manifest_path")),
                    targets: p
                        .get("targets")
                        .and_then(|t| t.as_array())
                        .map(|ts| {
                            ts.iter()
                                .map(|t| {
                                    let kind = t
                                        .get("kind")
                                        .and_then(|k| k.as_array())
                                        .and_then(|k| k.first())
                                        .and_then(|k| k.as_str())
                                        .unwrap_or_default()
                                        .to_string();
                                    (
                                        kind,
                                        str_of(t, "name"),
                                        PathBuf::from(str_of(t, "src_path")),
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                    path_deps: p
                        .get("dependencies")
                        .and_then(|d| d.as_array())
                        .map(|ds| {
                            ds.iter()
                                .filter(|d| {
                                    d.get("kind").is_none_or(|k| k.is_null() || k == "build")
                                        && !d
                                            .get("name")
                                            .and_then(|n| n.as_str())
                                            .is_some_and(|n| OURS.contains(&n))
                                })
                                .filter_map(|d| d.get("path").and_then(|p| p.as_str()))
                                .map(PathBuf::from)
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Metadata {
        workspace_root: PathBuf::from(str_of(&v, "workspace_root")),
        packages,
    })
}
