//! Every value an object's schema describes, with its schema, its path as field errors print it
//! (`spec.items[0]`, `spec.labels[app]`) and the old value it replaces on an update (matched by
//! field name, and by key in `map` lists; objects marked atomic match nothing inside).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::Value;

use super::path;
use super::structural::{additional, items, old_item, old_key};

/// One value: its schema, the value, its path and the old value.
pub(crate) type Visit<'a> = dyn FnMut(&JSONSchemaProps, &Value, &str, Option<&Value>) + 'a;

/// Calls `visit` on `v` and on every value inside it that `s` describes, outside in.
pub(crate) fn walk(
    s: &JSONSchemaProps,
    v: &Value,
    at: &str,
    old: Option<&Value>,
    visit: &mut Visit<'_>,
) {
    visit(s, v, at, old);
    match v {
        Value::Array(list) => {
            if let Some(items) = items(s) {
                for (i, item) in list.iter().enumerate() {
                    let old = old_item(s, item, old);
                    walk(items, item, &path::index(at, i), old, visit);
                }
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                let old = old_key(s, k, old);
                match s.properties.as_ref().and_then(|p| p.get(k)) {
                    Some(prop) => walk(prop, item, &path::child(at, k), old, visit),
                    None => {
                        if let Some(other) = additional(s) {
                            walk(other, item, &path::key(at, k), old, visit);
                        }
                    }
                }
            }
        }
        _ => {}
    }
}
