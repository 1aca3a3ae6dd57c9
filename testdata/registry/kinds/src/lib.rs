//! Berths, a path dependency the dock operator renames to `berths`.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// Berth is a place at a quay.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct Berth {
    /// quay names the quay.
    /// +kubebuilder:validation:MinLength=1
    pub quay: String,
    /// depthMeters is the water depth at low tide.
    /// +kubebuilder:validation:Minimum=2
    pub depth_meters: i32,
}
