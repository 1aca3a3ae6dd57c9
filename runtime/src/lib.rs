//! The facade an operator-gen project depends on: the derives, the schema trait the derives
//! implement, manager helpers, and re-exports of the crates generated code names.

pub use operator_gen_macros::{CustomResource, Schema};

pub mod cache;
pub mod manager;
pub mod schema;

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

/// The CRD of one version from the spec's (and status') definitions; used by `crd()`.
#[doc(hidden)]
pub fn crd_of(
    spec: schema::Definition,
    status: Option<Box<schema::Definition>>,
) -> Result<
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    String,
> {
    use operator_gen_codegen::{crd, schema::Scope};
    let status = status.map(|s| s as Box<dyn Scope>);
    let input = crd::VersionInput {
        spec: &spec,
        status,
    };
    match crd::crd(&[input], &operator_gen_codegen::schema::Settings::default()) {
        Ok(Some(c)) => Ok(c),
        Ok(None) => Err(format!(
            "{} is marked `+kubebuilder:skipversion`: it has no CRD",
            spec.def.name
        )),
        Err(e) => Err(format!("{}: {}", e.in_type, e.message)),
    }
}

/// The text of a CRD file, byte for byte what `operator-gen manifests` writes.
pub fn crd_yaml(
    crd: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
) -> String {
    operator_gen_codegen::crd::to_yaml(crd)
}
