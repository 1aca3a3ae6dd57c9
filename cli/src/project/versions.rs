//! The versions a generated project pins, and this CLI's own.

/// kube.
pub const KUBE: &str = "5.0.0";
/// k8s-openapi.
pub const K8S_OPENAPI: &str = "0.29.0";
/// Kubernetes minor versions k8s-openapi 0.29 supports, oldest first.
pub const K8S_MINORS: &[u32] = &[33, 34, 35, 36, 37];
/// The default (newest) one.
pub const K8S_DEFAULT: &str = "1.37";
/// This CLI.
pub const CLI: &str = env!("CARGO_PKG_VERSION");
/// The Rust version a generated project declares (`rust-version`) and its image builds with:
/// operator-gen's own, which its crates and their locked dependencies need.
pub const RUST: &str = env!("CARGO_PKG_RUST_VERSION");

/// The numbers of a dot-separated version, a pre-release or build suffix aside
/// (`1.37.2-rc.1` → `[1, 37, 2]`), to order versions by.
pub fn numbers(version: &str) -> Vec<u64> {
    version
        .split(['-', '+'])
        .next()
        .unwrap_or_default()
        .split('.')
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}
