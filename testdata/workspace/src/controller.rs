//! Reconciles Ships (defined in the fleet-api crate).

use fleet_api::v1::Ship;

/// +kubebuilder:rbac:groups=fleet.example.com,resources=ships,verbs=get;list;watch;update;patch
/// +kubebuilder:rbac:groups=fleet.example.com,resources=ships/status,verbs=get;update;patch
pub fn run() {
    let ship: Option<Ship> = None;
    drop(ship);
}
