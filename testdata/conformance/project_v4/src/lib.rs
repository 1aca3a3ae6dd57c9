//! Rust twin of kubebuilder's testdata/project-v4 API types and reconciler RBAC.

pub mod controller;
pub mod v1;
pub mod v2;
pub mod webhook;
