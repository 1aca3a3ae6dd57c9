//! The fleet's API types, shared by the operator and the fleet tool.

pub mod common;
pub mod v1;
