//! The incremental layer kept on disk, in the scan cache's directory: file summaries by content
//! ([`summaries`]), what files are by their stat ([`stamps`]), each kind's CRD with what it
//! depended on ([`crds`]) and the record of the last run ([`last_run`]). Everything is written
//! only once a run succeeded, best effort: a cache that cannot be read or written only costs
//! time, and an entry that does not check out is recomputed.

mod crds;
pub(crate) mod last_run;
mod stamps;
mod store;
mod summaries;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use stamps::Stamps;
use store::TextCache;

use super::incremental::{Crd, Dependency, Incremental, Now, ReadRecord, Reuse, Summarized};
use super::summary::ModSummary;

/// The incremental layer whose files are in one directory.
pub(crate) struct DiskCache {
    dir: PathBuf,
    summaries: TextCache,
    stamps: Stamps,
    crds: TextCache,
    /// Entries computed by this run, kept by [`Incremental::keep_computed`].
    new_summaries: Mutex<Vec<(u128, String)>>,
    new_crds: Mutex<Vec<(u128, String)>>,
}

impl DiskCache {
    /// The layer whose files are in `dir` (nothing is read before it is needed).
    pub(crate) fn new(dir: PathBuf) -> DiskCache {
        let (summaries, stamps) = summaries::open(dir.clone());
        DiskCache {
            crds: crds::open(&dir),
            dir,
            summaries,
            stamps,
            new_summaries: Mutex::new(Vec::new()),
            new_crds: Mutex::new(Vec::new()),
        }
    }
}

/// Adds `entry` to a list of new entries.
fn push(list: &Mutex<Vec<(u128, String)>>, entry: (u128, String)) {
    if let Ok(mut list) = list.lock() {
        list.push(entry);
    }
}

/// Writes a list of new entries to `cache`, in the order of their keys (the files are read in
/// parallel, so the order they were computed in differs between runs).
fn store(cache: &TextCache, list: &Mutex<Vec<(u128, String)>>) {
    let mut entries = list
        .lock()
        .map(|mut l| std::mem::take(&mut *l))
        .unwrap_or_default();
    if entries.is_empty() {
        return;
    }
    entries.sort_by_key(|(k, _)| *k);
    cache.store(entries);
}

impl Incremental for DiskCache {
    fn nothing_changed(&self, root: &Path, given: &str) -> bool {
        last_run::nothing_changed(root, self.dir.clone(), given)
    }

    fn summary_by_stat(&self, path: &Path) -> Option<(std::fs::Metadata, Summarized)> {
        let meta = std::fs::metadata(path).ok()?;
        let key = self.stamps.key_of(path, &meta)?;
        let (summary, meaning) = summaries::get(&self.summaries, key)?;
        self.stamps.note(path, &meta, key, Some(meaning));
        let known = Summarized {
            summary,
            key,
            meaning,
        };
        Some((meta, known))
    }

    fn summary_by_bytes(
        &self,
        path: &Path,
        meta: &std::fs::Metadata,
        bytes: &[u8],
    ) -> Reuse<Summarized> {
        let key = self.summaries.key(bytes);
        match summaries::get(&self.summaries, key) {
            Some((summary, meaning)) => {
                self.stamps.note(path, meta, key, Some(meaning));
                Reuse::Hit(Summarized {
                    summary,
                    key,
                    meaning,
                })
            }
            None => Reuse::Miss(key),
        }
    }

    fn summarized(
        &self,
        path: &Path,
        meta: &std::fs::Metadata,
        key: u128,
        summary: &ModSummary,
    ) -> Option<u128> {
        // the text the cache will hold, made here on the reading thread
        let cached = summaries::cached_form(&self.summaries, summary);
        let meaning = cached.as_ref().map(|(_, meaning)| *meaning);
        self.stamps.note(path, meta, key, meaning);
        if let Some((text, _)) = cached {
            push(&self.new_summaries, (key, text));
        }
        meaning
    }

    fn crd(&self, identity: &dyn Fn() -> String, now: &Now) -> Reuse<Crd> {
        crds::get(&self.crds, &identity(), now)
    }

    fn emitted_crd(&self, key: u128, depends_on: Vec<Dependency>, crd: &Crd) {
        if let Some(entry) = crds::entry(key, depends_on, crd) {
            push(&self.new_crds, entry);
        }
    }

    fn output_key(&self, text: &str) -> Option<u128> {
        Some(self.stamps.key(text.as_bytes()))
    }

    fn unchanged(&self, path: &Path, key: u128) -> bool {
        self.stamps.unchanged(path, key)
    }

    fn holds(&self, path: &Path, key: u128) {
        self.stamps.holds(path, key);
    }

    fn keep_computed(&self) {
        store(&self.summaries, &self.new_summaries);
        store(&self.crds, &self.new_crds);
    }

    fn keep_stamps(&self) {
        self.stamps.store();
    }

    fn keep_run(&self, given: &str, read: Option<ReadRecord>, written: Vec<(String, u128)>) {
        // two files, written at once
        rayon::join(
            || self.stamps.store(),
            || {
                if let Some(read) = read {
                    let record = last_run::Record::new(&self.summaries, given, read, written);
                    record.store(&self.summaries);
                }
            },
        );
    }
}
