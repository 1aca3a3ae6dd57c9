//! Rust twin of controller-tools' `plural` fixture: a kind whose field sits on the root itself,
//! and the plural of TestQuota.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(
    group = "plural.example.com",
    version = "v1",
    kind = "TestQuota",
    no_spec
)]
pub struct TestQuotaFields {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub test: String,
}
