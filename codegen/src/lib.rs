//! operator-gen's code generator core: the IR, the marker grammar, checks and emitters.
//! No IO: callers hand in parsed sources and take back typed values and text.
//!
//! Features: `manifests` (default) holds the schema, CRD, RBAC and webhook emitters, which a
//! generated operator runs when it calls `crd()`; `syn` adds the lowering from `syn` items and
//! the derives' token emitters, which only the CLI's scan and the derive macros need, so an
//! operator binary links neither syn nor them.

pub mod client;
pub mod diag;
pub mod ir;
pub mod known;
pub mod kube_rs;
pub mod markers;
pub mod names;
pub mod resource;
pub mod rustgen;
pub mod unquote;
pub mod yaml;

#[cfg(feature = "manifests")]
pub mod crd;
#[cfg(feature = "manifests")]
pub mod crd_import;
#[cfg(feature = "manifests")]
pub mod rbac;
#[cfg(feature = "manifests")]
pub mod schema;
#[cfg(feature = "manifests")]
pub mod webhook;

#[cfg(feature = "syn")]
pub mod derive;
#[cfg(feature = "syn")]
pub mod lower;

/// The annotation every generated manifest carries, recording the generator and its version.
pub const VERSION_ANNOTATION: &str = "operator-gen.io/version";
/// This generator's version, as written into manifests.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
