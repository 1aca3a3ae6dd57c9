//! The one interface between the pipeline and what it keeps between runs. The pipeline asks
//! whether it may reuse something (the whole last run, a file's summary, a kind's CRD, an output
//! already on disk) and tells what it computed, looked up and wrote; [`NoCache`] answers "no" to
//! every question and keeps nothing, and [`super::cache::DiskCache`] keeps it on disk.

use std::path::{Path, PathBuf};

use super::summary::ModSummary;

/// What a run read: its files and its `mod` lookups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReadRecord {
    pub files: Vec<ReadFile>,
    pub lookups: Vec<Lookup>,
}

/// A file a scan read: its path, the key of its summary, and which file of the scan it is on
/// disk (the index of the first with its identity, as two paths may lead to one file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadFile {
    pub path: PathBuf,
    pub meaning: u128,
    pub same_as: usize,
}

/// A `mod` declaration's file looked up by a scan: the arguments and the answer of
/// [`child_file`](super::read::child_file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lookup {
    pub dir: PathBuf,
    pub name: String,
    pub explicit: Option<String>,
    pub found: Option<(PathBuf, PathBuf)>,
}

/// A file's summary as an earlier run computed it.
pub(crate) struct Summarized {
    pub summary: ModSummary,
    /// The key of the file's bytes: what it is by content.
    pub key: u128,
    /// The key of the summary's text: what the file means to the scan, the same for two texts
    /// that differ in comments or function bodies only.
    pub meaning: u128,
}

/// An answer to "may I reuse this?".
pub(crate) enum Reuse<T> {
    /// Nothing is kept: compute it, and tell nothing.
    Off,
    /// Yes: here it is.
    Hit(T),
    /// No: compute it, and tell the layer under this key.
    Miss(u128),
}

/// A kind's CRD: its file (relative to the project root) and its text.
pub(crate) type Crd = (String, String);

/// A module an emission looked up and what it was then: the key of its file's bytes (`None`:
/// no such module).
pub(crate) type Dependency = (Vec<String>, Option<String>);

/// What a module is now, as a [`Dependency`] holds it (`None`: it cannot be told).
pub(crate) type Now<'a> = dyn Fn(&[String]) -> Option<Option<String>> + 'a;

/// What the pipeline asks of, and tells, the layer that makes runs incremental. Every question
/// has an answer that reuses nothing, which is what [`NoCache`] gives.
pub(crate) trait Incremental: Sync {
    /// Whether the last run that wrote the manifests, given what `given` describes, would write
    /// what it wrote and the files under `root` still hold it: then nothing is left to do.
    fn nothing_changed(&self, _root: &Path, _given: &str) -> bool {
        false
    }

    /// The summary of the file at `path`, when its stamp says it is as an earlier run saw it,
    /// with the file's metadata (the file is then not read).
    fn summary_by_stat(&self, _path: &Path) -> Option<(std::fs::Metadata, Summarized)> {
        None
    }

    /// The summary of `bytes`, read from the file at `path` with metadata `meta`.
    fn summary_by_bytes(
        &self,
        _path: &Path,
        _meta: &std::fs::Metadata,
        _bytes: &[u8],
    ) -> Reuse<Summarized> {
        Reuse::Off
    }

    /// Tells the summary computed for the file at `path` (whose bytes have the key `key`, from
    /// [`Incremental::summary_by_bytes`]); returns the key of what the file means to the scan.
    fn summarized(
        &self,
        _path: &Path,
        _meta: &std::fs::Metadata,
        _key: u128,
        _summary: &ModSummary,
    ) -> Option<u128> {
        None
    }

    /// The CRD of the kind `identity` describes, when an earlier run emitted it and every
    /// module that emission looked up is as it was then (`now` says what a module is now:
    /// `None` when that cannot be told, which is never as it was).
    fn crd(&self, _identity: &dyn Fn() -> String, _now: &Now) -> Reuse<Crd> {
        Reuse::Off
    }

    /// Tells a CRD emitted under `key` (from [`Incremental::crd`]) and the modules its emission
    /// looked up.
    fn emitted_crd(&self, _key: u128, _depends_on: Vec<Dependency>, _crd: &Crd) {}

    /// The key of an output's text (`None`: outputs are not keyed, and always written).
    fn output_key(&self, _text: &str) -> Option<u128> {
        None
    }

    /// Whether the file at `path` holds the text whose key is `key`, by its stamp (false when
    /// unsure: the caller writes it).
    fn unchanged(&self, _path: &Path, _key: u128) -> bool {
        false
    }

    /// Tells that the file at `path` now holds the text whose key is `key`.
    fn holds(&self, _path: &Path, _key: u128) {}

    /// Keeps what the run computed (summaries and CRDs): called once the run succeeded.
    fn keep_computed(&self) {}

    /// Keeps what the files read and written are by their stat.
    fn keep_stamps(&self) {}

    /// Keeps the stamps and the record of a run given `given` that read `read` and wrote
    /// `written` (each output relative to the project root, with its key).
    fn keep_run(&self, _given: &str, _read: Option<ReadRecord>, _written: Vec<(String, u128)>) {}
}

/// Nothing kept between runs: every file is read and summarized, every CRD emitted, every output
/// compared with what is on disk.
pub(crate) struct NoCache;

impl Incremental for NoCache {}
