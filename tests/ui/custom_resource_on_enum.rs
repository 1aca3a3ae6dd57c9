use operator_gen_runtime::prelude::*;

#[derive(CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug)]
#[k8s(group = "ship.example.com", version = "v1", kind = "Frigate")]
pub enum FrigateSpec {
    Small,
    Large,
}

fn main() {}
