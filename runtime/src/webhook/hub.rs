//! Hub-and-spoke conversion ([`HubConverter`]): every version of a kind converts to and from one
//! hub version (the storage version) through `From` impls, so N versions need 2(N-1) impls, not
//! N(N-1), as in controller-runtime's `conversion.Hub` and `Convertible`.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::hooks::{Converter, HookError};

/// One spoke: its kind, its JSON to the hub and the hub to its JSON.
struct Spoke<H> {
    kind: String,
    to_hub: fn(Value) -> serde_json::Result<H>,
    from_hub: fn(H) -> serde_json::Result<Value>,
}

/// Why an object could not be converted; the conversion review's failure message.
#[derive(Debug, thiserror::Error)]
enum ConversionError {
    #[error("the object to convert has no apiVersion")]
    NoApiVersion,
    #[error("{kind} has no version {api_version}: this converter knows {known}")]
    UnknownVersion {
        kind: String,
        api_version: String,
        known: String,
    },
    #[error("cannot read {kind} {api_version}: {source}")]
    Read {
        kind: String,
        api_version: String,
        source: serde_json::Error,
    },
    #[error("cannot write {kind} {api_version}: {source}")]
    Write {
        kind: String,
        api_version: String,
        source: serde_json::Error,
    },
    #[error("{kind} {api_version} is not written as an object")]
    NotAnObject { kind: String, api_version: String },
}

/// Converts custom resources between a hub version `H` and its spokes, each spoke `S`
/// implementing `From<H>` and `H: From<S>`: the object is read as the version it is in, turned
/// into the hub (unless it is the hub), then into the desired version (unless that is the hub),
/// and written with the desired `apiVersion` and the object's metadata as it came.
///
/// ```no_run
/// # use operator_gen_runtime::webhook::{HubConverter, WebhookServer};
/// # mod v1 { pub type FirstMate = k8s_openapi::api::core::v1::ConfigMap; }
/// # mod v2 { pub type FirstMate = k8s_openapi::api::core::v1::ConfigMap; }
/// let server = WebhookServer::builder()
///     .converter(HubConverter::<v1::FirstMate>::new().spoke::<v2::FirstMate>())
///     .build();
/// ```
pub struct HubConverter<H> {
    spokes: BTreeMap<String, Spoke<H>>,
    hub: PhantomData<fn() -> H>,
}

impl<H> std::fmt::Debug for HubConverter<H>
where
    H: Resource<DynamicType = ()>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubConverter")
            .field("hub", &H::api_version(&()))
            .field("spokes", &self.spokes.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl<H> Default for HubConverter<H>
where
    H: Resource<DynamicType = ()> + DeserializeOwned + Serialize + Send + Sync + 'static,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<H> HubConverter<H>
where
    H: Resource<DynamicType = ()> + DeserializeOwned + Serialize + Send + Sync + 'static,
{
    /// A converter with the hub `H` and no spokes yet.
    pub fn new() -> Self {
        Self {
            spokes: BTreeMap::new(),
            hub: PhantomData,
        }
    }

    /// Adds the spoke `S`, converted through `H::from(S)` and `S::from(H)`.
    pub fn spoke<S>(mut self) -> Self
    where
        S: Resource<DynamicType = ()> + DeserializeOwned + Serialize + From<H> + 'static,
        H: From<S>,
    {
        self.spokes.insert(
            S::api_version(&()).into_owned(),
            Spoke {
                kind: S::kind(&()).into_owned(),
                to_hub: |object| serde_json::from_value::<S>(object).map(H::from),
                from_hub: |hub| serde_json::to_value(S::from(hub)),
            },
        );
        self
    }

    /// The API versions this converter knows: the hub's first, then the spokes' in order.
    pub fn api_versions(&self) -> Vec<String> {
        std::iter::once(H::api_version(&()).into_owned())
            .chain(self.spokes.keys().cloned())
            .collect()
    }

    fn spoke_of(&self, api_version: &str) -> Result<&Spoke<H>, ConversionError> {
        self.spokes
            .get(api_version)
            .ok_or_else(|| ConversionError::UnknownVersion {
                kind: H::kind(&()).into_owned(),
                api_version: api_version.to_owned(),
                known: self.api_versions().join(", "),
            })
    }

    fn read_as_hub(&self, object: Value, api_version: &str) -> Result<H, ConversionError> {
        let (kind, read) = if api_version == H::api_version(&()) {
            (H::kind(&()).into_owned(), serde_json::from_value(object))
        } else {
            let spoke = self.spoke_of(api_version)?;
            (spoke.kind.clone(), (spoke.to_hub)(object))
        };
        read.map_err(|source| ConversionError::Read {
            kind,
            api_version: api_version.to_owned(),
            source,
        })
    }

    fn write_from_hub(&self, hub: H, api_version: &str) -> Result<Value, ConversionError> {
        let (kind, written) = if api_version == H::api_version(&()) {
            (H::kind(&()).into_owned(), serde_json::to_value(hub))
        } else {
            let spoke = self.spoke_of(api_version)?;
            (spoke.kind.clone(), (spoke.from_hub)(hub))
        };
        written.map_err(|source| ConversionError::Write {
            kind,
            api_version: api_version.to_owned(),
            source,
        })
    }

    fn convert_object(
        &self,
        object: Value,
        desired_api_version: &str,
    ) -> Result<Value, ConversionError> {
        let from = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .ok_or(ConversionError::NoApiVersion)?
            .to_owned();
        // check both ends before converting, so an unknown version is named as such
        for version in [from.as_str(), desired_api_version] {
            if version != H::api_version(&()) {
                self.spoke_of(version)?;
            }
        }
        if from == desired_api_version {
            return Ok(object);
        }
        let metadata = object.get("metadata").cloned();
        let hub = self.read_as_hub(object, &from)?;
        let mut out = self.write_from_hub(hub, desired_api_version)?;
        let Value::Object(fields) = &mut out else {
            return Err(ConversionError::NotAnObject {
                kind: H::kind(&()).into_owned(),
                api_version: desired_api_version.to_owned(),
            });
        };
        fields.insert("apiVersion".to_owned(), desired_api_version.into());
        fields.insert("kind".to_owned(), H::kind(&()).into_owned().into());
        if let Some(metadata) = metadata {
            fields.insert("metadata".to_owned(), metadata);
        }
        Ok(out)
    }
}

impl<H> Converter for HubConverter<H>
where
    H: Resource<DynamicType = ()> + DeserializeOwned + Serialize + Send + Sync + 'static,
{
    fn convert(&self, object: Value, desired_api_version: &str) -> Result<Value, HookError> {
        Ok(self.convert_object(object, desired_api_version)?)
    }

    /// Objects of `H`'s group and kind.
    fn converts(&self, object: &Value) -> bool {
        let group = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|v| v.rsplit_once('/'))
            .map(|(group, _)| group);
        object.get("kind").and_then(Value::as_str) == Some(&*H::kind(&()))
            && group == Some(&*H::group(&()))
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// A kind in two versions: v1 `spec.replicas`, v2 `spec.size` (hub: v1).
    macro_rules! kind {
        ($name:ident, $version:literal, $spec:ident) => {
            #[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
            #[serde(rename_all = "camelCase")]
            struct $name {
                #[serde(default)]
                metadata: ObjectMeta,
                spec: $spec,
            }
            impl Resource for $name {
                type DynamicType = ();
                type Scope = k8s_openapi::NamespaceResourceScope;
                fn kind(_: &()) -> Cow<'_, str> {
                    "Ship".into()
                }
                fn group(_: &()) -> Cow<'_, str> {
                    "fleet.example.com".into()
                }
                fn version(_: &()) -> Cow<'_, str> {
                    $version.into()
                }
                fn api_version(_: &()) -> Cow<'_, str> {
                    concat!("fleet.example.com/", $version).into()
                }
                fn plural(_: &()) -> Cow<'_, str> {
                    "ships".into()
                }
                fn meta(&self) -> &ObjectMeta {
                    &self.metadata
                }
                fn meta_mut(&mut self) -> &mut ObjectMeta {
                    &mut self.metadata
                }
            }
        };
    }

    #[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
    struct SpecV1 {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replicas: Option<i32>,
    }

    #[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
    struct SpecV2 {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<i32>,
    }

    kind!(ShipV1, "v1", SpecV1);
    kind!(ShipV2, "v2", SpecV2);

    impl From<ShipV2> for ShipV1 {
        fn from(s: ShipV2) -> Self {
            ShipV1 {
                metadata: s.metadata,
                spec: SpecV1 {
                    replicas: s.spec.size,
                },
            }
        }
    }

    impl From<ShipV1> for ShipV2 {
        fn from(s: ShipV1) -> Self {
            ShipV2 {
                metadata: s.metadata,
                spec: SpecV2 {
                    size: s.spec.replicas,
                },
            }
        }
    }

    fn converter() -> HubConverter<ShipV1> {
        HubConverter::<ShipV1>::new().spoke::<ShipV2>()
    }

    fn ship(version: &str, spec: Value) -> Value {
        json!({
            "apiVersion": format!("fleet.example.com/{version}"),
            "kind": "Ship",
            "metadata": {"name": "pearl", "namespace": "sea", "uid": "1234", "resourceVersion": "7",
                          "labels": {"crew": "black"}},
            "spec": spec,
        })
    }

    #[test]
    fn the_hub_converts_to_its_spoke() {
        let out = converter()
            .convert(ship("v1", json!({"replicas": 3})), "fleet.example.com/v2")
            .expect("converted");
        assert_eq!(out, ship("v2", json!({"size": 3})));
    }

    #[test]
    fn a_spoke_converts_to_the_hub() {
        let out = converter()
            .convert(ship("v2", json!({"size": 5})), "fleet.example.com/v1")
            .expect("converted");
        assert_eq!(out, ship("v1", json!({"replicas": 5})));
    }

    #[test]
    fn the_same_version_is_returned_as_it_came() {
        let object = ship("v2", json!({"size": 5, "unknown": true}));
        let out = converter()
            .convert(object.clone(), "fleet.example.com/v2")
            .expect("converted");
        assert_eq!(out, object);
    }

    #[test]
    fn unknown_versions_are_refused_by_name() {
        let err = converter()
            .convert(ship("v1", json!({})), "fleet.example.com/v3")
            .expect_err("v3 is unknown")
            .to_string();
        assert_eq!(
            err,
            "Ship has no version fleet.example.com/v3: this converter knows fleet.example.com/v1, fleet.example.com/v2"
        );
        let err = converter()
            .convert(ship("v9", json!({})), "fleet.example.com/v1")
            .expect_err("v9 is unknown")
            .to_string();
        assert!(
            err.starts_with("Ship has no version fleet.example.com/v9"),
            "{err}"
        );
        let err = converter()
            .convert(json!({"spec": {}}), "fleet.example.com/v1")
            .expect_err("no apiVersion")
            .to_string();
        assert_eq!(err, "the object to convert has no apiVersion");
    }

    #[test]
    fn it_converts_only_its_own_kind() {
        let c = converter();
        assert!(c.converts(&ship("v2", json!({}))));
        let mut other = ship("v1", json!({}));
        other["kind"] = json!("Boat");
        assert!(!c.converts(&other));
        other["kind"] = json!("Ship");
        other["apiVersion"] = json!("harbour.example.com/v1");
        assert!(!c.converts(&other));
    }

    /// Converts Widgets by renaming their apiVersion, and nothing else.
    struct Widgets;

    impl Converter for Widgets {
        fn convert(&self, mut object: Value, desired: &str) -> Result<Value, HookError> {
            object["apiVersion"] = json!(desired);
            Ok(object)
        }

        fn converts(&self, object: &Value) -> bool {
            object["kind"] == "Widget"
        }
    }

    fn review(object: Value, desired: &str) -> Vec<u8> {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "42", "desiredAPIVersion": desired, "objects": [object]}
        })
        .to_string()
        .into_bytes()
    }

    /// Two kinds' converters on one server: `/convert` gives each object to its kind's.
    #[test]
    fn one_server_converts_several_kinds() {
        let server = crate::webhook::WebhookServer::builder()
            .converter(Widgets)
            .converter(converter())
            .build()
            .expect("server");
        assert_eq!(server.paths(), [crate::webhook::CONVERT_PATH]);
        let answer = |object: Value, desired: &str| -> Value {
            let a = server.handle(crate::webhook::CONVERT_PATH, &review(object, desired));
            serde_json::from_slice(&a.body).expect("json")
        };
        let ships = answer(ship("v2", json!({"size": 4})), "fleet.example.com/v1");
        assert_eq!(
            ships["response"]["convertedObjects"],
            json!([ship("v1", json!({"replicas": 4}))])
        );
        let widget = json!({"apiVersion": "fleet.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
        let widgets = answer(widget, "fleet.example.com/v2");
        assert_eq!(
            widgets["response"]["convertedObjects"][0]["apiVersion"],
            "fleet.example.com/v2"
        );
        let boat = json!({"apiVersion": "fleet.example.com/v1", "kind": "Boat", "metadata": {"name": "b"}});
        let boats = answer(boat, "fleet.example.com/v2");
        assert_eq!(boats["response"]["result"]["status"], "Failure");
        assert_eq!(
            boats["response"]["result"]["message"],
            r#"cannot convert "b" to fleet.example.com/v2: no converter for kind Boat of fleet.example.com/v1"#
        );
    }

    #[test]
    fn an_object_the_version_cannot_read_is_refused() {
        let err = converter()
            .convert(ship("v2", json!({"size": "three"})), "fleet.example.com/v1")
            .expect_err("size is no integer")
            .to_string();
        assert!(
            err.starts_with("cannot read Ship fleet.example.com/v2: "),
            "{err}"
        );
    }
}
