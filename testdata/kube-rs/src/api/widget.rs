use kube::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// # Widget
///
/// Widgets are cluster-wide.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[kube(group = "tools.example.com", version = "v1", kind = "Widget", status = "WidgetStatus")]
#[serde(rename_all = "camelCase", default)]
pub struct WidgetSpec {
    pub display_name: String,
    pub enabled: bool,
    pub ports: Vec<i32>,
    #[schemars(description = "Chosen by the user.", length(equal = 3))]
    pub code: String,
    #[schemars(skip)]
    pub internal: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    #[default]
    FastPath,
    #[serde(rename = "SLOW")]
    SlowPath,
    #[serde(skip)]
    Hidden,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[schemars(title = "Status of a widget")]
pub struct WidgetStatus {
    pub phase: Option<Mode>,
}
