//! The facade an operator-gen project depends on: the derives, the schema trait the derives
//! implement, manager helpers, and re-exports of the crates generated code names.

pub use operator_gen_macros::{CustomResource, Schema};

// The manager (probes, metrics, leader election, controllers) and the webhook server both serve
// HTTP through `serve` (listeners, TLS, the metrics authorization check), which knows neither;
// the manager also runs the webhook server. `controller` and `cache` watch through `watch`
// (streamed lists, transforms, metadata-only watches), which watches through `shard` (one
// shard's list and watch); `apply`, `events`, `shard`, `crd` and the in-memory API for tests
// (`fake`) stand on their own; `fake` admits custom resources with `admission`, the CRD schema checks a
// test or a webhook can also run on its own, and runs the `webhook` hooks registered with it.
// `hack/check-layers.sh runtime` checks that no module reaches back to one that uses it.
pub mod admission;
pub mod apply;
pub mod cache;
pub mod controller;
mod crd;
mod error;
pub mod events;
pub mod fake;
pub mod manager;
pub mod schema;
mod serve;
pub mod shard;
mod tables;
pub mod watch;
pub mod webhook;

pub use schema::Schema;

#[doc(hidden)]
pub mod __private {
    pub use operator_gen_codegen as codegen;
}

pub use either;
pub use futures;
pub use k8s_openapi;
pub use kube;
pub use serde;
pub use serde_json;
pub use tokio;
pub use tracing;

/// What a types or controller file needs in scope.
pub mod prelude {
    pub use crate::{CustomResource, Schema};
    pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
    pub use kube::{Resource, ResourceExt};
}

pub use crd::{
    CrdError, CrdErrorKind, CrdVersion, Settings, check_crd_file, crd_for_versions,
    crd_for_versions_with, crd_yaml,
};
