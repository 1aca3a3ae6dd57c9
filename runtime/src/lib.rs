//! The facade an operator-gen project depends on: the derives, the schema trait the derives
//! implement, manager helpers, and re-exports of the crates generated code names.

pub use operator_gen_macros::{CustomResource, Schema};

pub mod manager;
pub mod schema;

pub use schema::Schema;

#[doc(hidden)]
pub mod __private {
    pub use operator_gen_codegen as codegen;
}

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
