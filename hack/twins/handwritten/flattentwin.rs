//! The FlattenTwin kind: structs that flatten others, whose type-level markers the flattening
//! structs carry. Written by hand in hack/twins/handwritten; hack/twins copies it here.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// FlattenInner is embedded two levels deep.
/// +kubebuilder:validation:XValidation:rule="self.c > 0",message="inner"
/// +kubebuilder:validation:MinProperties=1
/// +kubebuilder:validation:MaxProperties=5
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenInner {
    pub c: i32,
}

/// FlattenMid embeds FlattenInner.
/// +kubebuilder:validation:XValidation:rule="self.b > 0",message="mid"
/// +kubebuilder:validation:MinProperties=2
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenMid {
    #[serde(flatten)]
    pub inner: FlattenInner,
    pub b: i32,
}

/// FlattenOuter embeds FlattenMid.
/// +kubebuilder:validation:XValidation:rule="self.a > 0",message="outer"
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenOuter {
    pub a: i32,
    #[serde(flatten)]
    pub mid: FlattenMid,
}

/// FlattenPlain has no markers of its own.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenPlain {
    #[serde(flatten)]
    pub mid: FlattenMid,
    pub d: i32,
}

/// +kubebuilder:validation:XValidation:rule="self.x1 >= 0"
/// +kubebuilder:validation:MinProperties=1
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenFirst {
    pub x1: i32,
}

/// +kubebuilder:validation:XValidation:rule="self.x2 >= 0"
/// +kubebuilder:validation:MinProperties=2
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenSecond {
    pub x2: i32,
}

/// FlattenPair embeds two structs around a field of its own.
/// +kubebuilder:validation:XValidation:rule="self.y >= 0"
/// +kubebuilder:validation:XValidation:rule="self.y < 100"
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenPair {
    #[serde(flatten)]
    pub first: FlattenFirst,
    pub y: i32,
    #[serde(flatten)]
    pub second: FlattenSecond,
}

/// +kubebuilder:validation:XValidation:rule="self.z >= 0"
/// +kubebuilder:validation:MinProperties=3
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenLast {
    pub z: i32,
}

/// FlattenMany embeds a struct that embeds two, and one through a pointer.
/// +kubebuilder:validation:XValidation:rule="self.w >= 0"
/// +kubebuilder:validation:MinProperties=4
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenMany {
    #[serde(flatten)]
    pub pair: FlattenPair,
    pub w: i32,
    #[serde(flatten)]
    pub last: Option<FlattenLast>,
}

/// FlattenCarried's markers other than its rules: which an embedding struct takes.
/// +kubebuilder:validation:XValidation:rule="has(self.e) || has(self.f)"
/// +kubebuilder:validation:XEmbeddedResource
/// +kubebuilder:pruning:PreserveUnknownFields
/// +kubebuilder:validation:ExactlyOneOf=e;f
/// +kubebuilder:title=Carried
/// +kubebuilder:example={"e": 1}
/// +kubebuilder:externalDocs:url="https://example.com/carried"
/// +structType=atomic
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenCarried {
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e: Option<i32>,
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f: Option<i32>,
}

/// FlattenCarrier embeds FlattenCarried.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenCarrier {
    #[serde(flatten)]
    pub carried: FlattenCarried,
    pub g: i32,
}

/// FlattenTwinSpec holds structs that embed others.
///
/// +kubebuilder:subresource:status
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]
#[k8s(
    group = "twins.operator-gen.io",
    version = "v1",
    kind = "FlattenTwin",
    status = "FlattenTwinStatus",
    doc = "FlattenTwin holds structs that embed others."
)]
#[serde(rename_all = "camelCase")]
pub struct FlattenTwinSpec {
    pub flatten_outer: FlattenOuter,

    pub flatten_plain: FlattenPlain,

    pub flatten_many: FlattenMany,

    /// A field's own rule comes before its type's.
    /// +kubebuilder:validation:XValidation:rule="self.w < 10"
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flatten_many_ruled: Option<FlattenMany>,

    pub flatten_carrier: FlattenCarrier,
}

/// FlattenTwinStatus is empty: the comparison is about the spec.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FlattenTwinStatus {}
