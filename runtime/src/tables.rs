//! What the runtime's compact per-object tables (the event recorder's series cache, the wake
//! filter) share: how they digest strings and how they give back room.

use std::collections::HashMap;
use std::hash::Hash;

use xxhash_rust::xxh3::Xxh3Default;

/// Feeds an optional string to `h`, so that `None`, `""` and adjacent fields stay apart.
pub(crate) fn feed(h: &mut Xxh3Default, field: Option<&str>) {
    match field {
        None => h.update(&[0]),
        Some(s) => {
            h.update(&[1]);
            h.update(&(s.len() as u64).to_le_bytes());
            h.update(s.as_bytes());
        }
    }
}

/// Gives back a table's room once three quarters of it stand empty, and all of it when it is
/// empty, as after a mass deletion: a hash table keeps its capacity when entries leave.
pub(crate) fn shrink_emptied<K: Hash + Eq, V>(map: &mut HashMap<K, V>) {
    let capacity = map.capacity();
    if map.is_empty() {
        map.shrink_to_fit();
    } else if capacity > 64 && map.len() < capacity / 4 {
        map.shrink_to(map.len() * 2);
    }
}
