//! The MetadataTwin kind: a root whose metadata is required, with a CEL rule on the root that
//! reads its name. Written by hand in hack/twins/handwritten; hack/twins copies it here.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// MetadataTwinItem is a small struct.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct MetadataTwinItem {
    pub size: i32,
}

/// MetadataTwinSpec holds one field.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]
#[k8s(
    group = "twins.operator-gen.io",
    version = "v1",
    kind = "MetadataTwin",
    doc = "MetadataTwin is a kind whose metadata is required.\ncontroller-gen writes its metadata as type: object, without the CEL rule on it.\n+kubebuilder:validation:XValidation:rule=\"self.metadata.name.size() <= 40\",message=\"the name has at most 40 characters\"",
    required_metadata
)]
pub struct MetadataTwinSpec {
    pub item: MetadataTwinItem,
}
