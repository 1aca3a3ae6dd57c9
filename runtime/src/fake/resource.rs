//! The resources a fake serves: how each behaves (scope, status subresource, generation), the
//! built-in ones, and what a request's path names.

use std::any::TypeId;
use std::sync::Arc;

use k8s_openapi::NamespaceResourceScope;
use kube::Resource;
use serde_json::{Value, json};

use crate::admission::Validator;

use super::events::{CORE_TO_EVENTS, EVENTS_GROUP, rename_fields};
use super::fields;

/// How a resource behaves, from its CRD or the built-in table.
#[derive(Debug, Clone)]
pub(super) struct ResourceType {
    pub(super) group: String,
    pub(super) version: String,
    pub(super) plural: String,
    pub(super) kind: String,
    pub(super) namespaced: bool,
    /// It has a status subresource.
    pub(super) status: bool,
    /// The server sets and bumps `metadata.generation`.
    pub(super) generation: bool,
    /// An update without `resourceVersion` is accepted (built-in kinds), not refused (custom).
    pub(super) unconditional_update: bool,
    /// Its lists that merge item by item (by key, or as sets) under server-side apply.
    pub(super) shape: Arc<fields::Shape>,
    /// What its CRD's schema admits; `None` for kinds without a CRD.
    pub(super) admission: Option<Arc<Validator>>,
    /// The group its objects are stored under: its own, but the core group for
    /// `events.k8s.io` Events, which the apiserver keeps as core Events.
    pub(super) store_group: String,
}

impl ResourceType {
    pub(super) fn builtin(
        group: &str,
        plural: &str,
        kind: &str,
        namespaced: bool,
        status: bool,
    ) -> Self {
        ResourceType {
            group: group.into(),
            version: "v1".into(),
            plural: plural.into(),
            kind: kind.into(),
            namespaced,
            status,
            generation: group == "apps",
            unconditional_update: true,
            shape: Arc::default(),
            admission: None,
            store_group: if group == EVENTS_GROUP { "" } else { group }.into(),
        }
    }

    pub(super) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `guestbooks.webapp.example.com`, `configmaps`: how messages name the resource.
    pub(super) fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Guestbook.webapp.example.com`, `ConfigMap`: how Invalid messages name the kind.
    pub(super) fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }
}

/// The built-in resources every fake serves.
pub(super) fn builtins() -> Vec<ResourceType> {
    vec![
        ResourceType::builtin("", "configmaps", "ConfigMap", true, false),
        ResourceType::builtin("", "secrets", "Secret", true, false),
        ResourceType::builtin("", "serviceaccounts", "ServiceAccount", true, false),
        ResourceType::builtin("", "services", "Service", true, true),
        ResourceType::builtin("", "namespaces", "Namespace", false, true),
        ResourceType::builtin("", "events", "Event", true, false),
        ResourceType::builtin("events.k8s.io", "events", "Event", true, false),
        ResourceType::builtin("coordination.k8s.io", "leases", "Lease", true, false),
        ResourceType::builtin("apps", "deployments", "Deployment", true, true),
    ]
}

/// Where an object is kept: group, plural, namespace (empty for cluster-scoped), name.
pub(super) type Key = (String, String, String, String);

pub(super) fn typed<K>() -> ResourceType
where
    K: Resource<DynamicType = ()>,
    K::Scope: 'static,
{
    ResourceType {
        group: K::group(&()).into_owned(),
        version: K::version(&()).into_owned(),
        plural: K::plural(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        namespaced: TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>(),
        status: true,
        generation: true,
        unconditional_update: false,
        shape: Arc::default(),
        admission: None,
        store_group: K::group(&()).into_owned(),
    }
}

/// What a request's path names.
pub(super) struct Target {
    pub(super) ty: ResourceType,
    pub(super) namespace: Option<String>,
    pub(super) name: Option<String>,
    pub(super) status: bool,
}

impl Target {
    pub(super) fn key(&self) -> Key {
        (
            self.ty.store_group.clone(),
            self.ty.plural.clone(),
            self.namespace.clone().unwrap_or_default(),
            self.name.clone().unwrap_or_default(),
        )
    }

    pub(super) fn name(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }
}

/// The stored object as `ty` serves it: its version's `apiVersion` and `kind`, an Event's
/// fields renamed for `events.k8s.io`.
pub(super) fn served(ty: &ResourceType, obj: &Value) -> Value {
    let mut obj = obj.clone();
    if ty.group == EVENTS_GROUP {
        rename_fields(&mut obj, CORE_TO_EVENTS);
    }
    obj["apiVersion"] = json!(ty.api_version());
    obj["kind"] = json!(ty.kind);
    obj
}
