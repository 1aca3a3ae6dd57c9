use operator_gen_runtime::prelude::*;
use std::collections::BTreeMap;

#[derive(CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug)]
#[k8s(group = "ship.example.com", version = "v1", kind = "Frigate")]
pub struct FrigateSpec {
    pub crew_by_deck: BTreeMap<i32, String>,
}

fn main() {}
