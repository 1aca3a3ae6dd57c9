//! Reading the scan's files: where a `mod` declaration's file is, the files of each wave of
//! the module tree read and summarized in parallel, and the content-addressed cache of
//! summaries (a corrupt, foreign or stale entry is never used: it is recomputed).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::manifests::summary::{self, ModSummary, Step};
use crate::manifests::universe;

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
    /// The cache's key of the summary's text (`None` without a cache): what the file means to
    /// the scan, the same for two texts that differ in comments or function bodies only.
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
    /// What each file's bytes were by their stat, from earlier runs (with the cache only).
    stamps: Option<Stamps>,
    loaded: HashMap<PathBuf, Result<Arc<Loaded>, String>>,
    /// Summaries computed in this run, as the cache holds them, to be cached when the scan
    /// succeeds.
    fresh: Vec<(u128, String)>,
    /// [`child_file`]'s answers, by its arguments: the waves look every file up once.
    found: HashMap<ChildOf, Option<(PathBuf, PathBuf)>>,
}

/// The arguments of [`child_file`]: the parent's directory, the module's name, its `#[path]`.
type ChildOf = (PathBuf, String, Option<String>);

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

/// The scan's thread pool (threads with [`universe::SCAN_STACK`] bytes of stack), built on first
/// use and shared by the file reads and the emitters; `None` when no thread can be started.
pub(crate) fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("operator-gen-scan-{i}"))
            .stack_size(universe::SCAN_STACK)
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

/// The summary cache in `dir` and the stamps kept beside it.
pub(crate) fn summaries_in(dir: PathBuf) -> (Cache, Stamps) {
    let cache = Cache::new(dir, SUMMARIES.0, SUMMARIES.1);
    let stamps = Stamps::new(cache.dir.clone(), cache.seed);
    (cache, stamps)
}

impl Files {
    pub fn new(cache_dir: Option<PathBuf>) -> Files {
        let (cache, stamps) = cache_dir.map(summaries_in).unzip();
        Files {
            stamps,
            cache,
            loaded: HashMap::new(),
            fresh: Vec::new(),
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

    /// Reads the files of `wave` (path, directory of its child modules) and of every module
    /// file they declare, one level of the module tree at a time, each level in parallel; the
    /// files of `likely` (where module files usually are, see [`rust_files_under`]) are read
    /// with the first level, so that the levels below find most of their files read.
    pub fn prefetch(&mut self, mut wave: Vec<(PathBuf, PathBuf)>, likely: Vec<PathBuf>) {
        let mut followed: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
        let mut likely = Some(likely);
        let mut levels = 0;
        while !wave.is_empty() && levels <= universe::MAX_MODULE_FILES {
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
            for (path, (result, fresh)) in paths.iter().zip(results) {
                if let Some(f) = fresh {
                    self.fresh.push(f);
                }
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

    fn read_all(&mut self, paths: &[&PathBuf]) -> Vec<ReadResult> {
        let (cache, stamps) = (self.cache.as_ref(), self.stamps.as_ref());
        if paths.len() < 2 {
            return paths.iter().map(|p| read(p, cache, stamps)).collect();
        }
        in_pool(|| paths.par_iter().map(|p| read(p, cache, stamps)).collect())
    }

    /// The file at `path`, read now unless a wave has read it already.
    pub fn load(&mut self, path: &Path) -> Result<Arc<Loaded>, String> {
        if let Some(done) = self.loaded.get(path) {
            return done.clone();
        }
        let (result, fresh) = read(path, self.cache.as_ref(), self.stamps.as_ref());
        if let Some(f) = fresh {
            self.fresh.push(f);
        }
        self.loaded.insert(path.to_path_buf(), result.clone());
        result
    }

    /// Writes the cache file anew when this run computed summaries: the entries it read and
    /// the new ones (best effort: a cache that cannot be written only costs the next run time).
    pub fn store(&mut self) {
        let fresh = self.take_fresh();
        self.store_fresh(fresh);
    }

    /// The summaries this run computed, for [`Files::store_fresh`] (which may then run on
    /// another thread).
    pub fn take_fresh(&mut self) -> Vec<(u128, String)> {
        std::mem::take(&mut self.fresh)
    }

    /// [`Files::store`] of summaries taken with [`Files::take_fresh`].
    pub fn store_fresh(&self, fresh: Vec<(u128, String)>) {
        if let Some(cache) = &self.cache
            && !fresh.is_empty()
        {
            cache.store(fresh);
        }
    }

    /// What this scan read, for [`crate::manifests::cache::last_run`]: every file read with the key of its summary
    /// (none without a cache), and every `mod` file looked up. A file that could not be read is
    /// left out: after a scan without errors it is one read ahead that no module declares.
    pub fn read_record(&self) -> Option<(Vec<ReadFile>, Vec<Lookup>)> {
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
        Some((files, lookups))
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

    /// The stamps of files this scan read, for [`Stamps::unchanged`] on other files.
    pub fn stamps(&self) -> Option<&Stamps> {
        self.stamps.as_ref()
    }
}

type ReadResult = (Result<Arc<Loaded>, String>, Option<(u128, String)>);

/// A file a scan read: its path, the key of its summary, and which file of the scan it is on
/// disk (the index of the first with its identity, as two paths may lead to one file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadFile {
    pub path: PathBuf,
    pub meaning: u128,
    pub same_as: usize,
}

/// A `mod` declaration's file looked up by a scan: [`child_file`]'s arguments and answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lookup {
    pub dir: PathBuf,
    pub name: String,
    pub explicit: Option<String>,
    pub found: Option<(PathBuf, PathBuf)>,
}

/// For each value, the index of its first occurrence (`None`s are each their own).
fn first_of_each<T: Eq + std::hash::Hash>(values: &[Option<T>]) -> Vec<usize> {
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

/// Reads and summarizes one file (from the cache when it holds the summary of these bytes;
/// the bytes are not read when the file's stamp says what they are and the cache has them).
fn read(path: &Path, cache: Option<&Cache>, stamps: Option<&Stamps>) -> ReadResult {
    if let (Some(c), Some(st)) = (cache, stamps)
        && let Ok(meta) = std::fs::metadata(path)
        && let Some(key) = st.key_of(path, &meta)
        && let Some((summary, meaning)) = c.summary(key)
    {
        st.note(path, &meta, key, Some(meaning));
        let id = file_id(path, &meta);
        let summary = Arc::new(summary);
        return (
            Ok(Arc::new(Loaded {
                id,
                summary,
                key: Some(key),
                meaning: Some(meaning),
            })),
            None,
        );
    }
    let (meta, bytes) = match read_bytes(path) {
        Ok(read) => read,
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
        && let Some((summary, meaning)) = c.summary(k)
    {
        if let Some(st) = stamps {
            st.note(path, &meta, k, Some(meaning));
        }
        let summary = Arc::new(summary);
        let meaning = Some(meaning);
        return (
            Ok(Arc::new(Loaded {
                id,
                summary,
                key,
                meaning,
            })),
            None,
        );
    }
    let summary = summarize_bytes(&bytes);
    // the text the cache will hold, made here on the reading thread
    let cached = cache.and_then(|c| cached_form(c, &summary));
    let meaning = cached.as_ref().map(|(_, meaning)| *meaning);
    if let (Some(st), Some(k)) = (stamps, key) {
        st.note(path, &meta, k, meaning);
    }
    let summary = Arc::new(summary);
    let fresh = key.zip(cached.map(|(text, _)| text));
    let loaded = Loaded {
        id,
        summary,
        key,
        meaning,
    };
    (Ok(Arc::new(loaded)), fresh)
}

/// Whether the files of an earlier scan (`files`, `lookups`, see [`Files::read_record`]) still
/// mean what they meant: each file's summary the same (its bytes may differ in comments and
/// function bodies), the same files one another, and each `mod` lookup finding the same file.
/// A scan would then build what that one built. A file is read and summarized only when its
/// stamp does not say what it means; `false` as soon as one thing differs.
pub(crate) fn still_mean(
    files: &[ReadFile],
    lookups: &[Lookup],
    cache: &Cache,
    stamps: &Stamps,
) -> bool {
    // a lookup that found `name.rs`, the first place looked, finds it while it is there, which
    // the loop below sees as it reads the file's metadata; the others look again
    let read: std::collections::HashSet<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    let first_place = |l: &Lookup| {
        l.explicit.is_some()
            || l.found.as_ref().is_some_and(|(file, _)| {
                read.contains(file.as_path()) && *file == l.dir.join(format!("{}.rs", l.name))
            })
    };
    if lookups
        .iter()
        .any(|l| !first_place(l) && child_file(&l.dir, &l.name, l.explicit.as_deref()) != l.found)
    {
        return false;
    }
    let mut ids = Vec::with_capacity(files.len());
    for f in files {
        let Ok(meta) = std::fs::metadata(&f.path) else {
            return false;
        };
        ids.push(file_id(&f.path, &meta));
        let meaning = match stamps.stamp_of(&f.path, &meta) {
            Some((key, Some(meaning))) => {
                stamps.note(&f.path, &meta, key, Some(meaning));
                meaning
            }
            _ => {
                let Ok((meta, bytes)) = read_bytes(&f.path) else {
                    return false;
                };
                let Some((_, meaning)) = cached_form(cache, &summarize_bytes(&bytes)) else {
                    return false;
                };
                stamps.note(&f.path, &meta, cache.key(&bytes), Some(meaning));
                meaning
            }
        };
        if meaning != f.meaning {
            return false;
        }
    }
    let same: Vec<usize> = files.iter().map(|f| f.same_as).collect();
    first_of_each(&ids) == same
}

/// A file's metadata, taken before its bytes are read (a change while reading changes it), and
/// its bytes.
fn read_bytes(path: &Path) -> std::io::Result<(std::fs::Metadata, Vec<u8>)> {
    let mut f = std::fs::File::open(path)?;
    let meta = f.metadata()?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok((meta, bytes))
}

/// A summary as the cache holds it, and the key of that text: what its file means to the scan.
fn cached_form(cache: &Cache, summary: &ModSummary) -> Option<(String, u128)> {
    let text = serde_json::to_string(summary).ok()?;
    let meaning = cache.key(text.as_bytes());
    Some((text, meaning))
}

/// The summary of a file's bytes.
fn summarize_bytes(bytes: &[u8]) -> ModSummary {
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

/// A content-addressed cache of text in one file of the scan cache's directory, keyed by 128-bit
/// hashes seeded with this build of operator-gen (its version, and the size and time of the
/// running executable), so another build never reads this one's entries. An entry is two lines:
/// the key and a checksum of the key and the text, then the text, on one line; an entry's
/// checksum is checked when it is first used. One file rather than one per entry: creating
/// hundreds of files cost more than computing them. A run appends the entries it computed, and
/// rewrites the file with only the entries it used once the others take more room than those.
/// The summary cache (`summaries`, a summary of a file by its bytes) and `manifests`' cache of
/// CRDs are each one.
pub(crate) struct Cache {
    dir: PathBuf,
    file: &'static str,
    seed: u64,
    /// The cache file's text and where each entry's text is in it, read on first use.
    entries: std::sync::OnceLock<Entries>,
    /// The keys this run took from the cache (their entries checked out).
    used: std::sync::Mutex<Vec<u128>>,
    /// Whether an entry this run looked at failed its checksum.
    failed: std::sync::atomic::AtomicBool,
}

/// A cache file's text, and for each key its entry's checksum and where its text is.
#[derive(Default)]
struct Entries {
    text: String,
    at: HashMap<u128, (u64, std::ops::Range<usize>)>,
    /// Whether every header parsed and the text ends with a whole entry.
    whole: bool,
}

/// The summaries' cache file and the format of its entries.
const SUMMARIES: (&str, &str) = ("summaries", "operator-gen scan summary v3");

/// The size and modification time of the running executable, read once per process: what tells
/// this build's cache entries from another's.
fn running_executable() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        std::env::current_exe()
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
            .unwrap_or_default()
    })
}

/// What `bytes` are by content, for a build whose caches are seeded with `seed`.
fn content_key(seed: u64, bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128_with_seed(bytes, seed)
}

fn checksum(key: u128, text: &str) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&key.to_le_bytes());
    h.update(text.as_bytes());
    h.digest()
}

/// Writes one entry as the cache file holds it.
fn write_entry(out: &mut impl std::io::Write, key: u128, text: &str) -> std::io::Result<()> {
    writeln!(out, "{key:032x} {:016x}", checksum(key, text))?;
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")
}

impl Cache {
    /// The cache in `dir/file`, for entries in the format named `format` (a new format is a new
    /// name, so old entries are never read as new ones).
    pub(crate) fn new(dir: PathBuf, file: &'static str, format: &str) -> Cache {
        let exe = running_executable();
        let build = format!("{format}\0{}\0{exe}", env!("CARGO_PKG_VERSION"));
        Cache {
            dir,
            file,
            seed: xxhash_rust::xxh3::xxh3_64(build.as_bytes()),
            entries: std::sync::OnceLock::new(),
            used: std::sync::Mutex::new(Vec::new()),
            failed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The key of `bytes`.
    pub(crate) fn key(&self, bytes: &[u8]) -> u128 {
        content_key(self.seed, bytes)
    }

    /// The cache file's entries whose header parses (the last one of a key wins: an appended
    /// entry replaces an older one).
    fn entries(&self) -> &Entries {
        self.entries.get_or_init(|| {
            let text = std::fs::read_to_string(self.dir.join(self.file)).unwrap_or_default();
            let mut at = HashMap::new();
            let mut pos = 0;
            let mut whole = true;
            while pos < text.len() {
                let header_end = text[pos..].find('\n').map(|n| pos + n);
                let entry_end =
                    header_end.and_then(|h| text[h + 1..].find('\n').map(|n| (h, h + 1 + n)));
                let Some((header_end, entry_end)) = entry_end else {
                    whole = false;
                    break;
                };
                let mut parts = text[pos..header_end].split(' ');
                if let (Some(key), Some(sum), None) = (parts.next(), parts.next(), parts.next())
                    && let (Ok(key), Ok(sum)) =
                        (u128::from_str_radix(key, 16), u64::from_str_radix(sum, 16))
                {
                    at.insert(key, (sum, header_end + 1..entry_end));
                } else {
                    whole = false;
                }
                pos = entry_end + 1;
            }
            Entries { text, at, whole }
        })
    }

    /// The cached text for `key`, unless the entry is missing or its checksum differs (it is
    /// then recomputed by the caller); a text taken is kept when the file is compacted.
    pub(crate) fn get(&self, key: u128) -> Option<&str> {
        let entries = self.entries();
        let (sum, range) = entries.at.get(&key)?;
        let text = entries.text.get(range.clone())?;
        if checksum(key, text) != *sum {
            self.failed
                .store(true, std::sync::atomic::Ordering::Relaxed);
            return None;
        }
        if let Ok(mut used) = self.used.lock() {
            used.push(key);
        }
        Some(text)
    }

    /// Adds `fresh` (each text one line) to the cache file: appended to a file that parsed
    /// whole and whose entries this run looked at checked out, unless the entries this run did
    /// not use take more room than those it did; else the file is written anew with the used
    /// entries and `fresh` (best effort: a cache that cannot be written only costs the next run
    /// time). An append cut short leaves a file that does not parse whole, so the next run
    /// that stores rewrites it.
    pub(crate) fn store(&self, fresh: Vec<(u128, String)>) {
        let entries = self.entries();
        let mut used = self.used.lock().map(|u| u.clone()).unwrap_or_default();
        used.sort_unstable();
        used.dedup();
        let kept: usize = used
            .iter()
            .filter_map(|k| entries.at.get(k).map(|(_, r)| r.len() + 50))
            .sum();
        let path = self.dir.join(self.file);
        let sound = entries.whole && !self.failed.load(std::sync::atomic::Ordering::Relaxed);
        if sound && !entries.text.is_empty() && entries.text.len() <= 2 * kept {
            let appended = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .and_then(|f| {
                    let mut out = std::io::BufWriter::with_capacity(1 << 16, f);
                    for (key, entry) in &fresh {
                        write_entry(&mut out, *key, entry)?;
                    }
                    std::io::Write::flush(&mut out)
                });
            if appended.is_ok() {
                return;
            }
        }
        let mut all: Vec<(u128, &str)> = fresh.iter().map(|(k, t)| (*k, t.as_str())).collect();
        all.extend(used.iter().filter_map(|k| {
            let (_, range) = entries.at.get(k)?;
            Some((*k, entries.text.get(range.clone())?))
        }));
        all.sort_by_key(|(k, _)| *k);
        all.dedup_by_key(|(k, _)| *k);
        // a cache that cannot be written only costs the next run time
        let _ = write_atomically_with(&self.dir, self.file, |out| {
            all.iter()
                .try_for_each(|(key, entry)| write_entry(out, *key, entry))
        });
    }

    /// The cache's directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cached summary for `key` and the key of its text, unless the entry is missing or
    /// does not check out.
    fn summary(&self, key: u128) -> Option<(ModSummary, u128)> {
        let text = self.get(key)?;
        Some((serde_json::from_str(text).ok()?, self.key(text.as_bytes())))
    }
}

/// How long before a run a file must have last changed for its stamp to be kept: a change in
/// the same tick of the file system's clock as the stamp, to the same size, would not show in
/// it (git's "racily clean" entries); two seconds also covers file systems that count in them.
const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

/// A file's stat where the platform gives what a change always moves: size, modification and
/// change times (the change time cannot be set back by a user), device and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stat([i64; 7]);

#[cfg(unix)]
fn stat_of(meta: &std::fs::Metadata) -> Option<Stat> {
    use std::os::unix::fs::MetadataExt;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let at = |secs: i64, nanos: i64| {
        std::time::Duration::new(u64::try_from(secs).ok()?, u32::try_from(nanos).ok()?)
            .checked_add(SETTLED)
    };
    // a file changed within SETTLED of now, or dated in the future, gets no stamp
    if at(meta.mtime(), meta.mtime_nsec())? > now || at(meta.ctime(), meta.ctime_nsec())? > now {
        return None;
    }
    Some(Stat([
        meta.size() as i64,
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.dev() as i64,
        meta.ino() as i64,
    ]))
}

#[cfg(not(unix))]
fn stat_of(_meta: &std::fs::Metadata) -> Option<Stat> {
    None
}

/// The stamps file in the scan cache's directory, and the format of its lines.
const STAMPS: (&str, &str) = ("stamps", "operator-gen stamps v2");

/// A file's stamp: its stat, the key of its bytes and, for a source, the key of its summary.
type Stamp = (Stat, u128, Option<u128>);

/// What files were by their stat: for each file the scan read or `manifests` wrote, its
/// [`Stat`] and the cache key of its bytes (and, for a source, of its summary), so a later run
/// that finds the same stat takes the key without reading the file (a source's summary then
/// comes from the cache; an output equal to what is on disk is not read back). A line whose checksum fails, a stat that differs or a
/// key the cache does not hold means the file is read, as without stamps; a file that changed
/// within [`SETTLED`] of the run gets no stamp. Unix only: elsewhere every file is read.
pub struct Stamps {
    dir: PathBuf,
    seed: u64,
    /// The stamps file's lines that check out, read on first use.
    known: std::sync::OnceLock<HashMap<PathBuf, Stamp>>,
    /// The stamps of this run's files, written by [`Stamps::store`].
    seen: std::sync::Mutex<std::collections::BTreeMap<PathBuf, Stamp>>,
}

impl Stamps {
    fn new(dir: PathBuf, seed: u64) -> Stamps {
        Stamps {
            dir,
            seed,
            known: std::sync::OnceLock::new(),
            seen: std::sync::Mutex::new(std::collections::BTreeMap::new()),
        }
    }

    /// The key of `bytes`, as the summary cache computes it.
    pub fn key(&self, bytes: &[u8]) -> u128 {
        content_key(self.seed, bytes)
    }

    fn line_sum(&self, line: &str) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::with_seed(self.seed);
        h.update(STAMPS.1.as_bytes());
        h.update(b"\0");
        h.update(line.as_bytes());
        h.digest()
    }

    fn known(&self) -> &HashMap<PathBuf, Stamp> {
        self.known.get_or_init(|| {
            let text = std::fs::read_to_string(self.dir.join(STAMPS.0)).unwrap_or_default();
            text.lines()
                .filter_map(|line| {
                    let (sum, rest) = line.split_once(' ')?;
                    if u64::from_str_radix(sum, 16).ok()? != self.line_sum(rest) {
                        return None;
                    }
                    let mut parts = rest.splitn(10, ' ');
                    let key = u128::from_str_radix(parts.next()?, 16).ok()?;
                    let meaning = match parts.next()? {
                        "-" => None,
                        m => Some(u128::from_str_radix(m, 16).ok()?),
                    };
                    let mut stat = [0i64; 7];
                    for v in &mut stat {
                        *v = parts.next()?.parse().ok()?;
                    }
                    let path = PathBuf::from(parts.next()?);
                    Some((path, (Stat(stat), key, meaning)))
                })
                .collect()
        })
    }

    /// The key of the file at `path` with metadata `meta`, when an earlier run stamped it
    /// with the same stat.
    fn key_of(&self, path: &Path, meta: &std::fs::Metadata) -> Option<u128> {
        self.stamp_of(path, meta).map(|(key, _)| key)
    }

    /// The keys of the bytes and of the summary of the file at `path` with metadata `meta`,
    /// when an earlier run stamped it with the same stat.
    fn stamp_of(&self, path: &Path, meta: &std::fs::Metadata) -> Option<(u128, Option<u128>)> {
        let stat = stat_of(meta)?;
        let (was, key, meaning) = self.known().get(path)?;
        (*was == stat).then_some((*key, *meaning))
    }

    /// Records that the file at `path`, with metadata `meta` taken before its bytes were
    /// read, holds the bytes whose key is `key` and, for a source, means the summary whose key
    /// is `meaning`.
    fn note(&self, path: &Path, meta: &std::fs::Metadata, key: u128, meaning: Option<u128>) {
        let Some(stat) = stat_of(meta) else { return };
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(path.to_path_buf(), (stat, key, meaning));
        }
    }

    /// Whether the file at `path` holds the bytes whose key is `key`, by its stamp (false
    /// when it has none that matches: the caller reads it).
    pub fn unchanged(&self, path: &Path, key: u128) -> bool {
        let Ok(meta) = std::fs::metadata(path) else {
            return false;
        };
        if self.key_of(path, &meta) == Some(key) {
            self.note(path, &meta, key, None);
            return true;
        }
        false
    }

    /// Records that `path` now holds the bytes whose key is `key` (just written or checked).
    pub fn holds(&self, path: &Path, key: u128) {
        if let Ok(meta) = std::fs::metadata(path) {
            self.note(path, &meta, key, None);
        }
    }

    /// Writes the stamps of this run's files, when they differ from the last run's (best
    /// effort: stamps that cannot be written only cost the next run reads).
    pub fn store(&self) {
        let Ok(seen) = self.seen.lock() else { return };
        let known = self.known();
        if seen.len() == known.len() && seen.iter().all(|(p, s)| known.get(p) == Some(s)) {
            return;
        }
        let mut text = String::new();
        for (path, (Stat(stat), key, meaning)) in seen.iter() {
            let Some(path) = path.to_str().filter(|p| !p.contains('\n')) else {
                continue;
            };
            let mut rest = match meaning {
                Some(m) => format!("{key:032x} {m:032x}"),
                None => format!("{key:032x} -"),
            };
            for v in stat {
                rest.push_str(&format!(" {v}"));
            }
            rest.push(' ');
            rest.push_str(path);
            text.push_str(&format!("{:016x} {rest}\n", self.line_sum(&rest)));
        }
        let _ = write_atomically(&self.dir, STAMPS.0, text.as_bytes());
    }
}

/// Writes `dir/file` by renaming a finished temporary file over it, so a reader sees the old
/// file or the new one.
pub(crate) fn write_atomically(dir: &Path, file: &str, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(dir, file, |out| out.write_all(bytes))
}

/// [`write_atomically`] of what `write` writes, through a buffer.
fn write_atomically_with(
    dir: &Path,
    file: &str,
    write: impl FnOnce(&mut std::io::BufWriter<&mut tempfile::NamedTempFile>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{file}-"))
        .tempfile_in(dir)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut tmp);
    write(&mut out)?;
    std::io::Write::flush(&mut out)?;
    drop(out);
    tmp.persist(dir.join(file)).map_err(|e| e.error)?;
    Ok(())
}
