//! The Harbor kind, owned by the operator: it lists ships by the API crate's spec type.

use fleet_api::v1::ShipSpec;
use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// HarborSpec defines the desired state of Harbor.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(group = "fleet.example.com", version = "v1", kind = "Harbor")]
#[serde(rename_all = "camelCase")]
pub struct HarborSpec {
    /// berths lists the ships the harbor expects.
    pub berths: Vec<ShipSpec>,
    /// position is where the harbor is.
    pub position: fleet_api::common::Coordinates,
}
