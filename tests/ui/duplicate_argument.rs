use operator_gen_runtime::prelude::*;

/// +kubebuilder:printcolumn:name="Replicas",type=integer,name="Count",JSONPath=".spec.replicas"
#[derive(CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug)]
#[k8s(group = "ship.example.com", version = "v1", kind = "Frigate")]
pub struct FrigateSpec {
    pub replicas: i32,
}

fn main() {}
