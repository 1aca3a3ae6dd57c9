//! `operator-gen manifests`: one pipeline from the project's sources to its CRDs, RBAC role and
//! webhook configurations, all through codegen's emitters:
//!
//! 1. `read`: the crate's entry files and the other crates it brings in, then every file of
//!    their module trees, read in parallel one level at a time;
//! 2. `summary`: each file's summary, from its text alone (its types, `use` declarations,
//!    module declarations, markers and errors);
//! 3. `universe`: the modules assembled from the summaries, and the resolution of paths;
//! 4. `emit`: each kind's CRD, the role and the webhook configurations;
//! 5. `write`: the outputs that changed, written at once.
//!
//! What makes a run incremental is one layer the stages ask and tell (`incremental`): kept
//! on disk by `cache`, absent (`incremental::NoCache`) when no cache is asked for.

pub mod bounded;
mod cache;
mod crates;
mod diag;
mod emit;
mod incremental;
mod lexer;
mod read;
mod size;
mod summary;
mod threads;
mod universe;
mod write;

use std::path::{Path, PathBuf};

use operator_gen_codegen::schema::Settings;

use crate::error::{Error, Result};
use crate::printer::Printer;
use cache::DiskCache;
use incremental::{Incremental, NoCache};
use read::{Files, Given};

pub use bounded::MAX_NESTING;
pub use diag::Diagnostic;
pub use emit::Outputs;
pub use summary::Module;
pub(crate) use summary::attribute_string;
pub(crate) use summary::blank_unread;
pub(crate) use threads::on_scan_stack;
pub use universe::{Universe, scan_source};

/// Options of `operator-gen manifests`.
#[derive(Clone, Debug, Default)]
pub struct ManifestsOptions {
    /// Project root (default: the nearest directory upwards holding `PROJECT`).
    pub root: Option<PathBuf>,
    /// Truncate descriptions longer than this.
    pub max_desc_len: Option<usize>,
    /// Allow float fields.
    pub allow_dangerous_types: bool,
    /// Name of the generated (Cluster)Role.
    pub role_name: String,
    /// Whether and where the scan keeps its cache of parsed files.
    pub cache: Cache,
    /// The largest CRD written, in bytes as the apiserver stores it (see [`stored_bytes`]);
    /// `None` for etcd's default request limit, [`MAX_CRD_BYTES`] (`--max-crd-size`).
    pub max_crd_size: Option<usize>,
    /// Write a CRD of any size, as controller-gen does; no command-line flag sets it, the
    /// differential test does, to compare schemas controller-gen writes at any size.
    pub allow_oversized_crds: bool,
}

impl ManifestsOptions {
    /// The largest CRD written (`None`: any size).
    fn crd_limit(&self) -> Option<usize> {
        (!self.allow_oversized_crds).then(|| self.max_crd_size.unwrap_or(MAX_CRD_BYTES))
    }
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

pub use size::{MAX_CRD_BYTES, STORED_MARGIN, stored_bytes};

/// Generate the project's manifests and write the ones that changed.
pub fn run(opts: &ManifestsOptions, printer: &Printer) -> Result<()> {
    // the pipeline's threads start while the project is looked up; a run with nothing to do
    // leaves them idle
    threads::pool();
    let root = project_root(opts)?;
    let _lock = crate::transaction::lock(&root, printer)?;
    let given = Given::of(&root)?;
    let described = describe(&given, opts);
    let kept = layer(&root, opts);
    let layer = kept.as_ref();
    if layer.nothing_changed(&root, &described) {
        return Ok(());
    }
    let (outputs, built) = pipeline(&root, opts, &given, layer)?;
    // what the run computed is kept beside the outputs' writing, on another of the pool's threads
    let (_, done) = threads::in_pool(|| {
        rayon::join(
            || layer.keep_computed(),
            || {
                let written = write::write(&root, outputs, layer, printer)?;
                layer.keep_run(&described, built.files.record(), written);
                Ok(())
            },
        )
    });
    // the command ends here: the process's exit frees the pipeline's structures at once
    std::mem::forget(built);
    std::mem::forget(kept);
    done
}

/// Everything `manifests` would write for the crate rooted at `root`, computed in memory (what
/// the run computed is kept, as [`run`] keeps it).
pub fn generate(root: &Path, opts: &ManifestsOptions) -> Result<Outputs> {
    let layer = layer(root, opts);
    let (out, _built) = pipeline(root, opts, &Given::of(root)?, layer.as_ref())?;
    layer.keep_computed();
    layer.keep_stamps();
    Ok(out)
}

/// The manifests of a universe assembled by [`scan_source`] (a CRD bigger than
/// [`MAX_CRD_BYTES`] is an error), nothing kept.
pub fn outputs(
    universe: &Universe,
    settings: &Settings,
    role_name: &str,
) -> std::result::Result<Outputs, Vec<Diagnostic>> {
    let emitting = emit::Emitting {
        universe,
        settings,
        role_name,
        max_crd_bytes: Some(MAX_CRD_BYTES),
        layer: &NoCache,
    };
    on_scan_stack(|| emit::emit(&emitting)).map_err(|s| s.diagnostics)
}

/// What a pipeline built besides its outputs: the modules and the files they came from, which
/// [`run`] leaves to the process's exit to free, all at once.
struct Built<'l> {
    #[allow(dead_code)]
    universe: Universe,
    files: Files<'l>,
}

/// The pipeline but its last stage: reads the files of the crates `given` names, summarizes
/// them, assembles the universe and emits its manifests.
fn pipeline<'l>(
    root: &Path,
    opts: &ManifestsOptions,
    given: &Given,
    layer: &'l dyn Incremental,
) -> Result<(Outputs, Built<'l>)> {
    // a type not found may be in a crate that could not be looked for: the note says why
    let note = given.crates.note.as_deref();
    let (universe, files) = on_scan_stack(|| {
        let mut files = Files::new(layer);
        files.read_ahead(given);
        universe::assemble(root, given, &mut files).map(|u| (u, files))
    })
    .map_err(|d| diag::Stopped::from(d).into_error(note))?;
    let settings = Settings {
        allow_dangerous_types: opts.allow_dangerous_types,
        max_desc_len: opts.max_desc_len,
    };
    let role_name = if opts.role_name.is_empty() {
        "manager-role"
    } else {
        opts.role_name.as_str()
    };
    let emitting = emit::Emitting {
        universe: &universe,
        settings: &settings,
        role_name,
        max_crd_bytes: opts.crd_limit(),
        layer,
    };
    let out = on_scan_stack(|| emit::emit(&emitting)).map_err(|s| s.into_error(note))?;
    Ok((out, Built { universe, files }))
}

/// The incremental layer `opts` asks for.
fn layer(root: &Path, opts: &ManifestsOptions) -> Box<dyn Incremental> {
    match &opts.cache {
        Cache::Off => Box::new(NoCache),
        Cache::Project => Box::new(DiskCache::new(cache_dir(root))),
        Cache::At(dir) => Box::new(DiskCache::new(dir.clone())),
    }
}

/// Everything a run's outputs depend on besides the files it reads, as text for the record of
/// the last run: what it was given, and the options that change what is emitted.
fn describe(given: &Given, opts: &ManifestsOptions) -> String {
    format!(
        "{:?}\0{:?}\0{:?}\0{:?}\0{:?}\0{:?}",
        given.entries,
        given.crates,
        opts.max_desc_len,
        opts.allow_dangerous_types,
        opts.role_name,
        opts.crd_limit()
    )
}

/// The nearest directory upwards of the options' root (else the working directory) that holds
/// a `PROJECT` file.
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
        let universe = universe::scan_source(Path::new("src/lib.rs"), source)
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
            let universe = universe::scan_source(Path::new("src/lib.rs"), source).expect("scans");
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

    #[test]
    fn a_type_not_found_is_told_apart_from_other_problems() {
        let stopped = |field: &str| {
            let source = SOURCE.replace(
                "pub size: i32,",
                &format!("pub size: i32,\n            pub other: {field},"),
            );
            let universe = scan_source(Path::new("src/lib.rs"), &source).expect("scans");
            let settings = Settings::default();
            let emitting = emit::Emitting {
                universe: &universe,
                settings: &settings,
                role_name: "manager-role",
                max_crd_bytes: None,
                layer: &NoCache,
            };
            on_scan_stack(|| emit::emit(&emitting)).expect_err("does not emit")
        };
        // defined nowhere, or in a crate that was not read: the note may say why
        for missing in ["Missing", "other_crate::Widget"] {
            let s = stopped(missing);
            assert!(s.type_not_found, "{missing}");
            let text = s.into_error(Some("the lock is missing")).to_string();
            assert!(text.ends_with("\nnote: the lock is missing"), "{text}");
        }
        // a Kubernetes type the table lacks, and a type that needs a flag, are other problems
        for other in ["k8s_openapi::api::core::v1::NoSuchType", "f64"] {
            let s = stopped(other);
            assert!(!s.type_not_found, "{other}");
            let text = s.into_error(Some("the lock is missing")).to_string();
            assert!(!text.contains("note:"), "{text}");
        }
    }
}
