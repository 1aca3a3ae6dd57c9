// The Dock kind: a spec made of a registry crate's type and a renamed path dependency's type.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};
use shared_api::Widget;

/// DockSpec defines the desired state of Dock.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(group = "harbor.example.com", version = "v1", kind = "Dock")]
#[serde(rename_all = "camelCase")]
pub struct DockSpec {
    /// widget the dock loads, from the registry crate.
    pub widget: Widget,
    /// spares are parts kept at hand, by the registry crate's full path.
    /// +optional
    #[serde(default)]
    pub spares: Vec<shared_api::parts::Part>,
    /// berth is where ships moor, from the renamed path dependency.
    pub berth: berths::Berth,
}
