//! The API modules.

pub mod admiral;
pub mod captain;
// +operator-gen:scaffold:modules

pub use admiral::*;
// +operator-gen:scaffold:reexports

fn main() {
    let mut mgr = Manager::new();
    demo::controller::captain::register(&mut mgr);
    // +operator-gen:scaffold:controllers
    use crate::api::v1::{Admiral, CaptainSpec};
}
