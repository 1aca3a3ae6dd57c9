//! Reading the scan's files: where a `mod` declaration's file is, the files of each wave of
//! the module tree read and summarized in parallel, and the content-addressed cache of
//! summaries (a corrupt, foreign or stale entry is never used: it is recomputed).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::scan;
use crate::summary::{self, ModSummary, Step};

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
fn file_id(_path: &Path, meta: &std::fs::Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some(FileId(FileIdInner(meta.dev(), meta.ino())))
}

#[cfg(not(unix))]
fn file_id(path: &Path, _meta: &std::fs::Metadata) -> Option<FileId> {
    std::fs::canonicalize(path)
        .ok()
        .map(|p| FileId(FileIdInner(p)))
}

/// A file read and summarized.
#[derive(Debug)]
pub struct Loaded {
    pub id: Option<FileId>,
    pub summary: Arc<ModSummary>,
    /// The cache's key of the file's bytes (`None` without a cache): what it is by content.
    pub key: Option<u128>,
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
        // a symlink that leads nowhere (a loop) is still the module's file: reading it says why
        .find(|c| c.is_file() || c.is_symlink())?,
    };
    let child_dir = if explicit.is_some() || found.file_name().is_some_and(|n| n == "mod.rs") {
        found.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        dir.join(name)
    };
    Some((found, child_dir))
}

/// Every file the scan has read, by the path it was reached by.
pub struct Files {
    cache: Option<Cache>,
    loaded: HashMap<PathBuf, Result<Arc<Loaded>, String>>,
    /// Summaries computed in this run, to be cached when the scan succeeds.
    fresh: Vec<(u128, Arc<ModSummary>)>,
}

/// The scan's thread pool (threads with [`scan::SCAN_STACK`] bytes of stack), built on first
/// use and shared by the file reads and the emitters; `None` when no thread can be started.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("operator-gen-scan-{i}"))
            .stack_size(scan::SCAN_STACK)
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `work` inside the scan's pool, so its parallel iterators use threads with the scan's
/// stack (inline when there is no pool: rayon then runs them on the caller's thread).
pub fn in_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    match pool() {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

impl Files {
    pub fn new(cache_dir: Option<PathBuf>) -> Files {
        Files {
            cache: cache_dir.map(|dir| Cache::new(dir, SUMMARIES.0, SUMMARIES.1)),
            loaded: HashMap::new(),
            fresh: Vec::new(),
        }
    }

    /// Reads the files of `wave` (path, directory of its child modules) and of every module
    /// file they declare, one level of the module tree at a time, each level in parallel.
    pub fn prefetch(&mut self, mut wave: Vec<(PathBuf, PathBuf)>) {
        let mut levels = 0;
        while !wave.is_empty() && levels <= scan::MAX_MODULE_FILES {
            levels += 1;
            wave.retain(|(p, _)| !self.loaded.contains_key(p));
            wave.sort();
            wave.dedup_by(|a, b| a.0 == b.0);
            let paths: Vec<&PathBuf> = wave.iter().map(|(p, _)| p).collect();
            let results = self.read_all(&paths);
            let mut next = Vec::new();
            for ((path, dir), (result, fresh)) in wave.iter().zip(results) {
                if let Ok(l) = &result {
                    children(&l.summary, dir, &mut next);
                }
                if let Some(f) = fresh {
                    self.fresh.push(f);
                }
                self.loaded.insert(path.clone(), result);
            }
            wave = next;
        }
    }

    fn read_all(&mut self, paths: &[&PathBuf]) -> Vec<ReadResult> {
        let cache = self.cache.as_ref();
        if paths.len() < 2 {
            return paths.iter().map(|p| read(p, cache)).collect();
        }
        in_pool(|| paths.par_iter().map(|p| read(p, cache)).collect())
    }

    /// The file at `path`, read now unless a wave has read it already.
    pub fn load(&mut self, path: &Path) -> Result<Arc<Loaded>, String> {
        if let Some(done) = self.loaded.get(path) {
            return done.clone();
        }
        let (result, fresh) = read(path, self.cache.as_ref());
        if let Some(f) = fresh {
            self.fresh.push(f);
        }
        self.loaded.insert(path.to_path_buf(), result.clone());
        result
    }

    /// Writes the cache file anew when this run computed summaries: the entries it read and
    /// the new ones (best effort: a cache that cannot be written only costs the next run time).
    pub fn store(&mut self) {
        let Some(cache) = &self.cache else { return };
        if self.fresh.is_empty() {
            return;
        }
        let fresh = std::mem::take(&mut self.fresh)
            .into_iter()
            .filter_map(|(key, s)| Some((key, serde_json::to_string(&*s).ok()?)))
            .collect();
        cache.store(fresh);
    }
}

type ReadResult = (Result<Arc<Loaded>, String>, Option<(u128, Arc<ModSummary>)>);

/// The module files a summary declares, with their children's directory.
fn children(summary: &ModSummary, dir: &Path, out: &mut Vec<(PathBuf, PathBuf)>) {
    for step in &summary.steps {
        match step {
            Step::Inline { name, body } => children(body, &dir.join(name), out),
            Step::File { name, path, .. } => {
                if let Some(found) = child_file(dir, name, path.as_deref()) {
                    out.push(found);
                }
            }
            _ => {}
        }
    }
}

/// Reads and summarizes one file (from the cache when it holds the summary of these bytes).
fn read(path: &Path, cache: Option<&Cache>) -> ReadResult {
    let mut bytes = Vec::new();
    let meta = match std::fs::File::open(path).and_then(|mut f| {
        let meta = f.metadata()?;
        f.read_to_end(&mut bytes)?;
        Ok(meta)
    }) {
        Ok(m) => m,
        Err(e) => {
            return (
                Err(format!(
                    "cannot read: {e}; make it a readable file (not a dangling or looping symlink) or remove the `mod` line that names it"
                )),
                None,
            );
        }
    };
    let id = file_id(path, &meta);
    let key = cache.map(|c| c.key(&bytes));
    if let (Some(c), Some(k)) = (cache, key)
        && let Some(summary) = c.summary(k)
    {
        let summary = Arc::new(summary);
        return (Ok(Arc::new(Loaded { id, summary, key })), None);
    }
    let summary = Arc::new(match std::str::from_utf8(&bytes) {
        Ok(text) => summary::summarize(text),
        Err(e) => not_utf8(&bytes, e.valid_up_to()),
    });
    let fresh = key.map(|k| (k, summary.clone()));
    (Ok(Arc::new(Loaded { id, summary, key })), fresh)
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

/// A content-addressed cache of text in one file of the scan cache's directory, keyed by 128-bit
/// hashes seeded with this build of operator-gen (its version, and the size and time of the
/// running executable), so another build never reads this one's entries. An entry is two lines:
/// the key and a checksum of the key and the text, then the text, on one line. One file rather
/// than one per entry: creating hundreds of files cost more than computing them. The summary
/// cache (`summaries`, a summary of a file by its bytes) and `manifests`' cache of CRDs are
/// each one.
pub(crate) struct Cache {
    dir: PathBuf,
    file: &'static str,
    seed: u64,
    /// The cache file's entries that check out (text by key), read on first use.
    entries: std::sync::OnceLock<HashMap<u128, String>>,
    /// The keys this run took from the cache.
    used: std::sync::Mutex<Vec<u128>>,
}

/// The summaries' cache file and the format of its entries.
const SUMMARIES: (&str, &str) = ("summaries", "operator-gen scan summary v2");

fn checksum(key: u128, text: &str) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&key.to_le_bytes());
    h.update(text.as_bytes());
    h.digest()
}

impl Cache {
    /// The cache in `dir/file`, for entries in the format named `format` (a new format is a new
    /// name, so old entries are never read as new ones).
    pub(crate) fn new(dir: PathBuf, file: &'static str, format: &str) -> Cache {
        let exe = std::env::current_exe()
            .and_then(std::fs::metadata)
            .ok()
            .map(|m| {
                let modified = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!("{} {modified}", m.len())
            })
            .unwrap_or_default();
        let build = format!("{format}\0{}\0{exe}", env!("CARGO_PKG_VERSION"));
        Cache {
            dir,
            file,
            seed: xxhash_rust::xxh3::xxh3_64(build.as_bytes()),
            entries: std::sync::OnceLock::new(),
            used: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The key of `bytes`.
    pub(crate) fn key(&self, bytes: &[u8]) -> u128 {
        xxhash_rust::xxh3::xxh3_128_with_seed(bytes, self.seed)
    }

    /// The entries of the cache file that check out; an entry whose header does not parse or
    /// whose checksum differs is left out (and recomputed by the run that misses it).
    fn entries(&self) -> &HashMap<u128, String> {
        self.entries.get_or_init(|| {
            let text = std::fs::read_to_string(self.dir.join(self.file)).unwrap_or_default();
            let mut out = HashMap::new();
            let mut lines = text.split('\n');
            while let (Some(header), Some(entry)) = (lines.next(), lines.next()) {
                let mut parts = header.split(' ');
                let (Some(key), Some(sum), None) = (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                let (Ok(key), Ok(sum)) =
                    (u128::from_str_radix(key, 16), u64::from_str_radix(sum, 16))
                else {
                    continue;
                };
                if sum == checksum(key, entry) {
                    out.insert(key, entry.to_string());
                }
            }
            out
        })
    }

    /// The cached text for `key`, unless the entry is missing or does not check out; a text
    /// taken is kept when the file is written again.
    pub(crate) fn get(&self, key: u128) -> Option<&str> {
        let text = self.entries().get(&key)?;
        if let Ok(mut used) = self.used.lock() {
            used.push(key);
        }
        Some(text)
    }

    /// Writes the cache file anew: the entries this run used and `fresh` (each text one line),
    /// by key (best effort: a cache that cannot be written only costs the next run time).
    pub(crate) fn store(&self, fresh: Vec<(u128, String)>) {
        let mut all = fresh;
        let used = self.used.lock().map(|u| u.clone()).unwrap_or_default();
        let entries = self.entries();
        all.extend(
            used.iter()
                .filter_map(|k| entries.get(k).map(|s| (*k, s.clone()))),
        );
        all.sort_by_key(|(k, _)| *k);
        all.dedup_by_key(|(k, _)| *k);
        let mut text = String::new();
        for (key, entry) in &all {
            text.push_str(&format!(
                "{key:032x} {:016x}\n{entry}\n",
                checksum(*key, entry)
            ));
        }
        let written = std::fs::create_dir_all(&self.dir).and_then(|()| {
            let mut tmp = tempfile::Builder::new()
                .prefix(&format!(".{}-", self.file))
                .tempfile_in(&self.dir)?;
            std::io::Write::write_all(&mut tmp, text.as_bytes())?;
            tmp.persist(self.dir.join(self.file)).map_err(|e| e.error)?;
            Ok(())
        });
        // a cache that cannot be written only costs the next run time
        let _ = written;
    }

    /// The cached summary for `key`, unless the entry is missing or does not check out.
    fn summary(&self, key: u128) -> Option<ModSummary> {
        serde_json::from_str(self.get(key)?).ok()
    }
}
