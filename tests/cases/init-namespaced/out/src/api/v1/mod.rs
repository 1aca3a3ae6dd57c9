//! Types of the crew.example.com/v1 API.
//!
//! +groupName=crew.example.com

pub mod captain;
// +operator-gen:scaffold:modules

pub use captain::*;
// +operator-gen:scaffold:reexports
