//! A `manifests` run that ends without a scan when nothing it reads has changed in meaning: the
//! record of the last run that wrote the manifests (the options and crates it was given, each
//! file it read with the key of its summary, each `mod` file it looked up, and each file it
//! wrote with the key of its bytes), and the check of that record against the files as they are
//! now, by their stamps (which hold each source's summary key beside its bytes' key).
//!
//! A file edited in comments or function bodies keeps its summary, so such an edit (the usual
//! one to a controller) costs a read and a parse of that file only. Anything else that differs
//! (a summary, a lookup, an option, a crate, an output changed on disk, a damaged or foreign
//! record) sends the run through the scan, which writes the record anew.

use std::path::{Path, PathBuf};

use super::stamps::Stamps;
use super::store::{TextCache, write_atomically};
use super::summaries;
use crate::manifests::incremental::{Lookup, ReadFile, ReadRecord};
use crate::manifests::read::{child_file, file_id, first_of_each, read_bytes, summarize_bytes};

/// The record's file in the cache's directory.
const RECORD_FILE: &str = "last-run";

/// The format of its text, named on its first line.
const RECORD_FORMAT: &str = "operator-gen last run v1";

/// What the last run that wrote the manifests read and wrote.
#[derive(Debug, PartialEq)]
pub(crate) struct Record {
    /// The key of what the run was given besides files: see [`nothing_changed`]'s `given`.
    given: u128,
    files: Vec<ReadFile>,
    lookups: Vec<Lookup>,
    /// Each file written, relative to the project root, with the key of its bytes.
    outputs: Vec<(String, u128)>,
}

impl Record {
    /// The record of a run given `given` that read `read` and wrote `outputs`, keyed as
    /// `cache` keys (the summary cache).
    pub(crate) fn new(
        cache: &TextCache,
        given: &str,
        read: ReadRecord,
        outputs: Vec<(String, u128)>,
    ) -> Record {
        Record {
            given: cache.key(given.as_bytes()),
            files: read.files,
            lookups: read.lookups,
            outputs,
        }
    }

    /// Writes the record (best effort: a record that cannot be written, or one with a path
    /// its lines cannot hold, only costs the next run a scan).
    pub(crate) fn store(&self, cache: &TextCache) {
        let Some(body) = self.text() else {
            return;
        };
        let text = format!("{:032x}\n{body}", cache.key(body.as_bytes()));
        let _ = write_atomically(cache.dir(), RECORD_FILE, text.as_bytes());
    }

    /// The record as lines of tab-separated fields, after a line naming the format; `None`
    /// when a path is not UTF-8 or holds a tab or a line break.
    fn text(&self) -> Option<String> {
        fn plain(s: &str) -> Option<&str> {
            (!s.contains(['\t', '\n'])).then_some(s)
        }
        fn field(p: &Path) -> Option<&str> {
            p.to_str().and_then(plain)
        }
        let maybe = |s: Option<&str>| s.map_or(String::new(), |s| format!("+{s}"));
        let mut out = format!("{}\ngiven\t{:032x}\n", RECORD_FORMAT, self.given);
        for f in &self.files {
            out.push_str(&format!(
                "file\t{:032x}\t{}\t{}\n",
                f.meaning,
                f.same_as,
                field(&f.path)?
            ));
        }
        for l in &self.lookups {
            let (file, dir) = match &l.found {
                Some((file, dir)) => (Some(field(file)?), Some(field(dir)?)),
                None => (None, None),
            };
            let explicit = match l.explicit.as_deref() {
                Some(e) => Some(plain(e)?),
                None => None,
            };
            out.push_str(&format!(
                "lookup\t{}\t{}\t{}\t{}\t{}\n",
                field(&l.dir)?,
                plain(&l.name)?,
                maybe(explicit),
                maybe(file),
                maybe(dir)
            ));
        }
        for (rel, key) in &self.outputs {
            out.push_str(&format!("output\t{key:032x}\t{}\n", plain(rel)?));
        }
        Some(out)
    }

    /// The record [`Record::text`] wrote, unless a line does not parse.
    fn parse(body: &str) -> Option<Record> {
        let mut lines = body.lines();
        if lines.next()? != RECORD_FORMAT {
            return None;
        }
        let hex = |s: &str| u128::from_str_radix(s, 16).ok();
        fn maybe(s: &str) -> Option<Option<&str>> {
            match s {
                "" => Some(None),
                s => s.strip_prefix('+').map(Some),
            }
        }
        let mut record = Record {
            given: 0,
            files: Vec::new(),
            lookups: Vec::new(),
            outputs: Vec::new(),
        };
        for line in lines {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields.as_slice() {
                ["given", key] => record.given = hex(key)?,
                ["file", meaning, same_as, path] => record.files.push(ReadFile {
                    path: PathBuf::from(path),
                    meaning: hex(meaning)?,
                    same_as: same_as.parse().ok()?,
                }),
                ["lookup", dir, name, explicit, file, child_dir] => {
                    let found = match (maybe(file)?, maybe(child_dir)?) {
                        (Some(file), Some(child_dir)) => {
                            Some((PathBuf::from(file), PathBuf::from(child_dir)))
                        }
                        (None, None) => None,
                        _ => return None,
                    };
                    record.lookups.push(Lookup {
                        dir: PathBuf::from(dir),
                        name: name.to_string(),
                        explicit: maybe(explicit)?.map(str::to_string),
                        found,
                    });
                }
                ["output", key, rel] => record.outputs.push((rel.to_string(), hex(key)?)),
                _ => return None,
            }
        }
        Some(record)
    }
}

/// The record in the cache's directory, when its checksum (seeded with this build: another
/// build's record fails it, as a damaged one does) checks out and it parses.
fn load(cache: &TextCache) -> Option<Record> {
    let text = crate::gate::read_cache(&cache.dir().join(RECORD_FILE));
    let (head, body) = text.split_once('\n')?;
    if u128::from_str_radix(head, 16).ok()? != cache.key(body.as_bytes()) {
        return None;
    }
    Record::parse(body)
}

/// Whether the files of an earlier scan (`files`, `lookups`, see
/// [`crate::manifests::read::Files::record`]) still mean what they meant: each file's summary the
/// same (its bytes may differ in comments and function bodies), the same files one another, and
/// each `mod` lookup finding the same file. A scan would then build what that one built. A file is
/// read and summarized only when its stamp does not say what it means; `false` as soon as one thing
/// differs.
fn still_mean(files: &[ReadFile], lookups: &[Lookup], cache: &TextCache, stamps: &Stamps) -> bool {
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
                let Some((_, meaning)) = summaries::cached_form(cache, &summarize_bytes(&bytes))
                else {
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

/// Whether the run recorded in the cache in `dir` would write what it wrote and the files it
/// wrote still hold it: the same `given` (the options and the crates, described by the
/// caller), every file it read still meaning the same ([`still_mean`]), every output's
/// stamp matching. Then the stamps are stored, and the run has nothing left to do.
pub(crate) fn nothing_changed(root: &Path, dir: PathBuf, given: &str) -> bool {
    // stamps of its own: what the check notes is kept only when nothing changed
    let (cache, stamps) = summaries::open(dir);
    let Some(record) = load(&cache) else {
        return false;
    };
    let same = record.given == cache.key(given.as_bytes())
        && still_mean(&record.files, &record.lookups, &cache, &stamps)
        && record
            .outputs
            .iter()
            .all(|(rel, key)| stamps.unchanged(&root.join(rel), *key));
    if same {
        stamps.store();
    }
    same
}
