//! A kind exercising every class of validation the apiserver enforces, for the apiserver tests:
//! Pattern, MaxItems, a required field, a CEL rule, preserved unknown fields, tagged and untagged
//! enums, the scale subresource and printer columns.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// WidgetSpec is the desired state of a Widget.
///
/// +kubebuilder:subresource:status
/// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
/// +kubebuilder:printcolumn:name="Size",type=string,JSONPath=".spec.size",description="How big"
/// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=".spec.replicas"
/// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas <= 5 || self.size == 'large'",message="only large widgets scale past 5"
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(
    group = "test.operator-gen.dev",
    version = "v1",
    kind = "Widget",
    status = "WidgetStatus",
    doc = "Widget is a test kind"
)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// Size in words.
    /// +kubebuilder:validation:Pattern=`^(small|medium|large)$`
    pub size: String,
    /// How many.
    #[k8s(minimum = 0)]
    #[serde(default)]
    pub replicas: i32,
    /// At most three tags.
    /// +kubebuilder:validation:MaxItems=3
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Free-form settings, kept as given.
    /// +kubebuilder:pruning:PreserveUnknownFields
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
    /// Where the widget comes from: an externally tagged enum (one property per variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// How it is rolled out: an internally tagged enum (a `type` discriminator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    /// The port it listens on: an untagged enum of a number and a name (int-or-string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<Port>,
    /// Where it reports to: an untagged enum of objects and a unit variant (`null`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<Target>,
}

/// A port by number or by name.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum Port {
    Number(i32),
    Name(String),
}

/// A report target: a service, a URL, or none.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum Target {
    Service { service: String, port: i32 },
    Url { url: String },
    Nothing,
}

/// Where a widget comes from.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// A git repository.
    Git { url: String },
    /// A container image.
    Image(String),
}

/// How a widget is rolled out.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "type")]
pub enum Strategy {
    Recreate,
    Rolling {
        #[serde(rename = "maxSurge")]
        max_surge: i32,
    },
}

/// Settings with one known field; everything else is preserved.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
pub struct Settings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

/// WidgetStatus is the observed state of a Widget.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    #[serde(default)]
    pub replicas: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}
