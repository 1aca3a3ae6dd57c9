//! What the apiserver does to a custom resource before validating it, in its order: unknown
//! fields pruned, `null`s of fields that are neither nullable nor defaulted dropped, defaults
//! set.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::Value;

use super::structural::{additional, items};

/// The fields of a resource's root (and of an embedded resource) that its schema need not name.
const TYPE_FIELDS: &[&str] = &["apiVersion", "kind", "metadata"];

/// Removes the fields `s` does not know, unless it preserves unknown fields; `root` is true at
/// a resource's root or an embedded resource, whose type and metadata stay.
pub(crate) fn prune(s: &JSONSchemaProps, v: &mut Value, root: bool) {
    let preserve = s.x_kubernetes_preserve_unknown_fields == Some(true);
    match v {
        Value::Object(map) => {
            let properties = s.properties.as_ref();
            let other = additional(s);
            map.retain(|k, _| {
                preserve
                    || properties.is_some_and(|p| p.contains_key(k))
                    || other.is_some()
                    || (root && TYPE_FIELDS.contains(&k.as_str()))
            });
            for (k, item) in map.iter_mut() {
                if root && k == "metadata" {
                    continue;
                }
                if let Some(prop) = properties.and_then(|p| p.get(k)).or(other) {
                    prune(
                        prop,
                        item,
                        prop.x_kubernetes_embedded_resource == Some(true),
                    );
                }
            }
        }
        Value::Array(list) => {
            if let Some(items) = items(s) {
                for item in list {
                    prune(
                        items,
                        item,
                        items.x_kubernetes_embedded_resource == Some(true),
                    );
                }
            }
        }
        _ => {}
    }
}

fn dropped_null(s: &JSONSchemaProps) -> bool {
    s.nullable != Some(true) && s.default.is_none()
}

/// Removes the `null` fields whose schema neither allows `null` nor has a default.
pub(crate) fn drop_nulls(s: &JSONSchemaProps, v: &mut Value) {
    match v {
        Value::Object(map) => {
            let schema_of = |k: &str| {
                s.properties
                    .as_ref()
                    .and_then(|p| p.get(k))
                    .or_else(|| additional(s))
            };
            map.retain(|k, item| !(item.is_null() && schema_of(k).is_some_and(dropped_null)));
            for (k, item) in map.iter_mut() {
                if let Some(prop) = schema_of(k) {
                    drop_nulls(prop, item);
                }
            }
        }
        Value::Array(list) => {
            if let Some(items) = items(s) {
                list.iter_mut().for_each(|item| drop_nulls(items, item));
            }
        }
        _ => {}
    }
}

fn defaulted(s: &JSONSchemaProps, v: Option<&Value>) -> bool {
    s.default.is_some() && v.is_none_or(|v| v.is_null() && s.nullable != Some(true))
}

/// Sets the defaults of absent fields (and of `null`s that may not be `null`), then those
/// inside, defaults included.
pub(crate) fn default(s: &JSONSchemaProps, v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, prop) in s.properties.iter().flatten() {
                if let Some(default) = &prop.default
                    && defaulted(prop, map.get(k))
                {
                    map.insert(k.clone(), default.0.clone());
                }
            }
            for (k, item) in map.iter_mut() {
                if let Some(prop) = s
                    .properties
                    .as_ref()
                    .and_then(|p| p.get(k))
                    .or_else(|| additional(s))
                {
                    default(prop, item);
                }
            }
        }
        Value::Array(list) => {
            if let Some(items) = items(s) {
                for item in list.iter_mut() {
                    if let Some(d) = &items.default
                        && defaulted(items, Some(item))
                    {
                        *item = d.0.clone();
                    }
                    default(items, item);
                }
            }
        }
        _ => {}
    }
}
