//! The names and scope of a custom resource: what its `#[k8s]` attribute and its
//! `+kubebuilder:resource` marker say, read by the CRD emitter and the derive alike.

use crate::ir::*;

/// The names and scope a root's markers give it.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceNames {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
}

/// Names of the resource a spec struct's `#[k8s(...)]` and markers declare.
pub fn names(def: &TypeDef) -> Option<ResourceNames> {
    let r = def.resource.as_ref()?;
    let res = marker(&def.markers, Kind::Resource);
    let get = |k: &str| res.and_then(|m| m.arg_str(k)).map(str::to_string);
    Some(ResourceNames {
        group: r.group.clone(),
        version: r.version.clone(),
        kind: r.kind.clone(),
        plural: get("path").unwrap_or_else(|| crate::names::plural(&r.kind)),
        singular: get("singular").unwrap_or_else(|| crate::names::singular(&r.kind)),
        namespaced: get("scope").is_none_or(|s| s != "Cluster"),
        short_names: res.map(|m| m.arg_list("shortName")).unwrap_or_default(),
        categories: res.map(|m| m.arg_list("categories")).unwrap_or_default(),
    })
}
