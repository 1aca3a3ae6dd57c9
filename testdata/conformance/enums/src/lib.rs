//! Rust twin of controller-tools' `enums` fixture: a unit-only enum becomes a string enum.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// EnumSpec defines the desired state of Enum
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(
    group = "testdata.kubebuilder.io",
    version = "v1",
    kind = "Enum",
    doc = "Enum is a test CRD that contains an enum."
)]
#[serde(default)]
pub struct EnumSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<EnumType>,
}

#[derive(Schema, Serialize, Deserialize, Clone, Debug)]
pub enum EnumType {
    Value1,
    Value2,
}
