//! The size of a CRD as the apiserver stores it in etcd, which refuses a request bigger than
//! its `--max-request-bytes` (1.5 MiB by default): the object as compact JSON (what the
//! apiserver encodes CRDs as, whatever the manifest's YAML looks like), plus the field set of
//! its server-side apply entry in `metadata.managedFields` (the fields the manifest sets, by
//! name, without values; `versions` is one atomic field), plus a margin for what the apiserver adds besides (uid, timestamps,
//! generation, its own managed-fields entry for the status, the status itself, etcd's key).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

/// etcd's default request limit (`--max-request-bytes`, 1.5 MiB): the largest CRD stored.
pub const MAX_CRD_BYTES: usize = 3 << 19;

/// What the apiserver adds to a CRD besides the manifest and its field set, bounded: its
/// status (conditions with their messages, accepted names, stored versions), the status
/// manager's managed-fields entry, uid, timestamps and generation, and etcd's key and framing.
pub const STORED_MARGIN: usize = 16 << 10;

/// The bytes the apiserver stores for `crd`: see the module's documentation.
pub fn stored_bytes(crd: &CustomResourceDefinition) -> usize {
    let mut value = serde_json::to_value(crd).unwrap_or(Value::Null);
    let json = serde_json::to_vec(&value).map(|v| v.len()).unwrap_or(0);
    // the field set leaves out apiVersion and kind
    if let Value::Object(m) = &mut value {
        m.remove("apiVersion");
        m.remove("kind");
    }
    json + fields_len(&value) + STORED_MARGIN
}

/// The length of one member `"name":` of a field set, without its value.
fn entry_len(name: &str) -> usize {
    serde_json::to_string(name).map(|s| s.len()).unwrap_or(0) + 1
}

/// The length of the field set (`fieldsV1`) of a value: `{"f:child":...}` for an object, `{}`
/// for anything else. Lists are atomic in a CRD's field set (the apiserver records `versions`,
/// schemas and all, as `"f:versions":{}`), so a schema's size does not grow it.
fn fields_len(v: &Value) -> usize {
    match v {
        Value::Object(m) if !m.is_empty() => {
            let members: usize = m
                .iter()
                .map(|(k, v)| entry_len(&format!("f:{k}")) + fields_len(v))
                .sum();
            members + m.len() - 1 + 2
        }
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_set_names_every_field_without_values_and_lists_whole() {
        let v = serde_json::json!({
            "a": "a long value the field set leaves out",
            "b": {"c": 1},
            "d": ["x", "y"],
            "e": [{"name": "x", "schema": {"type": "object"}}],
        });
        let want = r#"{"f:a":{},"f:b":{"f:c":{}},"f:d":{},"f:e":{}}"#;
        assert_eq!(fields_len(&v), want.len());
    }
}
