//! The cronjob operator: API types and the controllers that reconcile them.

pub mod api;
pub mod controller;
// ANCHOR: modules
pub mod schedule;
// ANCHOR_END: modules
pub mod webhook;
// +operator-gen:scaffold:modules
