use operator_gen_runtime::prelude::*;

#[derive(Schema)]
pub struct Engine {
    pub name: impl std::fmt::Display,
}

fn main() {}
