use operator_gen_runtime::prelude::*;

#[derive(CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug)]
#[k8s(
    group = "ship.example.com",
    version = "v1",
    kind = "Frigate",
    doc = "Frigate is a ship.\n+kubebuilder:subresource:status"
)]
pub struct FrigateSpec {
    pub replicas: i32,
}

fn main() {}
