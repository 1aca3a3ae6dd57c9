//! The store under every cache of the incremental layer: a content-addressed file of texts,
//! and the atomic write of a file.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A content-addressed cache of text in one file of the scan cache's directory, keyed by 128-bit
/// hashes seeded with this build of operator-gen (its version, and the size and time of the
/// running executable), so another build never reads this one's entries. An entry is two lines:
/// the key and a checksum of the key and the text, then the text, on one line; an entry's
/// checksum is checked when it is first used. One file rather than one per entry, so a run
/// opens one file however many entries it uses. A run appends the entries it computed, and
/// rewrites the file with only the entries it used once the others take more room than those.
/// The summary cache ([`super::summaries`]) and the CRD cache ([`super::crds`]) are each one.
pub(crate) struct TextCache {
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
pub(crate) fn content_key(seed: u64, bytes: &[u8]) -> u128 {
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

impl TextCache {
    /// The cache in `dir/file`, for entries in the format named `format` (a new format is a new
    /// name, so old entries are never read as new ones).
    pub(crate) fn new(dir: PathBuf, file: &'static str, format: &str) -> TextCache {
        let exe = running_executable();
        let build = format!("{format}\0{}\0{exe}", env!("CARGO_PKG_VERSION"));
        TextCache {
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
            let text = crate::gate::read_cache(&self.dir.join(self.file));
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

    /// The seed of its keys: [`TextCache::key`] is [`content_key`] with it.
    pub(crate) fn seed(&self) -> u64 {
        self.seed
    }
}

/// How old a temporary file of [`write_atomically`] is once it is one a killed run left: a
/// write takes well under a second, and a cache directory another project shares (one
/// `CARGO_TARGET_DIR`) may hold that project's temporary file, being written.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// Removes the temporary files (`.<file>-XXXXXX`) that runs killed while writing left in `dir`.
pub(crate) fn sweep_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with('.') {
            continue;
        }
        let stale = entry
            .metadata()
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|m| m.modified().ok())
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
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
    sweep_stale(dir);
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
