//! operator-gen's code generator core: the IR, the marker grammar, checks and emitters.
//! No IO: callers hand in parsed sources and take back typed values and text.

pub mod client;
pub mod crd;
pub mod ir;
pub mod known;
pub mod lower;
pub mod markers;
pub mod names;
pub mod rbac;
pub mod schema;
pub mod unquote;
pub mod webhook;
pub mod yaml;

/// The annotation every generated manifest carries, recording the generator and its version.
pub const VERSION_ANNOTATION: &str = "operator-gen.io/version";
/// This generator's version, as written into manifests.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
