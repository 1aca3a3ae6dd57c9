use operator_gen_runtime::prelude::*;

/// +genclient:nonNamespaced
#[derive(CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug)]
#[k8s(group = "ship.example.com", version = "v1", kind = "Frigate")]
pub struct FrigateSpec {
    pub replicas: i32,
}

fn main() {}
