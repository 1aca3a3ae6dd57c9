//! Typed server-side apply, as controller-tools' apply configurations give Go: per type an apply
//! configuration whose every field is optional and serialised only when set, so a field manager
//! claims exactly the fields it sets.
//!
//! `#[derive(Schema)]` and `#[derive(CustomResource)]` write, for each struct `Foo`, `FooApply`
//! (every field an `Option`, a `with_<field>` builder per field) and `impl Apply for Foo`; enums,
//! newtypes and Kubernetes types are applied whole. For a kind `Captain` they write
//! `CaptainApply`, an alias of [`ApplyConfiguration<Captain>`]: apiVersion and kind, the
//! metadata a manager may own ([`ObjectMetaApply`]), and the spec's and status's apply
//! configurations. The typed client's `apply` and `apply_status` send it; [`extract`] reads back
//! what one manager applied.
//!
//! [`extract`]: ApplyConfiguration::extract

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::marker::PhantomData;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A type with an apply configuration: the derives implement it for every struct (its
/// `<Name>Apply`) and enum (itself, applied whole).
pub trait Apply {
    /// The apply configuration of the type.
    type Configuration: Serialize + DeserializeOwned + Clone + Debug;
}

impl<T: Apply> Apply for Box<T> {
    type Configuration = Box<T::Configuration>;
}

/// A kind with an apply configuration, [`ApplyConfiguration<Self>`]; implemented by
/// `#[derive(CustomResource)]`.
pub trait Applicable: Resource<DynamicType = ()> {
    /// The spec's apply configuration.
    type Spec: Serialize + DeserializeOwned + Clone + Debug;
    /// The status's apply configuration (`()` for a kind without status).
    type Status: Serialize + DeserializeOwned + Clone + Debug;
    /// Whether the spec's fields sit on the root object itself (`#[k8s(no_spec)]`).
    const FLAT_SPEC: bool = false;
}

/// The metadata an apply configuration may set: identity, labels, annotations, finalizers and
/// owner references. A `uid` is not a field the manager sets but a precondition: the apply is
/// refused (409 `Conflict`, "uid mismatch") unless the object of that name has that uid.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMetaApply {
    /// The object's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The object's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The uid the object must have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Labels this manager sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations this manager sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Finalizers this manager sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<Vec<String>>,
    /// Owner references this manager sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_references: Option<Vec<OwnerReference>>,
}

/// The apply configuration of the kind `K`: apiVersion and kind (always sent), the metadata
/// set, and the spec and status when set. The derive names it `<Kind>Apply`.
pub struct ApplyConfiguration<K: Applicable> {
    /// The metadata this manager sets.
    pub metadata: ObjectMetaApply,
    /// The spec's fields this manager sets.
    pub spec: Option<K::Spec>,
    /// The status's fields this manager sets.
    pub status: Option<K::Status>,
    kind: PhantomData<fn() -> K>,
}

impl<K: Applicable> Default for ApplyConfiguration<K> {
    fn default() -> Self {
        Self {
            metadata: ObjectMetaApply::default(),
            spec: None,
            status: None,
            kind: PhantomData,
        }
    }
}

impl<K: Applicable> Clone for ApplyConfiguration<K> {
    fn clone(&self) -> Self {
        Self {
            metadata: self.metadata.clone(),
            spec: self.spec.clone(),
            status: self.status.clone(),
            kind: PhantomData,
        }
    }
}

impl<K: Applicable> Debug for ApplyConfiguration<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(&format!("{}Apply", K::kind(&())))
            .field("metadata", &self.metadata)
            .field("spec", &self.spec)
            .field("status", &self.status)
            .finish()
    }
}

impl<K: Applicable> ApplyConfiguration<K> {
    /// The apply configuration of the object `name`, setting nothing yet.
    pub fn new(name: &str) -> Self {
        let mut out = Self::default();
        out.metadata.name = Some(name.to_owned());
        out
    }

    /// The apply configuration of the object `obj` itself, setting nothing yet: its name,
    /// namespace and uid. Applied once that object is deleted, it is refused (409 `Conflict`,
    /// "uid mismatch") where a configuration of the name alone would create a new object.
    pub fn of(obj: &K) -> Self {
        let mut out = Self::default();
        out.metadata.name = obj.meta().name.clone();
        out.metadata.namespace = obj.meta().namespace.clone();
        out.metadata.uid = obj.meta().uid.clone();
        out
    }

    /// Sets the uid the object must have for the apply to go through.
    pub fn with_uid(mut self, uid: &str) -> Self {
        self.metadata.uid = Some(uid.to_owned());
        self
    }

    /// Sets the namespace.
    pub fn with_namespace(mut self, namespace: &str) -> Self {
        self.metadata.namespace = Some(namespace.to_owned());
        self
    }

    /// Adds labels (a label given again takes the last value).
    pub fn with_labels<I: IntoIterator<Item = (S, S)>, S: Into<String>>(
        mut self,
        labels: I,
    ) -> Self {
        add_entries(&mut self.metadata.labels, labels);
        self
    }

    /// Adds annotations (an annotation given again takes the last value).
    pub fn with_annotations<I: IntoIterator<Item = (S, S)>, S: Into<String>>(
        mut self,
        annotations: I,
    ) -> Self {
        add_entries(&mut self.metadata.annotations, annotations);
        self
    }

    /// Adds finalizers.
    pub fn with_finalizers<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        finalizers: I,
    ) -> Self {
        let list = self.metadata.finalizers.get_or_insert_default();
        list.extend(finalizers.into_iter().map(Into::into));
        self
    }

    /// Adds owner references.
    pub fn with_owner_references<I: IntoIterator<Item = OwnerReference>>(
        mut self,
        refs: I,
    ) -> Self {
        let list = self.metadata.owner_references.get_or_insert_default();
        list.extend(refs);
        self
    }

    /// Sets the spec's apply configuration.
    pub fn with_spec(mut self, spec: K::Spec) -> Self {
        self.spec = Some(spec);
        self
    }

    /// Sets the status's apply configuration (sent by `apply_status`).
    pub fn with_status(mut self, status: K::Status) -> Self {
        self.status = Some(status);
        self
    }

    /// What `field_manager` applied to `obj` (its managed fields entry of operation `Apply`,
    /// no subresource), with the object's name and namespace: applying it again as that manager
    /// changes nothing. controller-tools' `Extract<Kind>`.
    pub fn extract(obj: &K, field_manager: &str) -> serde_json::Result<Self>
    where
        K: Serialize,
    {
        extract_with(obj, field_manager, None)
    }

    /// What `field_manager` applied to the status subresource of `obj`: controller-tools'
    /// `Extract<Kind>Status`.
    pub fn extract_status(obj: &K, field_manager: &str) -> serde_json::Result<Self>
    where
        K: Serialize,
    {
        extract_with(obj, field_manager, Some("status"))
    }
}

/// Adds `entries` to the map `map` holds, making it when there is none.
fn add_entries<S: Into<String>>(
    map: &mut Option<BTreeMap<String, String>>,
    entries: impl IntoIterator<Item = (S, S)>,
) {
    let map = map.get_or_insert_default();
    map.extend(entries.into_iter().map(|(k, v)| (k.into(), v.into())));
}

fn extract_with<K: Applicable + Serialize>(
    obj: &K,
    manager: &str,
    subresource: Option<&str>,
) -> serde_json::Result<ApplyConfiguration<K>> {
    let entry = obj.managed_fields().iter().find(|e| {
        e.manager.as_deref() == Some(manager)
            && e.operation.as_deref() == Some("Apply")
            && e.subresource.as_deref().filter(|s| !s.is_empty()) == subresource
    });
    let mut picked = match entry.and_then(|e| e.fields_v1.as_ref()) {
        Some(set) => {
            let mut value = serde_json::to_value(obj)?;
            if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("managedFields");
            }
            let set = serde_json::to_value(set)?;
            pick(&value, set.as_object().unwrap_or(&Map::new()))
        }
        None => Value::Object(Map::new()),
    };
    let mut out: ApplyConfiguration<K> = serde_json::from_value(picked.take())?;
    out.metadata.name = obj.meta().name.clone();
    out.metadata.namespace = obj.meta().namespace.clone();
    Ok(out)
}

/// The parts of `value` a FieldsV1 `set` names: `f:<field>` an object's field, `k:{...}`,
/// `v:<value>` and `i:<index>` a list's items by key, value and index, `.` the node itself. A
/// node named with nothing under it is taken whole.
fn pick(value: &Value, set: &Map<String, Value>) -> Value {
    let has_children = set.keys().any(|k| k != ".");
    if !has_children {
        return value.clone();
    }
    let child = |s: &Value| s.as_object().cloned().unwrap_or_default();
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .filter_map(|(k, v)| {
                    Some((k.clone(), pick(v, &child(set.get(&format!("f:{k}"))?))))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| Some(pick(item, &child(item_set(set, i, item)?))))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The entry of `set` naming the list item `item` at `index`.
fn item_set<'a>(set: &'a Map<String, Value>, index: usize, item: &Value) -> Option<&'a Value> {
    set.iter().find_map(|(k, v)| {
        let hit = if let Some(keys) = k.strip_prefix("k:") {
            serde_json::from_str::<Map<String, Value>>(keys)
                .is_ok_and(|keys| keys.iter().all(|(f, want)| item.get(f) == Some(want)))
        } else if let Some(val) = k.strip_prefix("v:") {
            serde_json::from_str::<Value>(val).is_ok_and(|val| &val == item)
        } else if let Some(i) = k.strip_prefix("i:") {
            i.parse() == Ok(index)
        } else {
            false
        };
        hit.then_some(v)
    })
}

impl<K: Applicable> Serialize for ApplyConfiguration<K> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("apiVersion", &K::api_version(&()))?;
        map.serialize_entry("kind", &K::kind(&()))?;
        map.serialize_entry("metadata", &self.metadata)?;
        match &self.spec {
            Some(spec) if K::FLAT_SPEC => {
                match serde_json::to_value(spec).map_err(S::Error::custom)? {
                    Value::Object(fields) => {
                        for (k, v) in &fields {
                            map.serialize_entry(k, v)?;
                        }
                    }
                    _ => {
                        return Err(S::Error::custom(
                            "a no_spec kind's spec must serialise as an object",
                        ));
                    }
                }
            }
            Some(spec) => map.serialize_entry("spec", spec)?,
            None => {}
        }
        if let Some(status) = &self.status {
            map.serialize_entry("status", status)?;
        }
        map.end()
    }
}

impl<'de, K: Applicable> Deserialize<'de> for ApplyConfiguration<K> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let Value::Object(mut fields) = Value::deserialize(deserializer)? else {
            return Err(D::Error::custom("an apply configuration is an object"));
        };
        let mut take = |key: &str| fields.remove(key).filter(|v| !v.is_null());
        let metadata = take("metadata").map(serde_json::from_value).transpose();
        let status = take("status").map(serde_json::from_value).transpose();
        let spec = if K::FLAT_SPEC {
            fields.remove("apiVersion");
            fields.remove("kind");
            (!fields.is_empty())
                .then(|| serde_json::from_value(Value::Object(fields)))
                .transpose()
        } else {
            fields
                .remove("spec")
                .filter(|v| !v.is_null())
                .map(serde_json::from_value)
                .transpose()
        };
        Ok(Self {
            metadata: metadata.map_err(D::Error::custom)?.unwrap_or_default(),
            spec: spec.map_err(D::Error::custom)?,
            status: status.map_err(D::Error::custom)?,
            kind: PhantomData,
        })
    }
}

/// The name an apply configuration names, or the error saying it names none.
fn name_of<K: Applicable>(config: &ApplyConfiguration<K>) -> kube::Result<&str> {
    config
        .metadata
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            kube::Error::BuildRequest(kube::core::request::Error::Validation(format!(
                "the {}Apply has no metadata.name: build it with {}Apply::new(name)",
                K::kind(&()),
                K::kind(&())
            )))
        })
}

/// Server-side applies `config` through `api` with `params` (`PatchParams::apply(manager)`,
/// `.force()` to take fields over from other managers). The typed client's `apply`.
pub async fn apply<K>(
    api: &Api<K>,
    config: &ApplyConfiguration<K>,
    params: &PatchParams,
) -> kube::Result<K>
where
    K: Applicable + Clone + DeserializeOwned + Debug,
{
    api.patch(name_of(config)?, params, &Patch::Apply(config))
        .await
}

/// Server-side applies `config` to the status subresource. The typed client's `apply_status`.
pub async fn apply_status<K>(
    api: &Api<K>,
    config: &ApplyConfiguration<K>,
    params: &PatchParams,
) -> kube::Result<K>
where
    K: Applicable + Clone + DeserializeOwned + Debug,
{
    api.patch_status(name_of(config)?, params, &Patch::Apply(config))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pick_takes_the_fields_items_and_leaves_a_set_names() {
        let live = json!({
            "apiVersion": "v1", "kind": "K",
            "metadata": {"name": "a", "finalizers": ["x", "y"], "labels": {"p": "1", "q": "2"}},
            "spec": {"size": 3, "colour": "red", "parts": ["a", "b"]},
            "status": {"conditions": [
                {"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}
            ]}
        });
        let set = json!({
            "f:metadata": {"f:finalizers": {".": {}, "v:\"y\"": {}}, "f:labels": {"f:q": {}}},
            "f:spec": {"f:parts": {}},
            "f:status": {"f:conditions": {"k:{\"type\":\"Synced\"}": {".": {}, "f:type": {}, "f:status": {}}}}
        });
        let picked = pick(&live, set.as_object().expect("object"));
        assert_eq!(
            picked,
            json!({
                "metadata": {"finalizers": ["y"], "labels": {"q": "2"}},
                "spec": {"parts": ["a", "b"]},
                "status": {"conditions": [{"type": "Synced", "status": "False"}]}
            })
        );
    }

    #[test]
    fn pick_by_index_and_unknown_segments() {
        let live = json!({"l": [1, 2, 3]});
        let set = json!({"f:l": {"i:1": {}, "z:9": {}}});
        assert_eq!(
            pick(&live, set.as_object().expect("object")),
            json!({"l": [2]})
        );
    }
}
