//! Types shared by operators, from a registry: `Widget` derives `Schema`, and `Gadget` is a
//! kind of its publisher's, which operators using the crate do not write.
//!
//! +kubebuilder:rbac:groups=shared.example.com,resources=gadgets,verbs=get

pub mod parts;

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

pub use self::parts::Part;

/// Widget is a thing operators build.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct Widget {
    /// colour of the widget.
    /// +kubebuilder:validation:Enum=red;green;blue
    pub colour: String,
    /// parts the widget is made of.
    /// +kubebuilder:validation:MaxItems=8
    #[serde(default)]
    pub parts: Vec<Part>,
}

/// GadgetSpec defines the desired state of Gadget.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(group = "shared.example.com", version = "v1", kind = "Gadget")]
pub struct GadgetSpec {
    /// widget the gadget holds.
    pub widget: Widget,
}
