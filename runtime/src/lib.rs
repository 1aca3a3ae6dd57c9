//! The facade an operator-gen project depends on: the derives, the schema trait the derives
//! implement, manager helpers, and re-exports of the crates generated code names.

pub use operator_gen_macros::{CustomResource, Schema};

pub mod cache;
pub mod controller;
pub mod manager;
pub mod schema;
pub mod shard;
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

/// One version of a kind as its derive describes it: the spec's and the status' definitions.
/// `Kind::crd_version()` returns it; [`crd_for_versions`] puts several into one CRD.
pub struct CrdVersion {
    pub spec: schema::Definition,
    pub status: Option<schema::Definition>,
}

type Crd =
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Generator settings that change schemas (`allow_dangerous_types`, `max_desc_len`), as the
/// `operator-gen manifests` flags set them.
pub use operator_gen_codegen::schema::Settings;

/// The CRD holding every given version of one kind, built as `operator-gen manifests` builds it
/// (exactly one storage version; versions sorted by name, as controller-gen sorts them).
pub fn crd_for_versions(versions: Vec<CrdVersion>) -> Result<Crd, String> {
    crd_for_versions_with(versions, &Settings::default())
}

/// [`crd_for_versions`] with settings, e.g. `allow_dangerous_types` for float fields (the
/// twin of `operator-gen manifests --allow-dangerous-types`).
pub fn crd_for_versions_with(
    versions: Vec<CrdVersion>,
    settings: &Settings,
) -> Result<Crd, String> {
    use operator_gen_codegen::{crd, schema::Scope};
    let Some(first) = versions.first() else {
        return Err(
            "crd_for_versions needs at least one version: pass `Kind::crd_version()` of each"
                .into(),
        );
    };
    let name = first.spec.def.name.clone();
    let inputs: Vec<crd::VersionInput> = versions
        .iter()
        .map(|v| crd::VersionInput {
            spec: &v.spec,
            status: v
                .status
                .as_ref()
                .map(|s| Box::new(s.clone()) as Box<dyn Scope>),
        })
        .collect();
    match crd::crd(&inputs, settings) {
        Ok(Some(c)) => Ok(c),
        Ok(None) => Err(format!(
            "every version of {name} is marked `+kubebuilder:skipversion`: it has no CRD"
        )),
        Err(e) => Err(format!("{}: {}", e.in_type, e.message)),
    }
}

/// The CRD of one version; used by `crd()`.
#[doc(hidden)]
pub fn crd_of(spec: schema::Definition, status: Option<schema::Definition>) -> Result<Crd, String> {
    crd_for_versions(vec![CrdVersion { spec, status }])
}

/// The text of a CRD file, byte for byte what `operator-gen manifests` writes.
pub fn crd_yaml(
    crd: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
) -> String {
    operator_gen_codegen::crd::to_yaml(crd)
}
