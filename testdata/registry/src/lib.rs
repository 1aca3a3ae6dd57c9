//! The dock operator's API. `dock.rs` opens with a plain comment, not `//!`: the test compiles
//! it with `include!` beside the other crates' sources, which allows no inner attributes.

pub mod dock;
