use operator_gen_runtime::prelude::*;

#[derive(Schema, Clone, Copy)]
pub union Payload {
    pub small: i32,
    pub large: i64,
}

fn main() {}
