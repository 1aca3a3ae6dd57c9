//! `operator-gen manifests`: scans the project's sources and writes the CRDs, the RBAC role and
//! the webhook configurations, all through codegen's emitters.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use operator_gen_codegen::crd::{self, VersionInput};
use operator_gen_codegen::ir::Marker;
use operator_gen_codegen::markers::Kind;
use operator_gen_codegen::rbac;
use operator_gen_codegen::schema::{Scope, Settings};
use operator_gen_codegen::webhook;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::printer::Printer;
use crate::scaffold::{IfExists, Scaffold};
use crate::scan::{self, Diagnostic, ScanScope, Universe};
use crate::sources::Cache as TextCache;
use serde::{Deserialize, Serialize};

/// Options of `operator-gen manifests`.
#[derive(Clone, Debug, Default)]
pub struct ManifestsOptions {
    /// Project root (default: the nearest directory upwards holding `PROJECT`).
    pub root: Option<PathBuf>,
    /// Truncate descriptions longer than this.
    pub max_desc_len: Option<usize>,
    /// Allow float and unsigned fields.
    pub allow_dangerous_types: bool,
    /// Name of the generated (Cluster)Role.
    pub role_name: String,
    /// Whether and where the scan keeps its cache of parsed files.
    pub cache: Cache,
    /// Write a CRD bigger than etcd's request limit ([`MAX_CRD_BYTES`]) instead of refusing it,
    /// as controller-gen does; no command-line flag sets it (the apiserver cannot store such a
    /// CRD), the differential test does, to compare schemas controller-gen writes at any size.
    pub allow_oversized_crds: bool,
}

/// Where the scan's cache of parsed files lives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Cache {
    /// No cache: every file is parsed (the library's default).
    #[default]
    Off,
    /// In the project's target directory, see [`cache_dir`] (the command line's default).
    Project,
    /// In this directory.
    At(PathBuf),
}

/// The scan cache of the project at `root`: `operator-gen/scan-cache` in cargo's target
/// directory (`$CARGO_TARGET_DIR`, else `target/` in the project).
pub fn cache_dir(root: &Path) -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
        Some(t) => std::env::current_dir()
            .map(|cwd| cwd.join(&t))
            .unwrap_or_else(|_| PathBuf::from(t)),
        None => root.join("target"),
    };
    target.join("operator-gen").join("scan-cache")
}

const MIB: f64 = 1024.0 * 1024.0;

/// The largest object etcd stores by default (`--max-request-bytes`, 1.5 MiB): a bigger CRD
/// cannot be created.
pub const MAX_CRD_BYTES: usize = 3 << 19;

/// The files `manifests` writes, relative to the project root, with their contents.
pub type Outputs = BTreeMap<String, String>;

fn project_root(opts: &ManifestsOptions) -> Result<PathBuf> {
    let start = match &opts.root {
        Some(r) => r.clone(),
        None => std::env::current_dir().map_err(|e| Error::io("read", Path::new("."), e))?,
    };
    let mut dir = start.as_path();
    loop {
        if dir.join(crate::project::FILE_NAME).is_file() {
            return Ok(dir.to_path_buf());
        }
        match dir.parent() {
            Some(p) => dir = p,
            None => {
                return Err(Error::msg(format!(
                    "no PROJECT file in {} or above; run `operator-gen manifests` inside a project made by `operator-gen init`",
                    start.display()
                )));
            }
        }
    }
}

fn diagnostics_error(diags: Vec<Diagnostic>) -> Error {
    Error::from(diags)
}

/// Everything `manifests` would write for the crate rooted at `root`, computed in memory.
pub fn generate(root: &Path, opts: &ManifestsOptions) -> Result<Outputs> {
    let (out, mut scanned, crds) = generate_keeping(root, opts, &Given::of(root)?)?;
    let summaries = scanned.1.take_fresh();
    scanned.store_caches(summaries, crds);
    if let Some(stamps) = scanned.1.stamps() {
        stamps.store();
    }
    Ok(out)
}

/// What a scan built: the modules and their summaries. [`run`] hands it to the process's exit
/// instead of freeing it value by value, which took a third of a run with nothing to do.
struct Scanned(
    #[allow(dead_code)] Universe,
    scan::PendingCache,
    Option<TextCache>,
);

impl Scanned {
    /// Writes the scan's new cache entries: file summaries (taken from the scan with
    /// [`scan::PendingCache::take_fresh`]) and CRDs.
    fn store_caches(&self, summaries: NewEntries, crds: NewEntries) {
        self.1.store_fresh(summaries);
        if let Some(cache) = &self.2
            && !crds.is_empty()
        {
            cache.store(crds);
        }
    }
}

/// What a scan starts from besides the files it reads: the crate's entry files and the
/// other crates it brings in.
struct Given {
    entries: Vec<PathBuf>,
    crates: crate::crates::Crates,
}

impl Given {
    fn of(root: &Path) -> Result<Given> {
        let entries: Vec<PathBuf> = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|e| root.join(e))
            .filter(|p| p.is_file())
            .collect();
        let crates = crate::crates::discover(root).map_err(Error::msg)?;
        if entries.is_empty() && crates.others.is_empty() {
            return Err(Error::msg(format!(
                "{} has neither src/main.rs nor src/lib.rs; run manifests at the project root",
                root.display()
            )));
        }
        Ok(Given { entries, crates })
    }

    /// Everything a run's outputs depend on besides the files the scan reads, as text for
    /// [`crate::rerun`]: this, and the options that change what is emitted.
    fn describe(&self, opts: &ManifestsOptions) -> String {
        format!(
            "{:?}\0{:?}\0{:?}\0{:?}\0{:?}\0{:?}",
            self.entries,
            self.crates,
            opts.max_desc_len,
            opts.allow_dangerous_types,
            opts.role_name,
            opts.allow_oversized_crds
        )
    }
}

/// The scan cache's directory for `opts` (`None`: no cache).
fn cache_dir_of(root: &Path, opts: &ManifestsOptions) -> Option<PathBuf> {
    match &opts.cache {
        Cache::Off => None,
        Cache::Project => Some(cache_dir(root)),
        Cache::At(dir) => Some(dir.clone()),
    }
}

/// Cache entries computed by a run, by key, to be written once it succeeded.
type NewEntries = Vec<(u128, String)>;

/// [`generate`], also returning the scan's structures for the caller to drop or leak, and the
/// CRDs emitted anew, for [`Scanned::store_caches`].
fn generate_keeping(
    root: &Path,
    opts: &ManifestsOptions,
    given: &Given,
) -> Result<(Outputs, Scanned, NewEntries)> {
    let (entries, crates) = (&given.entries, &given.crates);
    let scan_settings = scan::ScanSettings {
        cache_dir: cache_dir_of(root, opts),
    };
    // a type not found may be in a crate that could not be looked for: say why
    let noted = |diags: Vec<Diagnostic>| match &crates.note {
        Some(note) if diags.iter().any(|d| d.message.contains("has no schema")) => {
            Error::msg(format!("{}\nnote: {note}", diagnostics_error(diags)))
        }
        _ => diagnostics_error(diags),
    };
    let (universe, pending) =
        scan::scan_crates(root, entries, crates, &scan_settings).map_err(noted)?;
    let settings = Settings {
        allow_dangerous_types: opts.allow_dangerous_types,
        max_desc_len: opts.max_desc_len,
    };
    let role_name = if opts.role_name.is_empty() {
        "manager-role"
    } else {
        opts.role_name.as_str()
    };
    let max_crd_bytes = (!opts.allow_oversized_crds).then_some(MAX_CRD_BYTES);
    let crds = scan_settings
        .cache_dir
        .clone()
        .map(|dir| TextCache::new(dir, CRD_CACHE.0, CRD_CACHE.1));
    let emitting = Emitting {
        universe: &universe,
        settings: &settings,
        max_crd_bytes,
        cache: crds.as_ref(),
    };
    let (out, fresh) = scan::on_scan_stack(|| emit(&emitting, role_name)).map_err(noted)?;
    Ok((out, Scanned(universe, pending, crds), fresh))
}

/// The manifests of a scanned crate (a CRD bigger than [`MAX_CRD_BYTES`] is an error).
pub fn outputs(
    universe: &Universe,
    settings: &Settings,
    role_name: &str,
) -> std::result::Result<Outputs, Vec<Diagnostic>> {
    let emitting = Emitting {
        universe,
        settings,
        max_crd_bytes: Some(MAX_CRD_BYTES),
        cache: None,
    };
    scan::on_scan_stack(|| emit(&emitting, role_name)).map(|(out, _)| out)
}

/// The CRD cache's file in the scan cache's directory, and the format of its entries.
const CRD_CACHE: (&str, &str) = ("crds", "operator-gen crd v1");

/// What every kind's CRD is emitted from.
struct Emitting<'u> {
    universe: &'u Universe,
    settings: &'u Settings,
    max_crd_bytes: Option<usize>,
    /// CRDs emitted by earlier runs, each with the modules it depended on (`None`: no cache).
    cache: Option<&'u TextCache>,
}

/// A cached CRD: the content of each module its emission looked up (`None`: the module did
/// not exist) and what it emitted.
#[derive(Serialize, Deserialize)]
struct CachedCrd {
    depends_on: Vec<(Vec<String>, Option<String>)>,
    file: String,
    yaml: String,
}

/// A custom resource's spec struct and the module it is defined in.
type Resource<'u> = (&'u Vec<String>, &'u operator_gen_codegen::ir::TypeDef);

/// The manifests, and the CRDs emitted anew as cache entries.
type Emitted = (Outputs, Vec<(u128, String)>);

fn emit(e: &Emitting, role_name: &str) -> std::result::Result<Emitted, Vec<Diagnostic>> {
    let universe = e.universe;
    let mut out = Outputs::new();
    let mut fresh = Vec::new();
    let mut diags = Vec::new();
    // group versions of one kind: (group, kind) → specs
    let mut kinds: BTreeMap<(String, String), Vec<Resource>> = BTreeMap::new();
    for (module, def) in universe.resources() {
        let Some(r) = &def.resource else { continue };
        if skipped(universe, module) {
            continue;
        }
        if let Some(markers) = universe.module_markers.get(module) {
            for m in markers {
                let (given, what) = match m.kind {
                    Kind::GroupName => (&r.group, "group"),
                    Kind::VersionName => (&r.version, "version"),
                    _ => continue,
                };
                if m.value.as_str() != Some(given.as_str()) {
                    let file = universe
                        .modules
                        .get(module)
                        .map(|m| m.file.clone())
                        .unwrap_or_default();
                    diags.push(located(&file, def.loc, format!(
                        "`{}` says {what} `{given}` but its module says `+{}={}`: make them agree",
                        def.name, m.name(), m.value.as_str().unwrap_or_default()
                    )));
                }
            }
        }
        kinds
            .entry((r.group.clone(), r.kind.clone()))
            .or_default()
            .push((module, def));
    }
    // each kind's CRD is independent of the others': emitted in parallel, kept in kind order
    let specs: Vec<&Vec<Resource>> = kinds.values().collect();
    let emitted = crate::sources::in_pool(|| {
        specs
            .par_iter()
            .map(|specs| cached_kind(e, specs))
            .collect::<Vec<_>>()
    });
    for (crd, kind_diags, entry) in emitted {
        out.extend(crd);
        diags.extend(kind_diags);
        fresh.extend(entry);
    }
    let package_markers: Vec<&Marker> = universe.package_markers.iter().map(|(_, m)| m).collect();
    match rbac::role_file(&package_markers, role_name) {
        Ok(text) => {
            out.insert("config/rbac/role.yaml".to_string(), text);
        }
        Err(errors) => diags.extend(errors.into_iter().map(|e| {
            let (file, m) = &universe.package_markers[e.marker.unwrap_or_default()];
            located(file, m.loc, e.message)
        })),
    }
    let webhook_markers: Vec<&(PathBuf, Marker)> = universe
        .package_markers
        .iter()
        .filter(|(_, m)| webhook::is_webhook_marker(m.kind))
        .collect();
    if !webhook_markers.is_empty() {
        let markers: Vec<Marker> = webhook_markers.iter().map(|(_, m)| m.clone()).collect();
        match webhook::configurations(&markers) {
            Ok(objects) => {
                out.insert(
                    "config/webhook/manifests.yaml".to_string(),
                    webhook::to_yaml(&objects),
                );
            }
            Err(errors) => diags.extend(errors.into_iter().map(|e| {
                let (file, m) = webhook_markers[e.marker.unwrap_or_default()];
                located(file, m.loc, e.message)
            })),
        }
    }
    if diags.is_empty() {
        Ok((out, fresh))
    } else {
        Err(diags)
    }
}

/// One kind's CRD as [`emit_kind`] gives it, taken from the cache when every module its last
/// emission looked up is as it was then (same content, or still missing), else emitted while
/// the lookups are recorded and returned with a new cache entry. The entry's key names the
/// kind, its versions' spec structs, the settings and the crates the scan read, so a change to
/// any of them is a miss; a module read without a content key (no scan cache) is never cached.
fn cached_kind(e: &Emitting, specs: &[Resource]) -> (Crd, Vec<Diagnostic>, Option<(u128, String)>) {
    let Some(cache) = e.cache else {
        let (crd, diags) = emit_kind(e, specs);
        return (crd, diags, None);
    };
    let u = e.universe;
    let identity = format!(
        "{:?}\0{:?}\0{:?}\0{:?}\0{:?}\0{:?}",
        specs
            .iter()
            .map(|(m, d)| (
                m,
                &d.name,
                d.resource.as_ref().map(|r| (&r.group, &r.kind, &r.version))
            ))
            .collect::<Vec<_>>(),
        e.settings,
        e.max_crd_bytes,
        u.externs,
        u.aliases,
        u.foreign,
    );
    let key = cache.key(identity.as_bytes());
    let content = |path: &Vec<String>| -> Option<Option<String>> {
        match u.modules.get(path) {
            None => Some(None),
            Some(m) => m.content.map(|c| Some(format!("{c:032x}"))),
        }
    };
    if let Some(hit) = cache
        .get(key)
        .and_then(|text| serde_json::from_str::<CachedCrd>(text).ok())
        .filter(|c| {
            c.depends_on
                .iter()
                .all(|(path, was)| content(path).as_ref() == Some(was))
        })
    {
        return (Some((hit.file, hit.yaml)), Vec::new(), None);
    }
    let ((crd, diags), mut seen) = scan::consulted(|| emit_kind(e, specs));
    seen.extend(specs.iter().map(|(m, _)| (*m).clone()));
    let entry = match &crd {
        Some((file, yaml)) if diags.is_empty() => seen
            .into_iter()
            .map(|path| content(&path).map(|c| (path, c)))
            .collect::<Option<Vec<_>>>()
            .and_then(|depends_on| {
                serde_json::to_string(&CachedCrd {
                    depends_on,
                    file: file.clone(),
                    yaml: yaml.clone(),
                })
                .ok()
            })
            .map(|text| (key, text)),
        _ => None,
    };
    (crd, diags, entry)
}

/// One kind's CRD: its file name and text, or none.
type Crd = Option<(String, String)>;

/// One kind's CRD (file name and text), or the problems that keep it from being written.
fn emit_kind(e: &Emitting, specs: &[Resource]) -> (Crd, Vec<Diagnostic>) {
    let (universe, settings, max_crd_bytes) = (e.universe, e.settings, e.max_crd_bytes);
    let mut diags = Vec::new();
    let scopes: Vec<ScanScope> = specs
        .iter()
        .map(|(m, d)| ScanScope {
            universe,
            module: (*m).clone(),
            def: d,
        })
        .collect();
    let mut inputs = Vec::new();
    let mut failed = false;
    for scope in &scopes {
        let status = match scope.def.resource.as_ref().and_then(|r| r.status.clone()) {
            Some(s) => match scope.resolve(&s) {
                Ok(st) => Some(st),
                Err(Diagnostic { message: m, .. }) => {
                    diags.push(located(&file_of(universe, &scope.module), scope.def.loc, m));
                    failed = true;
                    None
                }
            },
            None => None,
        };
        inputs.push(VersionInput {
            spec: scope as &dyn Scope,
            status,
        });
    }
    if failed {
        return (None, diags);
    }
    match crd::crd(&inputs, settings) {
        Ok(Some(c)) => {
            let yaml = crd::to_yaml(&c);
            if max_crd_bytes.is_some_and(|max| yaml.len() > max) {
                let (module, def) = specs[0];
                diags.push(located(
                    &file_of(universe, module),
                    def.loc,
                    format!(
                        "the CRD of `{}` would be {:.1} MiB, more than the {:.1} MiB the apiserver can store (etcd's request limit); shorten its doc comments or pass --max-desc-len",
                        def.name,
                        yaml.len() as f64 / MIB,
                        MAX_CRD_BYTES as f64 / MIB
                    ),
                ));
                return (None, diags);
            }
            (
                Some((format!("config/crd/bases/{}", crd::file_name(&c)), yaml)),
                diags,
            )
        }
        Ok(None) => (None, diags),
        Err(e) => {
            // the scan's scopes name their file; a definition without one is the first spec's
            let file = e
                .file
                .clone()
                .or_else(|| specs.first().map(|(m, _)| file_of(universe, m)))
                .unwrap_or_default();
            diags.push(located(&file, e.loc, e.message));
            (None, diags)
        }
    }
}

/// Whether `+kubebuilder:skip` stands on the module or one of its ancestors: no CRD for it.
fn skipped(universe: &Universe, module: &[String]) -> bool {
    (0..=module.len()).any(|n| {
        universe
            .module_markers
            .get(&module[..n])
            .is_some_and(|ms| operator_gen_codegen::ir::has_marker(ms, Kind::Skip))
    })
}

fn file_of(universe: &Universe, module: &[String]) -> PathBuf {
    universe
        .modules
        .get(module)
        .map(|m| m.file.clone())
        .unwrap_or_default()
}

fn located(file: &Path, loc: Option<operator_gen_codegen::ir::Loc>, message: String) -> Diagnostic {
    let loc = loc.unwrap_or_default();
    Diagnostic::in_file(file, loc.line, loc.column, message)
}

/// Generate the project's manifests and write the ones that changed.
pub fn run(opts: &ManifestsOptions, printer: &Printer) -> Result<()> {
    // the scan's threads start while the project is looked up; a run that needs no scan
    // leaves them idle
    crate::sources::pool();
    let root = project_root(opts)?;
    let _lock = crate::transaction::lock(&root, printer)?;
    let given = Given::of(&root)?;
    let described = given.describe(opts);
    let cache_dir = cache_dir_of(&root, opts);
    if let Some(dir) = &cache_dir
        && crate::rerun::nothing_changed(&root, dir.clone(), &described)
    {
        return Ok(());
    }
    let (outputs, mut scanned, crds) = generate_keeping(&root, opts, &given)?;
    let summaries = scanned.1.take_fresh();
    // the new cache entries are written beside the outputs, by another of the scan's threads
    let kept = &scanned;
    let (_, done) = crate::sources::in_pool(|| {
        rayon::join(
            move || kept.store_caches(summaries, crds),
            || write_outputs(&root, outputs, kept, printer, &described, cache_dir),
        )
    });
    // the command ends here: the process's exit frees the scan's structures at once
    std::mem::forget(scanned);
    done
}

/// Writes the outputs that changed, then (once they are written) the stamps and the record of
/// this run.
fn write_outputs(
    root: &Path,
    outputs: Outputs,
    scanned: &Scanned,
    printer: &Printer,
    described: &str,
    cache_dir: Option<PathBuf>,
) -> Result<()> {
    let stamps = scanned.1.stamps();
    let mut scaffold = Scaffold::new(root);
    // an output whose stamp says the file holds it already is not read back
    let mut checked = Vec::new();
    let mut written = Vec::new();
    for (rel, text) in outputs {
        let key = stamps.map(|s| s.key(text.as_bytes()));
        written.extend(key.map(|k| (rel.clone(), k)));
        if let (Some(s), Some(k)) = (stamps, key)
            && s.unchanged(&root.join(&rel), k)
        {
            continue;
        }
        checked.extend(key.map(|k| (root.join(&rel), k)));
        scaffold.file(&rel, text, IfExists::Overwrite)?;
    }
    let done = scaffold.commit(printer);
    if let (Some(s), Ok(())) = (stamps, &done) {
        for (path, key) in &checked {
            s.holds(path, *key);
        }
        // two files, written at once
        crate::sources::in_pool(|| {
            rayon::join(
                || s.store(),
                || {
                    if let (Some(dir), Some(read)) = (cache_dir, scanned.1.read_record()) {
                        let (cache, record) =
                            crate::rerun::Record::new(dir, described, read, written);
                        record.store(&cache);
                    }
                },
            )
        });
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"
pub mod api {
    pub mod v1 {
        //! +groupName=ship.example.com
        //! +versionName=v1

        /// FrigateSpec is the desired state of a Frigate.
        #[derive(CustomResource)]
        #[k8s(group = "ship.example.com", version = "v1", kind = "Frigate")]
        pub struct FrigateSpec {
            pub size: i32,
        }
    }
}
"#;

    /// The files `manifests` writes for `source`, or its messages.
    fn run(source: &str) -> std::result::Result<Vec<String>, Vec<String>> {
        let universe = scan::scan_source(Path::new("src/lib.rs"), source)
            .map_err(|d| d.iter().map(|d| d.message.clone()).collect::<Vec<_>>())?;
        outputs(&universe, &Settings::default(), "manager-role")
            .map(|o| o.into_keys().collect())
            .map_err(|d| d.iter().map(|d| d.message.clone()).collect())
    }

    #[test]
    fn module_markers_steer_the_scan() {
        let crd = "config/crd/bases/ship.example.com_frigates.yaml";
        let role = "config/rbac/role.yaml";
        assert_eq!(run(SOURCE), Ok(vec![crd.to_string(), role.to_string()]));
        // +kubebuilder:skip on a module drops the CRDs of its kinds and of its submodules'
        let skipped = SOURCE.replace("pub mod api {", "pub mod api {\n    //! +kubebuilder:skip");
        assert_eq!(run(&skipped), Ok(vec![role.to_string()]));
        let skipped_here = SOURCE.replace(
            "//! +versionName=v1",
            "//! +versionName=v1\n//! +kubebuilder:skip",
        );
        assert_eq!(run(&skipped_here), Ok(vec![role.to_string()]));
        // +groupName and +versionName must agree with the kind's own
        let group = SOURCE.replace("+groupName=ship.example.com", "+groupName=boat.example.com");
        assert_eq!(
            run(&group),
            Err(vec![
                "`FrigateSpec` says group `ship.example.com` but its module says `+groupName=boat.example.com`: make them agree".to_string()
            ])
        );
        let version = SOURCE.replace("+versionName=v1", "+versionName=v2");
        assert_eq!(
            run(&version),
            Err(vec![
                "`FrigateSpec` says version `v1` but its module says `+versionName=v2`: make them agree".to_string()
            ])
        );
        // a `#[cfg(test)]` module is not the operator's: its kinds and RBAC markers are not read
        let with_tests = format!(
            "{SOURCE}\n#[cfg(test)]\nmod tests {{\n    //! +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n    #[derive(CustomResource)]\n    #[k8s(group = \"test.example.com\", version = \"v1\", kind = \"Probe\")]\n    pub struct ProbeSpec {{ pub a: i32 }}\n}}\n"
        );
        assert_eq!(run(&with_tests), run(SOURCE));
        let roles = |source: &str| {
            let universe = scan::scan_source(Path::new("src/lib.rs"), source).expect("scans");
            let out = outputs(&universe, &Settings::default(), "manager-role").expect("emits");
            out["config/rbac/role.yaml"].clone()
        };
        assert_eq!(roles(&with_tests), roles(SOURCE));
        assert!(
            roles(&with_tests.replace("#[cfg(test)]\n", "")).contains("deployments"),
            "the same module outside cfg(test) is read"
        );
        // on an item's outer docs they describe nothing
        let misplaced = SOURCE.replace(
            "pub mod v1 {",
            "/// +groupName=ship.example.com\n    pub mod v1 {",
        );
        assert_eq!(
            run(&misplaced),
            Err(vec![
                "marker `+groupName` describes a module: move it to the module's `//!` docs"
                    .to_string()
            ])
        );
    }
}
