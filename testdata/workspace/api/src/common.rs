//! Types every version of the API uses.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// Coordinates is a position at sea.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct Coordinates {
    /// latitude in degrees, north positive.
    /// +kubebuilder:validation:Minimum=-90
    /// +kubebuilder:validation:Maximum=90
    pub latitude: i32,
    /// longitude in degrees, east positive.
    /// +kubebuilder:validation:Minimum=-180
    /// +kubebuilder:validation:Maximum=180
    pub longitude: i32,
}
