//! Captain types of crew.testproject.org/v1.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// spec defines the desired state of Captain
///
/// +kubebuilder:subresource:status
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(
    group = "crew.testproject.org",
    version = "v1",
    kind = "Captain",
    status = "CaptainStatus",
    doc = "Captain is the Schema for the captains API"
)]
pub struct CaptainSpec {
    // INSERT ADDITIONAL SPEC FIELDS - desired state of cluster
    /// foo is an example field of Captain. Edit captain_types.go to remove/update
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// status defines the observed state of Captain
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct CaptainStatus {
    /// conditions represent the current state of the Captain resource.
    /// Each condition has a unique type and reflects the status of a specific aspect of the resource.
    ///
    /// Standard condition types include:
    /// - "Available": the resource is fully functional
    /// - "Progressing": the resource is being created or updated
    /// - "Degraded": the resource failed to reach or maintain its desired state
    ///
    /// The status of each condition is one of True, False, or Unknown.
    /// +listType=map
    /// +listMapKey=type
    /// +optional
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
