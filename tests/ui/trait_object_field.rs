use operator_gen_runtime::prelude::*;

#[derive(Schema)]
pub struct Engine {
    pub start: Box<dyn Fn() -> bool>,
}

fn main() {}
