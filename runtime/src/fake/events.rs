//! Events: the apiserver keeps core and `events.k8s.io` Events as one store, the latter's
//! fields renamed; these are the names on each side.

use serde_json::Value;

/// The group whose Events the apiserver stores as core Events.
pub(super) const EVENTS_GROUP: &str = "events.k8s.io";

/// The fields a core Event and an `events.k8s.io` Event name differently, core's first.
pub(super) const CORE_TO_EVENTS: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// The same pairs the other way round.
pub(super) const EVENTS_TO_CORE: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
    ("reportingController", "reportingComponent"),
];

/// Renames top-level fields `from` → `to`, for each pair present.
pub(super) fn rename_fields(obj: &mut Value, pairs: &[(&str, &str)]) {
    if let Value::Object(map) = obj {
        for (from, to) in pairs {
            if let Some(v) = map.remove(*from) {
                map.insert((*to).to_owned(), v);
            }
        }
    }
}
