//! The CRD cache: each kind's CRD, with the content of every module its emission looked up, by
//! the key of what the kind is (its spec structs, the settings, the crates read).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::store::TextCache;
use crate::manifests::incremental::{Crd, Dependency, Now, Reuse};

/// The CRD cache's file in the cache's directory.
const CRDS_FILE: &str = "crds";

/// The format of its entries: a new format is a new name.
const CRDS_FORMAT: &str = "operator-gen crd v1";

/// The CRD cache in `dir`.
pub(crate) fn open(dir: &Path) -> TextCache {
    TextCache::new(dir.to_path_buf(), CRDS_FILE, CRDS_FORMAT)
}

/// A cached CRD: the content of each module its emission looked up (`None`: the module did
/// not exist) and what it emitted.
#[derive(Serialize, Deserialize)]
struct CachedCrd {
    depends_on: Vec<Dependency>,
    file: String,
    yaml: String,
}

/// The CRD cached for the kind `identity` describes, when every module it depended on is as
/// `now` says it is.
pub(crate) fn get(cache: &TextCache, identity: &str, now: &Now) -> Reuse<Crd> {
    let key = cache.key(identity.as_bytes());
    let hit = cache
        .get(key)
        .and_then(|text| serde_json::from_str::<CachedCrd>(text).ok())
        .filter(|c| {
            c.depends_on
                .iter()
                .all(|(path, was)| now(path).as_ref() == Some(was))
        });
    match hit {
        Some(c) => Reuse::Hit((c.file, c.yaml)),
        None => Reuse::Miss(key),
    }
}

/// The cache entry of a CRD emitted under `key` that depended on `depends_on`.
pub(crate) fn entry(
    key: u128,
    depends_on: Vec<Dependency>,
    (file, yaml): &Crd,
) -> Option<(u128, String)> {
    serde_json::to_string(&CachedCrd {
        depends_on,
        file: file.clone(),
        yaml: yaml.clone(),
    })
    .ok()
    .map(|text| (key, text))
}
