//! Rust twin of controller-tools' `multiple_versions` fixture: one kind in two version modules
//! sharing a type from a third module.

pub mod common {
    use operator_gen_runtime::prelude::*;
    use serde::{Deserialize, Serialize};

    #[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
    #[serde(default)]
    pub struct OuterStruct {
        /// +structType=atomic
        #[serde(rename = "struct")]
        pub inner: Option<InnerStruct>,
    }

    #[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
    #[serde(default)]
    pub struct InnerStruct {
        pub foo: Option<String>,
    }
}

pub mod v1beta1 {
    use super::common::OuterStruct;
    use operator_gen_runtime::prelude::*;
    use serde::{Deserialize, Serialize};

    /// +kubebuilder:subresource:status
    /// +kubebuilder:resource:singular=versionedresource
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]
    #[k8s(
        group = "testdata.kubebuilder.io",
        version = "v1beta1",
        kind = "VersionedResource"
    )]
    pub struct VersionedResourceSpec {
        #[serde(rename = "struct", default)]
        pub outer: Option<OuterStruct>,
    }
}

pub mod v1beta2 {
    use super::common;
    use operator_gen_runtime::prelude::*;
    use serde::{Deserialize, Serialize};

    /// +kubebuilder:subresource:status
    /// +kubebuilder:resource:singular=versionedresource
    /// +kubebuilder:storageversion
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]
    #[k8s(
        group = "testdata.kubebuilder.io",
        version = "v1beta2",
        kind = "VersionedResource"
    )]
    pub struct VersionedResourceSpec {
        #[serde(rename = "struct", default)]
        pub outer: Option<common::OuterStruct>,
    }
}
