//! API types: one module per version, one file per kind.

pub mod v1;
// +operator-gen:scaffold:modules
