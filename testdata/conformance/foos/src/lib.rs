//! Rust twin of controller-tools' `gen` fixture: a kind without markers, a defaulted field and
//! doc comments on spec and status.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// Spec comments SHOULD appear in the CRD spec
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(
    group = "bar.example.com",
    version = "foo",
    kind = "Foo",
    status = "FooStatus"
)]
#[serde(default, rename_all = "camelCase")]
pub struct FooSpec {
    /// This tests that defaulted fields are stripped for v1beta1,
    /// but not for v1
    /// +kubebuilder:default=fooDefaultString
    /// +kubebuilder:example=fooExampleString
    #[k8s(required)]
    pub defaulted_string: String,
}

/// Status comments SHOULD appear in the CRD spec
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct FooStatus {}
