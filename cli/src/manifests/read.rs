//! The pipeline's first two stages: finding what to read (the crate's entry files, the other
//! crates it brings in, the file of each `mod` declaration) and reading each file into its
//! summary, the files of each level of the module tree in parallel. The incremental layer may
//! give a file's summary without the file being read or summarized.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::crates::{self, Crates};
use super::incremental::{Incremental, Lookup, ReadFile, ReadRecord, Reuse};
use super::summary::{self, ModSummary, Step};
use super::threads::in_pool;
use crate::error::{Error, Result};
use crate::gate::Refusal;

/// What a run starts from besides the files it reads: the crate's entry files and the other
/// crates it brings in.
pub(crate) struct Given {
    pub entries: Vec<PathBuf>,
    pub crates: Crates,
}

impl Given {
    /// The entry files (`src/lib.rs`, `src/main.rs`) and crates of the crate at `root`.
    pub(crate) fn of(root: &Path) -> Result<Given> {
        let entries: Vec<PathBuf> = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|e| root.join(e))
            // whatever is there: reading it says why it cannot be read
            .filter(|p| p.symlink_metadata().is_ok_and(|m| !m.is_dir()))
            .collect();
        let crates = crates::discover(root)?;
        if entries.is_empty() && crates.others.is_empty() {
            return Err(Error::msg(format!(
                "{} has neither src/main.rs nor src/lib.rs; run manifests at the project root",
                root.display()
            )));
        }
        Ok(Given { entries, crates })
    }

    /// The root files to read, each with the path of its crate's root module: the project's
    /// own at `[]`, every other crate's at `["::name"]`.
    pub(crate) fn roots(&self) -> Vec<(PathBuf, Vec<String>)> {
        let mut roots: Vec<(PathBuf, Vec<String>)> = self
            .entries
            .iter()
            .map(|e| (e.clone(), Vec::new()))
            .collect();
        for c in &self.crates.others {
            roots.push((c.entry.clone(), vec![format!("::{}", c.name)]));
        }
        roots
    }
}

/// The directory of the child modules of the module whose file is `entry`.
pub(crate) fn dir_of(entry: &Path) -> PathBuf {
    entry.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The identity of a file on disk (device and inode where the platform has them, else its
/// canonical path): two paths to one file, through symlinks or `..`, compare equal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FileId(FileIdInner);

#[cfg(unix)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FileIdInner(u64, u64);

#[cfg(not(unix))]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FileIdInner(PathBuf);

#[cfg(unix)]
pub(crate) fn file_id(_path: &Path, meta: &std::fs::Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some(FileId(FileIdInner(meta.dev(), meta.ino())))
}

#[cfg(not(unix))]
pub(crate) fn file_id(path: &Path, _meta: &std::fs::Metadata) -> Option<FileId> {
    std::fs::canonicalize(path)
        .ok()
        .map(|p| FileId(FileIdInner(p)))
}

/// A file read and summarized.
#[derive(Debug)]
pub struct Loaded {
    pub id: Option<FileId>,
    pub summary: Arc<ModSummary>,
    /// The incremental layer's key of the file's bytes (`None` without one): what it is by
    /// content.
    pub key: Option<u128>,
    /// The layer's key of the summary's text (`None` without one): what the file means to the
    /// scan.
    pub meaning: Option<u128>,
}

/// The file of `mod name;` declared in a module whose files live in `dir`, and the directory
/// of that module's own children: `#[path]` first, then `name.rs`, then `name/mod.rs`.
pub fn child_file(dir: &Path, name: &str, explicit: Option<&str>) -> Option<(PathBuf, PathBuf)> {
    let found = match explicit {
        Some(p) => dir.join(p),
        None => [
            dir.join(format!("{name}.rs")),
            dir.join(name).join("mod.rs"),
        ]
        .into_iter()
        // whatever is there (a symlink that leads nowhere, a FIFO) is the module's file:
        // reading it says why it cannot be read
        .find(|c| c.symlink_metadata().is_ok_and(|m| !m.is_dir()))?,
    };
    let child_dir = if explicit.is_some() || found.file_name().is_some_and(|n| n == "mod.rs") {
        found.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        dir.join(name)
    };
    Some((found, child_dir))
}

/// Every file the pipeline has read, by the path it was reached by, and every `mod` file it
/// looked up.
pub struct Files<'l> {
    layer: &'l dyn Incremental,
    loaded: HashMap<PathBuf, ReadOutcome>,
    /// [`child_file`]'s answers, by its arguments: the waves look every file up once.
    found: HashMap<ChildOf, Option<(PathBuf, PathBuf)>>,
}

/// The arguments of [`child_file`]: the parent's directory, the module's name, its `#[path]`.
type ChildOf = (PathBuf, String, Option<String>);

/// Most files [`Files::prefetch`] reads from the project's source directory before the module
/// tree is walked.
const MAX_LIKELY_FILES: usize = 4096;

/// Deepest chain of module files (`mod a;` in a file of `mod b;` ...) the scan follows.
pub const MAX_MODULE_FILES: usize = 64;

/// The `.rs` files in `dir` and its subdirectories (not hidden ones, nor `target`), up to
/// `most` of them and none larger than a megabyte: where a crate's module files usually are,
/// for [`Files::prefetch`] to read at once. A file listed that is no module's is read for
/// nothing; a module file not listed is read when the walk reaches it.
pub fn rust_files_under(dir: &Path, most: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() && name != "target" {
                dirs.push(e.path());
            } else if kind.is_file()
                && name.ends_with(".rs")
                && e.metadata().is_ok_and(|m| m.len() <= 1 << 20)
            {
                out.push(e.path());
                if out.len() >= most {
                    return out;
                }
            }
        }
    }
    out
}

impl<'l> Files<'l> {
    /// No file read yet; summaries are asked of `layer` first.
    pub(crate) fn new(layer: &'l dyn Incremental) -> Files<'l> {
        Files {
            layer,
            loaded: HashMap::new(),
            found: HashMap::new(),
        }
    }

    /// [`child_file`], looked up once per run.
    pub fn child_file(
        &mut self,
        dir: &Path,
        name: &str,
        explicit: Option<&str>,
    ) -> Option<(PathBuf, PathBuf)> {
        let args = (
            dir.to_path_buf(),
            name.to_string(),
            explicit.map(str::to_string),
        );
        self.found
            .entry(args)
            .or_insert_with(|| child_file(dir, name, explicit))
            .clone()
    }

    /// Reads the files of the crates `given` names and of their module trees ahead of the
    /// module tree's assembly: see [`Files::prefetch`].
    pub(crate) fn read_ahead(&mut self, given: &Given) {
        // the project's own source directory holds most of its module files
        let likely = given
            .entries
            .first()
            .map(|e| rust_files_under(&dir_of(e), MAX_LIKELY_FILES))
            .unwrap_or_default();
        let roots = given.roots();
        self.prefetch(
            roots.iter().map(|(e, _)| (e.clone(), dir_of(e))).collect(),
            likely,
        );
    }

    /// Reads the files of `wave` (path, directory of its child modules) and of every module
    /// file they declare, one level of the module tree at a time, each level in parallel; the
    /// files of `likely` (where module files usually are, see [`rust_files_under`]) are read
    /// with the first level, so that the levels below find most of their files read.
    pub fn prefetch(&mut self, mut wave: Vec<(PathBuf, PathBuf)>, likely: Vec<PathBuf>) {
        let mut followed: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
        let mut likely = Some(likely);
        let mut levels = 0;
        while !wave.is_empty() && levels <= MAX_MODULE_FILES {
            levels += 1;
            wave.retain(|(p, _)| followed.insert(p.clone()));
            let mut paths: Vec<PathBuf> = wave
                .iter()
                .map(|(p, _)| p.clone())
                .chain(likely.take().unwrap_or_default())
                .filter(|p| !self.loaded.contains_key(p))
                .collect();
            paths.sort();
            paths.dedup();
            let refs: Vec<&PathBuf> = paths.iter().collect();
            let results = self.read_all(&refs);
            for (path, result) in paths.iter().zip(results) {
                self.loaded.insert(path.clone(), result);
            }
            let mut next = Vec::new();
            for (path, dir) in &wave {
                if let Some(Ok(l)) = self.loaded.get(path).cloned() {
                    self.children(&l.summary, dir, &mut next);
                }
            }
            wave = next;
        }
    }

    fn read_all(&self, paths: &[&PathBuf]) -> Vec<ReadOutcome> {
        let layer = self.layer;
        if paths.len() < 2 {
            return paths.iter().map(|p| read(p, layer)).collect();
        }
        in_pool(|| paths.par_iter().map(|p| read(p, layer)).collect())
    }

    /// The file at `path`, read now unless a wave has read it already.
    pub fn load(&mut self, path: &Path) -> ReadOutcome {
        if let Some(done) = self.loaded.get(path) {
            return done.clone();
        }
        let result = read(path, self.layer);
        self.loaded.insert(path.to_path_buf(), result.clone());
        result
    }

    /// What this run read, for the record of the last run: every file read with the key of its
    /// summary (`None` when a file has none: no incremental layer), and every `mod` file looked
    /// up. A file that could not be read is left out: after a scan without errors it is one
    /// read ahead that no module declares.
    pub(crate) fn record(&self) -> Option<ReadRecord> {
        let mut files = Vec::new();
        for (path, loaded) in &self.loaded {
            let Ok(l) = loaded else { continue };
            files.push(ReadFile {
                path: path.clone(),
                meaning: l.meaning?,
                same_as: 0,
            });
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let ids: Vec<Option<&FileId>> = files
            .iter()
            .map(|f| {
                self.loaded
                    .get(&f.path)
                    .and_then(|l| l.as_ref().ok())
                    .and_then(|l| l.id.as_ref())
            })
            .collect();
        for (f, same_as) in files.iter_mut().zip(first_of_each(&ids)) {
            f.same_as = same_as;
        }
        let mut lookups: Vec<Lookup> = self
            .found
            .iter()
            .map(|((dir, name, explicit), found)| Lookup {
                dir: dir.clone(),
                name: name.clone(),
                explicit: explicit.clone(),
                found: found.clone(),
            })
            .collect();
        lookups.sort_by(|a, b| (&a.dir, &a.name, &a.explicit).cmp(&(&b.dir, &b.name, &b.explicit)));
        Some(ReadRecord { files, lookups })
    }

    /// The module files a summary declares, with their children's directory.
    fn children(&mut self, summary: &ModSummary, dir: &Path, out: &mut Vec<(PathBuf, PathBuf)>) {
        for step in &summary.steps {
            match step {
                Step::Inline { name, body } => self.children(body, &dir.join(name), out),
                Step::File { name, path, .. } => {
                    if let Some(found) = self.child_file(dir, name, path.as_deref()) {
                        out.push(found);
                    }
                }
                _ => {}
            }
        }
    }
}

/// A file read and summarized, or why it could not be read.
pub type ReadOutcome = std::result::Result<Arc<Loaded>, Unreadable>;

/// Why a file could not be read.
#[derive(Clone, Debug)]
pub struct Unreadable(Arc<Refusal>);

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.0 {
            Refusal::Io(e) => write!(
                f,
                "cannot read: {e}; make it a readable file or remove the `mod` line that names it"
            ),
            // the gate's reason ends with its fix: the `mod` line may go instead
            refused => write!(
                f,
                "cannot read: {} (or remove the `mod` line that names it)",
                refused.reason()
            ),
        }
    }
}

/// For each value, the index of its first occurrence (`None`s are each their own).
pub(crate) fn first_of_each<T: Eq + std::hash::Hash>(values: &[Option<T>]) -> Vec<usize> {
    let mut first: HashMap<&T, usize> = HashMap::new();
    values
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Some(v) => *first.entry(v).or_insert(i),
            None => i,
        })
        .collect()
}

/// Reads and summarizes one file, unless the incremental layer has its summary: by its stamp
/// (the bytes are not read), or by its bytes.
fn read(path: &Path, layer: &dyn Incremental) -> ReadOutcome {
    if let Some((meta, known)) = layer.summary_by_stat(path) {
        return Ok(Arc::new(Loaded {
            id: file_id(path, &meta),
            summary: Arc::new(known.summary),
            key: Some(known.key),
            meaning: Some(known.meaning),
        }));
    }
    let (meta, bytes) = read_bytes(path).map_err(|e| Unreadable(Arc::new(e)))?;
    let id = file_id(path, &meta);
    let key = match layer.summary_by_bytes(path, &meta, &bytes) {
        Reuse::Hit(known) => {
            return Ok(Arc::new(Loaded {
                id,
                summary: Arc::new(known.summary),
                key: Some(known.key),
                meaning: Some(known.meaning),
            }));
        }
        Reuse::Miss(key) => Some(key),
        Reuse::Off => None,
    };
    let summary = summarize_bytes(&bytes);
    let meaning = key.and_then(|k| layer.summarized(path, &meta, k, &summary));
    Ok(Arc::new(Loaded {
        id,
        summary: Arc::new(summary),
        key,
        meaning,
    }))
}

/// A file's metadata, taken before its bytes are read (a change while reading changes it), and
/// its bytes: through the gate every command reads project files by.
pub(crate) fn read_bytes(path: &Path) -> Result<(std::fs::Metadata, Vec<u8>), Refusal> {
    crate::gate::read(path)
}

/// The summary of a file's bytes.
pub(crate) fn summarize_bytes(bytes: &[u8]) -> ModSummary {
    match std::str::from_utf8(bytes) {
        Ok(text) => summary::summarize(text),
        Err(e) => not_utf8(bytes, e.valid_up_to()),
    }
}

/// The summary of a file that is not UTF-8: one error where the first bad byte is.
fn not_utf8(bytes: &[u8], valid_up_to: usize) -> ModSummary {
    let valid = String::from_utf8_lossy(&bytes[..valid_up_to]);
    let line = valid.matches('\n').count() + 1;
    let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count());
    ModSummary {
        steps: vec![Step::Error {
            line,
            column,
            message: "is not UTF-8 text: save the file as UTF-8".to_string(),
        }],
        ..ModSummary::default()
    }
}
