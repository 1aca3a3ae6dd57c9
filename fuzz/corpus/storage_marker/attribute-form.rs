use operator_gen_runtime::prelude::*;

/// Captain is the Schema for the captains API.
#[derive(CustomResource, Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(group = "crew.my.domain", version = "v2", kind = "Captain", namespaced)]
#[k8s(storage_version)]
pub struct CaptainSpec {
    pub foo: Option<String>,
}
