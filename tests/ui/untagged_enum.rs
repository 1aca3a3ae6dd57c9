use operator_gen_runtime::prelude::*;

#[derive(Schema, serde::Serialize, serde::Deserialize, Clone, Debug)]
#[serde(untagged)]
pub enum Port {
    Number(i32),
    Name(String),
}

fn main() {}
