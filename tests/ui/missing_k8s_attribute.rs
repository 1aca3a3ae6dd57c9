use operator_gen_runtime::prelude::*;

#[derive(CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct FrigateSpec {
    pub replicas: i32,
}

fn main() {}
