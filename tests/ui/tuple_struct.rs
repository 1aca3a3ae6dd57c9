use operator_gen_runtime::prelude::*;

#[derive(Schema, serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Position(i32, i32);

fn main() {}
