//! The demo operator: API types and the controllers that reconcile them.

pub mod api;
pub mod controller;
// +operator-gen:scaffold:modules
