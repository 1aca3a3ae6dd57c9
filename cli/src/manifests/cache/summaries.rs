//! The summary cache: each file's summary by the key of its bytes, as JSON.

use std::path::PathBuf;

use super::stamps::Stamps;
use super::store::TextCache;
use crate::manifests::summary::ModSummary;

/// The summaries' cache file in the cache's directory.
const SUMMARIES_FILE: &str = "summaries";

/// The format of its entries: a new format is a new name.
const SUMMARIES_FORMAT: &str = "operator-gen scan summary v4";

/// The summary cache in `dir`, and the stamps kept beside it (keyed as it is).
pub(crate) fn open(dir: PathBuf) -> (TextCache, Stamps) {
    let cache = TextCache::new(dir, SUMMARIES_FILE, SUMMARIES_FORMAT);
    let stamps = Stamps::new(cache.dir().to_path_buf(), cache.seed());
    (cache, stamps)
}

/// The cached summary for `key` and the key of its text, unless the entry is missing or does
/// not check out.
pub(crate) fn get(cache: &TextCache, key: u128) -> Option<(ModSummary, u128)> {
    let text = cache.get(key)?;
    Some((serde_json::from_str(text).ok()?, cache.key(text.as_bytes())))
}

/// A summary as the cache holds it, and the key of that text: what its file means to the scan.
pub(crate) fn cached_form(cache: &TextCache, summary: &ModSummary) -> Option<(String, u128)> {
    let text = serde_json::to_string(summary).ok()?;
    let meaning = cache.key(text.as_bytes());
    Some((text, meaning))
}
