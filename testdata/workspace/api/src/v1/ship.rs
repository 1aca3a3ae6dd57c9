//! The Ship kind.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

use super::super::common::Coordinates;

/// ShipSpec defines the desired state of Ship.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(
    group = "fleet.example.com",
    version = "v1",
    kind = "Ship",
    status = "ShipStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct ShipSpec {
    /// name the ship sails under.
    /// +kubebuilder:validation:MinLength=1
    pub name: String,
    /// crew is how many sailors the ship needs.
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crew: Option<i32>,
    /// home is where the ship is berthed.
    pub home: Coordinates,
}

/// ShipStatus defines the observed state of Ship.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct ShipStatus {
    /// position is where the ship was last seen.
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Coordinates>,
}
