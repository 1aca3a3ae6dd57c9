use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(kube::CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "tools.example.com",
    version = "v1beta1",
    kind = "Gadget",
    plural = "gadgetry",
    singular = "gizmo",
    scale = r#"{"specReplicasPath":".spec.size","statusReplicasPath":".status.size"}"#,
    deprecated = "use tools.example.com/v1 Gizmo",
    served = true,
    storage = false,
    crates(serde_json = "::serde_json")
)]
pub struct GadgetSpec {
    pub size: i32,
    pub bytes: Vec<u8>,
    pub tiny: i8,
    pub mid: u16,
    pub index: usize,
    pub weight: f32,
    pub boxed: Box<String>,
    pub set: std::collections::BTreeSet<String>,
}
