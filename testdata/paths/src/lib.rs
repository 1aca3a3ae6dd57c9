//! Types are known by their full path, never by their last segment: this crate's own
//! `Condition`, `Volume`, `Container`, `Time` and `Value` keep their own schemas, while
//! Kubernetes types reached through renames, globs, re-exports and the prelude get the built-in
//! ones. `operator-gen manifests` and the derive must agree on every field.

// the prelude brings k8s-openapi's `Condition`, `ObjectMeta` and `Time`; the definitions below
// shadow two of them, as in rustc
use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// Kubernetes types through a re-export of this crate's own.
pub mod k8s {
    pub use operator_gen_runtime::k8s_openapi::api::core::v1::Container as PodContainer;
    pub use operator_gen_runtime::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
}

/// Kubernetes types through a glob import.
pub mod glob {
    use operator_gen_runtime::k8s_openapi::api::networking::v1::*;
    use operator_gen_runtime::prelude::*;
    use serde::{Deserialize, Serialize};

    #[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
    #[serde(rename_all = "camelCase")]
    pub struct Networking {
        /// The ingress to expose.
        pub ingress: IngressSpec,
        pub policy: Option<NetworkPolicySpec>,
    }
}

/// A condition of this crate, not Kubernetes' metav1.Condition.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct Condition {
    pub healthy: bool,
}

/// A volume of this crate.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct Volume {
    pub size_gb: i32,
}

/// A container of this crate.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct Container {
    pub image_ref: String,
}

/// A time of day of this crate, as "HH:MM".
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct Time(pub String);

/// A value of this crate.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct Value {
    pub amount: i64,
}

use operator_gen_runtime::k8s_openapi::api::core::v1 as corev1;
use operator_gen_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition as KubeCondition;

/// LookupSpec mixes this crate's types with Kubernetes types of the same last names.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(group = "paths.example.com", version = "v1", kind = "Lookup")]
#[serde(rename_all = "camelCase")]
pub struct LookupSpec {
    pub condition: Condition,
    pub volume: Volume,
    pub container: Container,
    pub time: Time,
    pub value: Value,
    /// Kubernetes' condition, renamed.
    pub kube_condition: Option<KubeCondition>,
    /// Kubernetes' volume, through a module alias.
    pub kube_volume: Option<corev1::Volume>,
    pub kube_container: Option<k8s::PodContainer>,
    pub kube_time:
        Option<operator_gen_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    pub kube_value: Option<serde_json::Value>,
    pub quantity: Option<k8s::Quantity>,
    pub object_meta: Option<ObjectMeta>,
    pub networking: Option<glob::Networking>,
}
