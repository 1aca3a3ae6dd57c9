//! Parts of a widget.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// Part is one piece of a widget.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// serial number of the part.
    /// +kubebuilder:validation:Pattern=`^[A-Z]{2}[0-9]{4}$`
    pub serial: String,
    /// weightGrams is what the part weighs.
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_grams: Option<i32>,
}
