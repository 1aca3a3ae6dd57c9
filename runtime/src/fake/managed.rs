//! Field ownership, as `metadata.managedFields` records it: which manager last set which leaf.

use serde_json::{Value, json};

use super::fields::{self, Fields};

/// One manager's entry of `metadata.managedFields`.
#[derive(Debug, Clone)]
pub(super) struct Managed {
    pub(super) manager: String,
    pub(super) operation: String,
    pub(super) subresource: Option<String>,
    pub(super) api_version: String,
    pub(super) time: Value,
    pub(super) fields: Fields,
}

impl Managed {
    pub(super) fn same_owner(
        &self,
        manager: &str,
        operation: &str,
        subresource: Option<&str>,
    ) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource.as_deref() == subresource
    }
}

pub(super) fn managed_of(obj: &Value) -> Vec<Managed> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| Managed {
                    manager: e["manager"].as_str().unwrap_or_default().to_owned(),
                    operation: e["operation"].as_str().unwrap_or_default().to_owned(),
                    subresource: e["subresource"].as_str().map(str::to_owned),
                    api_version: e["apiVersion"].as_str().unwrap_or_default().to_owned(),
                    time: e["time"].clone(),
                    fields: fields::from_fields_v1(&e["fieldsV1"]),
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn write_managed(obj: &mut Value, entries: &[Managed]) {
    let list: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let mut entry = json!({
                "manager": e.manager, "operation": e.operation, "apiVersion": e.api_version,
                "time": e.time, "fieldsType": "FieldsV1", "fieldsV1": fields::to_fields_v1(&e.fields),
            });
            if let Some(sub) = &e.subresource {
                entry["subresource"] = json!(sub);
            }
            entry
        })
        .collect();
    if let Value::Object(meta) = &mut obj["metadata"] {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(list));
        }
    }
}

/// Gives `fields` to the `(manager, operation, subresource)` entry, taking them from the others.
pub(super) fn take_fields(
    entries: &mut Vec<Managed>,
    owner: &Managed,
    fields: &Fields,
    replace: bool,
) {
    for entry in entries.iter_mut() {
        if entry.same_owner(
            &owner.manager,
            &owner.operation,
            owner.subresource.as_deref(),
        ) {
            continue;
        }
        entry
            .fields
            .retain(|p| !fields.iter().any(|f| fields::overlaps(p, f)));
    }
    match entries.iter_mut().find(|e| {
        e.same_owner(
            &owner.manager,
            &owner.operation,
            owner.subresource.as_deref(),
        )
    }) {
        Some(entry) => {
            if replace {
                entry.fields = fields.clone();
            } else {
                entry.fields.extend(fields.iter().cloned());
            }
            entry.time = owner.time.clone();
            entry.api_version = owner.api_version.clone();
        }
        None => {
            let mut entry = owner.clone();
            entry.fields = fields.clone();
            entries.push(entry);
        }
    }
    entries.retain(|e| !e.fields.is_empty());
}
