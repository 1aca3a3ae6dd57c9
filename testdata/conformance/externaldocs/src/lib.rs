//! Rust twin of controller-tools' `externaldocs` fixture: externalDocs on fields and types.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// ExternalDocSpec defines the desired state of ExternalDoc
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(
    group = "testdata.kubebuilder.io",
    version = "v1",
    kind = "ExternalDoc",
    doc = "ExternalDoc is the Schema for the external docs API"
)]
#[serde(default, rename_all = "camelCase")]
pub struct ExternalDocSpec {
    /// This tests that external documentation can be attached to a field with url and description.
    /// +kubebuilder:externalDocs:url="https://example.com/docs",description="external docs description"
    pub field_with_external_doc: Option<String>,
    /// This tests that external documentation can be attached with only url.
    #[k8s(external_docs(url = "https://example.com/docs"))]
    #[serde(rename = "fieldWithExternalDocURLOnly")]
    pub field_with_external_doc_url_only: Option<String>,
    /// This tests that external documentation from a type is propagated.
    pub type_with_external_doc: Option<TypeWithExternalDoc>,
}

/// TypeWithExternalDoc is a type with external documentation.
/// +kubebuilder:externalDocs:url="https://example.com/type-docs",description="type-level external docs"
#[derive(Schema, Serialize, Deserialize, Clone, Debug)]
pub struct TypeWithExternalDoc(pub String);
