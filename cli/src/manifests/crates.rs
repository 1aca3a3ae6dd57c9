//! The crates `manifests` reads besides the project's own: the workspace's members (when the
//! project is the workspace root) and path dependencies, transitively, as controller-gen follows
//! `paths=./...`; and dependencies from a registry or git that depend on `operator-gen-runtime`
//! (so they can derive `Schema`), read from the source cargo unpacked.
//!
//! Nothing is compiled or fetched. Local crates come from `cargo metadata --no-deps --offline`,
//! asked only when the project's `Cargo.toml` has a `[workspace]` or a dependency by path or from
//! the workspace. Registry and git crates come from `cargo metadata --offline` with the
//! dependency graph (which resolves the whole graph), asked only when `Cargo.lock` lists such a
//! package depending on one of our crates, or lacks a dependency the manifests declare (cargo
//! then brings the lock up to date, as any cargo command would). Without a `Cargo.lock` they are
//! not looked for; [`Crates::note`] says so, for the error of a type that is then not found.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// Another crate to scan: the name other crates use for it and its root file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crate {
    /// The name it is used by (`fleet_api` for package `fleet-api`).
    pub name: String,
    /// Its crate root (`api/src/lib.rs`).
    pub entry: PathBuf,
    /// A workspace member or path dependency, whose kinds and RBAC and webhook markers are the
    /// project's; a registry or git crate only lends its types (its kinds are its publisher's).
    pub local: bool,
}

/// A name one crate gives another in its `Cargo.toml` (`berths = { package = "harbor-kinds",
/// path = ".." }`): in that crate's paths `berths::` means crate `harbor_kinds`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Alias {
    /// The crate using the name, by its name in [`Crate::name`]; `None`: the project's own.
    pub user: Option<String>,
    /// The name it uses (`berths`).
    pub name: String,
    /// The crate it means, by its name in [`Crate::name`] (`harbor_kinds`).
    pub target: String,
}

/// The crates the project at `root` brings in, sorted by name, without the project itself;
/// `own` is the name the project's own library is used by, when it has one.
#[derive(Clone, Debug, Default)]
pub struct Crates {
    pub own: Option<String>,
    pub others: Vec<Crate>,
    /// Renamed dependencies between the scanned crates.
    pub aliases: Vec<Alias>,
    /// Why crates from registry or git dependencies may be missing (no `Cargo.lock`, or
    /// `cargo metadata` could not resolve the graph offline); said beside a type not found.
    pub note: Option<String>,
}

/// operator-gen's own crates: a project may reach them by path (a checkout it depends on, or a
/// workspace of its own around one), and they hold no types of the user's, so they are never read.
const OURS: &[&str] = &[
    "operator-gen",
    "operator-gen-runtime",
    "operator-gen-macros",
    "operator-gen-codegen",
];

/// The crates a crate must depend on to derive `Schema`: a registry or git package is read
/// only when it depends on one of them directly.
const DERIVES: &[&str] = &["operator-gen-runtime", "operator-gen-macros"];

/// The dependency tables of a manifest that build it: `[dependencies]`, `[build-dependencies]`
/// and their `[target.'cfg'.*]` forms.
fn dependency_tables(table: &toml::Table) -> Vec<&toml::Table> {
    const KEYS: &[&str] = &["dependencies", "build-dependencies"];
    fn of(t: &toml::Table) -> Vec<&toml::Table> {
        KEYS.iter()
            .filter_map(|k| t.get(*k).and_then(toml::Value::as_table))
            .collect()
    }
    let mut out = of(table);
    if let Some(targets) = table.get("target").and_then(toml::Value::as_table) {
        for t in targets.values().filter_map(toml::Value::as_table) {
            out.extend(of(t));
        }
    }
    out
}

/// The package a dependency entry names: its `package` key, else its key.
fn package_of<'a>(key: &'a str, dep: &'a toml::Value) -> &'a str {
    dep.get("package")
        .and_then(toml::Value::as_str)
        .unwrap_or(key)
}

/// True when the manifest can bring in other local crates.
fn may_have_others(table: &toml::Table) -> bool {
    table.contains_key("workspace")
        || dependency_tables(table).iter().any(|t| {
            t.iter().any(|(name, d)| {
                !OURS.contains(&package_of(name, d))
                    && d.as_table()
                        .is_some_and(|d| d.contains_key("path") || d.contains_key("workspace"))
            })
        })
}

/// The packages a manifest declares as dependencies (not dev-dependencies), by package name;
/// entries inherited from the workspace, which may rename, are left out.
fn declared(table: &toml::Table) -> Vec<String> {
    dependency_tables(table)
        .into_iter()
        .flat_map(|t| t.iter())
        .filter(|(_, d)| d.get("workspace").is_none())
        .map(|(name, d)| package_of(name, d).to_string())
        .collect()
}

/// The crates the project at `root` brings in.
pub fn discover(root: &Path) -> Result<Crates> {
    let Some(manifest) = crate::gate::read_text(&root.join("Cargo.toml"))? else {
        return Ok(Crates::default());
    };
    let table = manifest.parse::<toml::Table>().ok();
    let root_dir = canonical(root);
    // cargo says what is wrong with a manifest that does not parse
    let local = match &table {
        Some(t) if !may_have_others(t) => Local {
            declared: declared(t),
            ..Local::default()
        },
        _ => local_crates(root, &root_dir)?,
    };
    let mut crates = Crates {
        own: local.own.clone(),
        ..Crates::default()
    };
    // the name each scanned package is used by, by directory; the project's own is `None`
    let mut names: BTreeMap<PathBuf, Option<String>> = BTreeMap::new();
    let mut aliases = BTreeSet::new();
    for (dir, p) in &local.packages {
        if *dir == root_dir {
            names.insert(dir.clone(), None);
            continue;
        }
        if let Some((name, entry)) = p.root_file() {
            names.insert(dir.clone(), Some(name.clone()));
            crates.others.push(Crate {
                name,
                entry,
                local: true,
            });
        }
    }
    names.entry(root_dir.clone()).or_insert(None);
    for (dir, p) in &local.packages {
        for (dep, rename) in &p.path_deps {
            let (Some(rename), Some(Some(target))) = (rename, names.get(&canonical(dep)).cloned())
            else {
                continue;
            };
            let name = rename.replace('-', "_");
            if name != target {
                aliases.insert(Alias {
                    user: names.get(dir).cloned().flatten(),
                    name,
                    target,
                });
            }
        }
    }
    registry_crates(root, &local, &mut names, &mut crates, &mut aliases);
    crates.aliases = aliases.into_iter().collect();
    crates
        .others
        .sort_by(|a, b| a.name.cmp(&b.name).then(a.entry.cmp(&b.entry)));
    Ok(crates)
}

/// What `cargo metadata --no-deps` tells of the local crates.
#[derive(Default)]
struct Local {
    own: Option<String>,
    /// The project and the local crates it brings in, by directory.
    packages: BTreeMap<PathBuf, Package>,
    /// The workspace root, when cargo was asked.
    workspace_root: Option<PathBuf>,
    /// The packages the manifests of these crates declare as dependencies.
    declared: Vec<String>,
}

/// The workspace's members (when `root` is its root) and the path dependencies, transitively.
fn local_crates(root: &Path, root_dir: &Path) -> Result<Local> {
    let mut packages: BTreeMap<PathBuf, Package> = BTreeMap::new();
    let manifest = root.join("Cargo.toml");
    let first = metadata(&manifest, true).map_err(|e| e.fatal(&manifest))?;
    let first = Metadata::of(&first);
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
            todo.extend(p.path_deps.iter().map(|(d, _)| d.clone()));
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
            None => Metadata::of(
                &metadata(&dep.join("Cargo.toml"), true)
                    .map_err(|e| e.fatal(&dep.join("Cargo.toml")))?,
            )
            .packages
            .into_iter()
            .find(|p| canonical(p.dir()) == dir)
            .ok_or_else(|| {
                Error::msg(format!(
                    "cargo metadata does not list the package at {}: check its Cargo.toml",
                    dep.display()
                ))
            })?,
        };
        todo.extend(p.path_deps.iter().map(|(d, _)| d.clone()));
        packages.insert(dir, p);
    }
    let declared = packages
        .values()
        .flat_map(|p| p.dep_names.iter().cloned())
        .collect();
    Ok(Local {
        own,
        packages,
        workspace_root: Some(first.workspace_root),
        declared,
    })
}

/// The dependency graph of the project at `root` (`cargo metadata` with dependencies), when
/// its lock says it may hold registry or git packages that derive; `None` when there is none to
/// look for, or when it cannot be had ([`Crates::note`] then says why).
fn dependency_graph(root: &Path, local: &Local, crates: &mut Crates) -> Option<serde_json::Value> {
    // the project's own lock, else its workspace's; a member of an enclosing workspace that
    // names no path crate was not asked for its workspace root, so the nearest ancestor whose
    // manifest declares a workspace stands in for it
    let enclosing = match local.workspace_root {
        Some(_) => None,
        None => root.ancestors().skip(1).find(|d| {
            crate::gate::read_text_lenient(&d.join("Cargo.toml"))
                .and_then(|m| m.parse::<toml::Table>().ok())
                .is_some_and(|t| t.contains_key("workspace"))
        }),
    };
    let lock_path = [Some(root), local.workspace_root.as_deref(), enclosing]
        .into_iter()
        .flatten()
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.is_file());
    let Some(lock) = lock_path.and_then(|p| crate::gate::read_text_lenient(&p)) else {
        crates.note = Some(format!(
            "{} has no Cargo.lock, so types from registry or git dependencies were not looked for: run `cargo generate-lockfile` (or build once), then run again",
            root.display()
        ));
        return None;
    };
    let lock = Lock::read(&lock);
    let stale = local
        .declared
        .iter()
        .any(|d| !OURS.contains(&d.as_str()) && !lock.has(d));
    if !lock.schema_crates && !stale {
        return None;
    }
    match metadata(&root.join("Cargo.toml"), false) {
        Ok(v) => Some(v),
        Err(Failure::Cargo(m)) => {
            crates.note = Some(format!(
                "types from registry or git dependencies were not looked for, as `cargo metadata --offline` fails: {m}; run `cargo fetch`, then run again"
            ));
            None
        }
        Err(Failure::Other(m)) => {
            crates.note = Some(format!(
                "types from registry or git dependencies were not looked for: {m}"
            ));
            None
        }
    }
}

/// The ids of the scanned crates (by `names`) and of the registry and git packages they reach
/// through packages that depend on one of [`DERIVES`], those first.
fn deriving<'m>(
    meta: &'m Metadata,
    by_id: &BTreeMap<&'m str, &'m Package>,
    edges: &BTreeMap<&str, Vec<(String, String)>>,
    names: &BTreeMap<PathBuf, Option<String>>,
) -> Vec<&'m str> {
    // from the crates already scanned, through registry and git packages that derive
    let mut todo: Vec<&str> = meta
        .packages
        .iter()
        .filter(|p| names.contains_key(&canonical(p.dir())))
        .map(|p| p.id.as_str())
        .collect();
    let mut seen: HashSet<&str> = todo.iter().copied().collect();
    let mut scanned: Vec<&str> = todo.clone();
    while let Some(id) = todo.pop() {
        for (_, dep) in edges.get(id).into_iter().flatten() {
            let Some(p) = by_id.get(dep.as_str()) else {
                continue;
            };
            if p.source.is_none() || !p.derives || OURS.contains(&p.name.as_str()) {
                continue;
            }
            if seen.insert(p.id.as_str()) {
                todo.push(p.id.as_str());
                scanned.push(p.id.as_str());
            }
        }
    }
    scanned
}

/// Adds the registry and git packages the scanned crates depend on that depend on one of
/// [`DERIVES`], transitively through such packages, and the names the scanned crates give
/// each other. Never fails: what stops it is kept in [`Crates::note`].
fn registry_crates(
    root: &Path,
    local: &Local,
    names: &mut BTreeMap<PathBuf, Option<String>>,
    crates: &mut Crates,
    aliases: &mut BTreeSet<Alias>,
) {
    let Some(graph) = dependency_graph(root, local, crates) else {
        return;
    };
    let meta = Metadata::of(&graph);
    let by_id: BTreeMap<&str, &Package> =
        meta.packages.iter().map(|p| (p.id.as_str(), p)).collect();
    let edges = resolve_edges(&graph);
    let scanned = deriving(&meta, &by_id, &edges, names);
    let mut taken: HashSet<String> = crates.others.iter().map(|c| c.name.clone()).collect();
    taken.extend(crates.own.clone());
    for id in &scanned {
        let p = by_id[id];
        let dir = canonical(p.dir());
        if names.contains_key(&dir) {
            continue;
        }
        let Some((name, entry)) = p.lib_file() else {
            continue;
        };
        // two versions of one crate: the first found is read
        if taken.insert(name.clone()) {
            names.insert(dir, Some(name.clone()));
            crates.others.push(Crate {
                name,
                entry,
                local: false,
            });
        }
    }
    for id in &scanned {
        let user = &by_id[id];
        let Some(user_name) = names.get(&canonical(user.dir())).cloned() else {
            continue;
        };
        for (name, dep) in edges.get(id).into_iter().flatten() {
            let target = by_id
                .get(dep.as_str())
                .and_then(|p| names.get(&canonical(p.dir())).cloned().flatten());
            if let Some(target) = target
                && *name != target
            {
                aliases.insert(Alias {
                    user: user_name.clone(),
                    name: name.clone(),
                    target,
                });
            }
        }
    }
}

/// Per package id, its dependencies other than dev-dependencies: the name the package uses
/// for each (its rename, else the library's name) and the dependency's id.
fn resolve_edges(graph: &serde_json::Value) -> BTreeMap<&str, Vec<(String, String)>> {
    let mut edges = BTreeMap::new();
    let nodes = graph
        .pointer("/resolve/nodes")
        .and_then(|n| n.as_array())
        .map(Vec::as_slice)
        .unwrap_or_default();
    for node in nodes {
        let Some(id) = node.get("id").and_then(|i| i.as_str()) else {
            continue;
        };
        let deps = node
            .get("deps")
            .and_then(|d| d.as_array())
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|d| {
                d.get("dep_kinds")
                    .and_then(|k| k.as_array())
                    .is_none_or(|ks| {
                        ks.iter()
                            .any(|k| k.get("kind").is_none_or(|k| k.is_null() || k == "build"))
                    })
            })
            .filter_map(|d| {
                Some((
                    d.get("name")?.as_str()?.to_string(),
                    d.get("pkg")?.as_str()?.to_string(),
                ))
            })
            .collect();
        edges.insert(id, deps);
    }
    edges
}

/// What `manifests` needs of a `Cargo.lock`, found by substring search rather than by parsing
/// the lock.
struct Lock<'a> {
    text: &'a str,
    /// Whether a package from a registry or git depends on one of [`DERIVES`].
    schema_crates: bool,
}

impl<'a> Lock<'a> {
    fn read(text: &'a str) -> Lock<'a> {
        let schema_crates = DERIVES.iter().any(|derive| {
            let quoted = format!("\"{derive}");
            text.match_indices(&quoted).any(|(at, _)| {
                let after = text[at + quoted.len()..].chars().next();
                // a dependency entry (`"name"`, `"name version (source)"`), not a package's name
                if !matches!(after, Some('"' | ' ')) || text[..at].ends_with("name = ") {
                    return false;
                }
                let start = text[..at].rfind("[[package]]").unwrap_or(0);
                let end = text[at..].find("\n[").map_or(text.len(), |n| at + n);
                text[start..end].contains("\nsource = ")
            })
        });
        Lock {
            text,
            schema_crates,
        }
    }

    /// Whether the lock holds a package of this name.
    fn has(&self, name: &str) -> bool {
        self.text.contains(&format!("\nname = \"{name}\"\n"))
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[derive(Debug, Default)]
struct Package {
    id: String,
    name: String,
    /// Where it comes from (a registry or git); `None` for a local package.
    source: Option<String>,
    manifest_path: PathBuf,
    /// (kind, name, root file) of each target.
    targets: Vec<(String, String, PathBuf)>,
    /// Path dependencies (not dev-dependencies) and the name given to each, when renamed.
    path_deps: Vec<(PathBuf, Option<String>)>,
    /// The package name of every dependency but dev-dependencies.
    dep_names: Vec<String>,
    /// Whether it depends on one of [`DERIVES`] (not as a dev-dependency).
    derives: bool,
}

impl Package {
    fn dir(&self) -> &Path {
        self.manifest_path.parent().unwrap_or(Path::new(""))
    }

    fn lib_name(&self) -> Option<String> {
        self.lib_file().map(|(name, _)| name)
    }

    /// The library's name and root file.
    fn lib_file(&self) -> Option<(String, PathBuf)> {
        self.targets
            .iter()
            .find(|(kind, _, _)| kind == "lib" || kind == "proc-macro")
            .map(|(_, name, file)| (name.replace('-', "_"), file.clone()))
    }

    /// The library's name and root file, else the first binary's.
    fn root_file(&self) -> Option<(String, PathBuf)> {
        let bin = self.targets.iter().find(|(kind, _, _)| kind == "bin");
        self.lib_file()
            .or_else(|| bin.map(|(_, name, file)| (name.replace('-', "_"), file.clone())))
            .or_else(|| {
                let lib = self.dir().join("src/lib.rs");
                lib.is_file().then(|| (self.name.replace('-', "_"), lib))
            })
    }
}

/// Why `cargo metadata` gave nothing.
enum Failure {
    /// cargo's own message (its first line).
    Cargo(String),
    /// It did not run, or printed no JSON: the whole message.
    Other(String),
}

impl Failure {
    /// The message when `cargo metadata` on `manifest` is needed to go on.
    fn fatal(self, manifest: &Path) -> Error {
        Error::msg(match self {
            Failure::Cargo(m) => format!(
                "`cargo metadata` fails on {}: {m}; fix the manifest, then run again",
                manifest.display()
            ),
            Failure::Other(m) => m,
        })
    }
}

struct Metadata {
    workspace_root: PathBuf,
    packages: Vec<Package>,
}

/// `cargo metadata --offline` of the manifest at `manifest`, with `--no-deps` when `no_deps`.
fn metadata(manifest: &Path, no_deps: bool) -> Result<serde_json::Value, Failure> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(&cargo);
    // cargo reads `.cargo/config.toml` (a `[patch]`, a replaced registry) from where it runs
    let manifest = &std::path::absolute(manifest).unwrap_or_else(|_| manifest.to_path_buf());
    if let Some(dir) = manifest.parent().filter(|d| d.is_dir()) {
        cmd.current_dir(dir);
    }
    cmd.arg("metadata");
    if no_deps {
        cmd.arg("--no-deps");
    }
    let out = cmd
        .args(["--offline", "--format-version", "1", "--manifest-path"])
        .arg(manifest)
        .output()
        .map_err(|e| {
            Failure::Other(format!("cannot run `{cargo} metadata` to find the workspace's crates: {e}; install cargo or put it on PATH"))
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        return Err(Failure::Cargo(
            first.trim().trim_start_matches("error: ").to_string(),
        ));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| Failure::Other(format!("`cargo metadata` printed no JSON: {e}")))
}

impl Metadata {
    fn of(v: &serde_json::Value) -> Metadata {
        let str_of = |v: &serde_json::Value, k: &str| {
            v.get(k)
                .and_then(|s| s.as_str())
                .unwrap_or_default()
                .to_string()
        };
        let array = |v: &serde_json::Value, k: &str| -> Vec<serde_json::Value> {
            v.get(k)
                .and_then(|a| a.as_array())
                .cloned()
                .unwrap_or_default()
        };
        let package = |p: &serde_json::Value| {
            let deps = array(p, "dependencies");
            // dev-dependencies build neither the crate nor its schemas
            let used = || {
                deps.iter()
                    .filter(|d| d.get("kind").is_none_or(|k| k.is_null() || k == "build"))
            };
            Package {
                id: str_of(p, "id"),
                name: str_of(p, "name"),
                source: p.get("source").and_then(|s| s.as_str()).map(str::to_string),
                manifest_path: PathBuf::from(str_of(p, "manifest_path")),
                targets: array(p, "targets")
                    .iter()
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
                    .collect(),
                path_deps: used()
                    .filter(|d| !OURS.contains(&str_of(d, "name").as_str()))
                    .filter_map(|d| {
                        let path = d.get("path")?.as_str()?;
                        let rename = d.get("rename").and_then(|r| r.as_str());
                        Some((PathBuf::from(path), rename.map(str::to_string)))
                    })
                    .collect(),
                dep_names: used().map(|d| str_of(d, "name")).collect(),
                derives: used().any(|d| DERIVES.contains(&str_of(d, "name").as_str())),
            }
        };
        Metadata {
            workspace_root: PathBuf::from(str_of(v, "workspace_root")),
            packages: array(v, "packages").iter().map(package).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_tells_packages_from_a_source_that_depend_on_ours() {
        let lock = "version = 4\n\n\
            [[package]]\nname = \"guestbook\"\nversion = \"0.1.0\"\ndependencies = [\n \"operator-gen-runtime\",\n \"shared-api\",\n]\n\n\
            [[package]]\nname = \"serde\"\nversion = \"1.0.0\"\nsource = \"registry+https://example.invalid/index\"\n\n\
            [[package]]\nname = \"shared-api\"\nversion = \"0.1.0\"\nsource = \"registry+https://example.invalid/index\"\ndependencies = [\n \"operator-gen-runtime 0.1.0 (registry+https://example.invalid/index)\",\n \"serde\",\n]\n";
        let read = Lock::read(lock);
        assert!(read.schema_crates);
        assert!(read.has("serde") && read.has("shared-api") && !read.has("serde_json"));
        // a local package on the runtime is scanned as a path dependency, not from here
        let local = lock.replace(
            "source = \"registry+https://example.invalid/index\"\ndependencies",
            "dependencies",
        );
        assert!(!Lock::read(&local).schema_crates);
        // one line, as a hand-written lock may have it
        let inline = "[[package]]\nname = \"a\"\nsource = \"git+file:///a\"\ndependencies = [\"operator-gen-macros\"]\n";
        assert!(Lock::read(inline).schema_crates);
        assert!(!Lock::read("[[package]]\nname = \"a\"\nsource = \"x\"\n").schema_crates);
        // the runtime itself from a registry, and a package of a longer name on it
        let runtime = "[[package]]\nname = \"operator-gen-runtime\"\nversion = \"0.1.0\"\nsource = \"registry+https://example.invalid/index\"\n\n\
            [[package]]\nname = \"b\"\nsource = \"x\"\ndependencies = [\n \"operator-gen-runtime-extras\",\n]\n";
        assert!(!Lock::read(runtime).schema_crates);
    }
}
