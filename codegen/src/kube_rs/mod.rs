//! kube-rs crates read as they are: kube's `#[derive(CustomResource)]` with its `#[kube(...)]`
//! attributes and schemars' `#[derive(JsonSchema)]` with `#[schemars(...)]`, `#[garde(...)]`
//! and `#[x_kube(...)]`, lowered to the IR ([`lower`]), and the CRD kube's own `crd()`
//! generates for such a kind ([`schema`], [`crd`]).

#[cfg(feature = "manifests")]
pub mod crd;
#[cfg(feature = "syn")]
pub mod lower;
#[cfg(feature = "manifests")]
pub mod schema;

#[cfg(feature = "syn")]
pub use lower::type_def;
