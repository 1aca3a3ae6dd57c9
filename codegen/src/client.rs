//! Which typed-client methods a kind gets: code-generator's `+genclient` verb rules.

use crate::diag::Diagnostic;
use crate::ir::{Marker, has_marker, marker};
use crate::markers::Kind;

/// The client verbs code-generator knows, in its method order, plus `patchStatus`.
pub const VERBS: &[&str] = &[
    "create",
    "update",
    "updateStatus",
    "delete",
    "deleteCollection",
    "get",
    "list",
    "watch",
    "patch",
    "patchStatus",
    "apply",
    "applyStatus",
];

const STATUS_VERBS: &[&str] = &["updateStatus", "patchStatus", "applyStatus"];

/// The verbs of a kind's typed client; an error names a bad marker and the fix.
pub fn verbs(markers: &[Marker], has_status: bool) -> Result<Vec<&'static str>, Diagnostic> {
    let list = |kind: Kind| marker(markers, kind).map(|m| m.arg_list_of_value());
    let only = list(Kind::GenClientOnlyVerbs);
    let skip = list(Kind::GenClientSkipVerbs).unwrap_or_default();
    for v in only.iter().flatten().chain(&skip) {
        if !VERBS.contains(&v.as_str()) {
            return Err(Diagnostic::new(format!(
                "unknown client verb `{v}`: use one of {}",
                VERBS.join(", ")
            )));
        }
    }
    if let Some(both) = only.iter().flatten().find(|v| skip.contains(v)) {
        return Err(Diagnostic::new(format!(
            "client verb `{both}` is both in onlyVerbs and skipVerbs: keep it in one"
        )));
    }
    if has_marker(markers, Kind::GenClientNoVerbs) {
        return Ok(Vec::new());
    }
    let readonly = has_marker(markers, Kind::GenClientReadonly);
    let no_status = !has_status || has_marker(markers, Kind::GenClientNoStatus);
    Ok(VERBS
        .iter()
        .copied()
        .filter(|v| only.as_ref().is_none_or(|o| o.iter().any(|x| x == v)))
        .filter(|v| !skip.iter().any(|x| x == v))
        .filter(|v| !readonly || ["get", "list", "watch"].contains(v))
        .filter(|v| !no_status || !STATUS_VERBS.contains(v))
        .collect())
}

/// Whether the typed client takes a namespace. code-generator's `+genclient:nonNamespaced`
/// asks for a cluster-scoped client, which only a cluster-scoped kind can have.
pub fn namespaced(markers: &[Marker], kind_namespaced: bool) -> Result<bool, Diagnostic> {
    if has_marker(markers, Kind::GenClientNonNamespaced) && kind_namespaced {
        return Err(Diagnostic::new(
            "`+genclient:nonNamespaced` asks for a cluster-scoped client, but the kind is namespaced: add `+kubebuilder:resource:scope=Cluster` or drop the marker",
        ));
    }
    Ok(kind_namespaced)
}

impl Marker {
    /// A single-value list marker's items.
    pub fn arg_list_of_value(&self) -> Vec<String> {
        match &self.value {
            serde_json::Value::Array(items) => {
                items.iter().map(crate::ir::value_to_string).collect()
            }
            serde_json::Value::String(s) => s.split(',').map(|p| p.trim().to_string()).collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(name: &str, value: serde_json::Value) -> Marker {
        let (def, _) = crate::markers::lookup(name).expect("a known marker");
        Marker::new(def.kind, value)
    }

    #[test]
    fn verb_sets_follow_genclient() {
        assert_eq!(verbs(&[], true).expect("ok"), VERBS.to_vec());
        assert!(!verbs(&[], false).expect("ok").contains(&"updateStatus"));
        assert_eq!(
            verbs(&[m("genclient:readonly", json!(true))], true).expect("ok"),
            ["get", "list", "watch"]
        );
        assert!(
            verbs(&[m("genclient:noVerbs", json!(true))], true)
                .expect("ok")
                .is_empty()
        );
        assert_eq!(
            verbs(&[m("genclient:onlyVerbs", json!(["create", "get"]))], true).expect("ok"),
            ["create", "get"]
        );
        let skipped = verbs(&[m("genclient:skipVerbs", json!(["patch"]))], true).expect("ok");
        assert!(!skipped.contains(&"patch") && skipped.contains(&"patchStatus"));
        assert!(
            verbs(&[m("genclient:noStatus", json!(true))], true)
                .expect("ok")
                .iter()
                .all(|v| !v.ends_with("Status"))
        );
        let both = [
            m("genclient:onlyVerbs", json!(["get"])),
            m("genclient:skipVerbs", json!(["get"])),
        ];
        assert!(
            verbs(&both, true)
                .expect_err("conflict")
                .message
                .contains("both")
        );
        let cluster = [m("genclient:nonNamespaced", json!(true))];
        assert_eq!(namespaced(&cluster, false), Ok(false));
        assert!(
            namespaced(&cluster, true)
                .expect_err("a namespaced kind")
                .message
                .contains("scope=Cluster")
        );
        assert_eq!(namespaced(&[], true), Ok(true));
        assert!(
            verbs(&[m("genclient:skipVerbs", json!(["frobnicate"]))], true)
                .expect_err("unknown")
                .message
                .contains("unknown client verb")
        );
    }
}
