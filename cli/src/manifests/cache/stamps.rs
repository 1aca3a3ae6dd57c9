//! Stamps: what files were by their stat, so that a run takes the key of a file's bytes (and of
//! its summary) without reading it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::store::{content_key, write_atomically};

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

/// The stamps file in the cache's directory.
const STAMPS_FILE: &str = "stamps";

/// The format of its lines, part of each line's checksum.
const STAMPS_FORMAT: &str = "operator-gen stamps v2";

/// A file's stamp: its stat, the key of its bytes and, for a source, the key of its summary.
type Stamp = (Stat, u128, Option<u128>);

/// What files were by their stat: for each file the scan read or `manifests` wrote, its [`Stat`]
/// and the cache key of its bytes (and, for a source, of its summary), so a later run that finds
/// the same stat takes the key without reading the file (a source's summary then comes from the
/// cache; an output equal to what is on disk is not read back). A line whose checksum fails, a stat
/// that differs or a key the cache does not hold means the file is read, as without stamps; a file
/// that changed within [`SETTLED`] of the run gets no stamp. Unix only: elsewhere every file is
/// read.
pub struct Stamps {
    dir: PathBuf,
    seed: u64,
    /// The stamps file's lines that check out, read on first use.
    known: std::sync::OnceLock<HashMap<PathBuf, Stamp>>,
    /// The stamps of this run's files, written by [`Stamps::store`].
    seen: std::sync::Mutex<std::collections::BTreeMap<PathBuf, Stamp>>,
}

impl Stamps {
    pub(crate) fn new(dir: PathBuf, seed: u64) -> Stamps {
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
        h.update(STAMPS_FORMAT.as_bytes());
        h.update(b"\0");
        h.update(line.as_bytes());
        h.digest()
    }

    fn known(&self) -> &HashMap<PathBuf, Stamp> {
        self.known.get_or_init(|| {
            let text = crate::gate::read_cache(&self.dir.join(STAMPS_FILE));
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
    pub(crate) fn key_of(&self, path: &Path, meta: &std::fs::Metadata) -> Option<u128> {
        self.stamp_of(path, meta).map(|(key, _)| key)
    }

    /// The keys of the bytes and of the summary of the file at `path` with metadata `meta`,
    /// when an earlier run stamped it with the same stat.
    pub(crate) fn stamp_of(
        &self,
        path: &Path,
        meta: &std::fs::Metadata,
    ) -> Option<(u128, Option<u128>)> {
        let stat = stat_of(meta)?;
        let (was, key, meaning) = self.known().get(path)?;
        (*was == stat).then_some((*key, *meaning))
    }

    /// Records that the file at `path`, with metadata `meta` taken before its bytes were
    /// read, holds the bytes whose key is `key` and, for a source, means the summary whose key
    /// is `meaning`.
    pub(crate) fn note(
        &self,
        path: &Path,
        meta: &std::fs::Metadata,
        key: u128,
        meaning: Option<u128>,
    ) {
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
        let _ = write_atomically(&self.dir, STAMPS_FILE, text.as_bytes());
    }
}
