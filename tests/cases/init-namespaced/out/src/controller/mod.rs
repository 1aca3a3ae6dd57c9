//! Controllers: one module per kind.

pub mod captain;
// +operator-gen:scaffold:modules
