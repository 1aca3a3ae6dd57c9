use operator_gen_runtime::prelude::*;

#[derive(Schema, serde::Serialize, serde::Deserialize, Clone, Debug)]
pub enum Source {
    Default,
    Url { url: String },
}

fn main() {}
