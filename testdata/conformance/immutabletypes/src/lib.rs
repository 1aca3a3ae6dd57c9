//! Rust twin of controller-tools' `immutabletypes` fixture: `+k8s:immutable` on required and
//! optional fields.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]
#[k8s(
    group = "testdata.kubebuilder.io",
    version = "v1",
    kind = "ImmutableType"
)]
#[serde(rename_all = "camelCase")]
pub struct ImmutableSpec {
    /// +k8s:immutable
    pub required_string: String,
    /// +k8s:immutable
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional_string: Option<String>,
    /// +k8s:immutable
    /// +optional
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub optional_literal_string: String,
    /// +k8s:immutable
    pub required_struct: NestedStruct,
    /// +k8s:immutable
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional_struct: Option<NestedStruct>,
    #[k8s(immutable, optional)]
    #[serde(default)]
    pub optional_omit_zero_struct: NestedStruct,
    /// +k8s:immutable
    pub required_slice: Vec<String>,
    /// +k8s:immutable
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub optional_slice: Vec<String>,
    /// +k8s:immutable
    pub required_map: BTreeMap<String, String>,
    /// +k8s:immutable
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub optional_map: BTreeMap<String, String>,
    pub mutable_string: String,
}

#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct NestedStruct {
    pub key: String,
    pub value: String,
}
