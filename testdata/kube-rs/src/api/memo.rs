use kube::CustomResource;
use serde::{Deserialize, Serialize};

/// A memo without a schema.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "docs.example.com",
    version = "v1alpha1",
    kind = "Memo",
    namespaced,
    schema = "disabled",
    deprecated,
    derive = "PartialEq",
    attr = "allow(dead_code)"
)]
pub struct MemoSpec {
    pub text: String,
}
