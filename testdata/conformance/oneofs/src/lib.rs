//! Rust twin of controller-tools' `oneofs` fixture: AtMostOneOf, ExactlyOneOf, AtLeastOneOf and
//! CEL rules on types.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// OneofSpec is the spec for the oneofs API.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(
    group = "testdata.kubebuilder.io",
    version = "v1beta1",
    kind = "Oneof",
    doc = "Oneof is the Schema for the Oneof API"
)]
#[serde(rename_all = "camelCase")]
pub struct OneofSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_type_with_oneof: Option<TypeWithOneof>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_type_with_oneof: Option<TypeWithMultipleOneofs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_type_with_exact_oneof: Option<TypeWithExactOneof>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_type_with_exact_oneof: Option<TypeWithMultipleExactOneofs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_with_multiple_at_least_one_of: Option<TypeWithMultipleAtLeastOneofs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_with_all_one_of: Option<TypeWithAllOneofs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_with_omit_zero: Option<TypeWithOmitZero>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_with_omit_zero_exact: Option<TypeWithOmitZeroExact>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_with_omit_zero_at_least_one_of: Option<TypeWithOmitZeroAtLeastOneOf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_custom_type_alias: Option<CustomTypeAlias>,
    /// This verifies if the custom type alias XValidation is not duplicated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_custom_type_alias: Option<CustomTypeAlias>,
}

/// +kubebuilder:validation:XValidation:message="only one of foo|bar may be set",rule="!(has(self.foo) && has(self.bar))"
/// +kubebuilder:validation:AtMostOneOf=foo;bar
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(default)]
pub struct TypeWithOneof {
    pub foo: Option<String>,
    pub bar: Option<String>,
}

/// +kubebuilder:validation:AtMostOneOf=a;b
/// +kubebuilder:validation:AtMostOneOf=c;d
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(default)]
pub struct TypeWithMultipleOneofs {
    pub a: Option<String>,
    pub b: Option<String>,
    pub c: Option<String>,
    pub d: Option<String>,
}

/// +kubebuilder:validation:ExactlyOneOf=foo;bar
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(default)]
pub struct TypeWithExactOneof {
    pub foo: Option<String>,
    pub bar: Option<String>,
}

#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(exactly_one_of = ["a", "b"], exactly_one_of = ["c", "d"])]
#[serde(default)]
pub struct TypeWithMultipleExactOneofs {
    pub a: Option<String>,
    pub b: Option<String>,
    pub c: Option<String>,
    pub d: Option<String>,
}

/// +kubebuilder:validation:AtLeastOneOf=a;b
/// +kubebuilder:validation:AtLeastOneOf=c;d
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(default)]
pub struct TypeWithMultipleAtLeastOneofs {
    pub a: Option<String>,
    pub b: Option<String>,
    pub c: Option<String>,
    pub d: Option<String>,
}

/// +kubebuilder:validation:AtMostOneOf=a;b
/// +kubebuilder:validation:ExactlyOneOf=c;d
/// +kubebuilder:validation:AtLeastOneOf=e;f
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(default)]
pub struct TypeWithAllOneofs {
    pub a: Option<String>,
    pub b: Option<String>,
    pub c: Option<String>,
    pub d: Option<String>,
    pub e: Option<String>,
    pub f: Option<String>,
}

/// +kubebuilder:validation:AtMostOneOf=foo;bar
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(default)]
pub struct TypeWithOmitZero {
    pub foo: Option<String>,
    pub bar: Option<String>,
}

/// +kubebuilder:validation:ExactlyOneOf=a;b
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(default)]
pub struct TypeWithOmitZeroExact {
    pub a: Option<String>,
    pub b: Option<String>,
}

/// +kubebuilder:validation:AtLeastOneOf=c;d
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(default)]
pub struct TypeWithOmitZeroAtLeastOneOf {
    pub c: Option<String>,
    pub d: Option<String>,
}

/// CustomTypeAlias is a custom alias
/// +kubebuilder:validation:XValidation:rule="self >= 100 && self <= 1000",message="invalid CustomTypeAlias value"
#[derive(Schema, Serialize, Deserialize, Clone, Debug)]
pub struct CustomTypeAlias(pub i32);
