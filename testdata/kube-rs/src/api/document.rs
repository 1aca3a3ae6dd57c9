use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Spec of a document.
///
/// Second paragraph.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, KubeSchema)]
#[kube(
    group = "docs.example.com",
    version = "v1",
    kind = "Document",
    namespaced,
    status = "DocumentStatus",
    shortname = "doc",
    shortname = "docs",
    category = "all",
    category = "writing",
    printcolumn = r#"{"name":"Title","type":"string","jsonPath":".spec.title"}"#,
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp", priority = 1, description = "age"),
    scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas", label_selector_path = ".status.selector"),
    selectable = ".spec.title",
    validation = "self.spec.replicas >= 0",
    validation = Rule::new("self.metadata.name.size() < 64").message("name too long").field_path(".metadata.name").reason(Reason::FieldValueInvalid),
    annotation("docs.example.com/owner", "team-a"),
    label("tier", "docs"),
    doc = "A document of the docs API"
)]
#[serde(rename_all = "camelCase")]
pub struct DocumentSpec {
    /// The title.
    pub title: String,
    pub replicas: i32,
    pub opt_str: Option<String>,
    pub opt_i64: Option<i64>,
    pub count: u32,
    pub small: u8,
    pub big: u64,
    pub ratio: f64,
    pub flag: bool,
    pub tags: Vec<String>,
    pub opt_tags: Option<Vec<String>>,
    pub labels: BTreeMap<String, String>,
    pub opt_labels: Option<BTreeMap<String, i32>>,
    /// Nested.
    pub nested: Inner,
    pub opt_nested: Option<Inner>,
    pub list_nested: Vec<Inner>,
    pub level: Level,
    pub opt_level: Option<Level>,
    pub shape: Shape,
    pub opt_shape: Option<Shape>,
    #[serde(default)]
    pub def_str: String,
    #[serde(default)]
    pub def_i: i32,
    #[serde(default)]
    pub def_vec: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub def_opt: Option<String>,
    #[serde(rename = "renamedField")]
    pub renamed: String,
    #[serde(skip)]
    pub skipped: String,
    #[serde(flatten)]
    pub flat: Flat,
    #[schemars(range(min = 1, max = 10))]
    pub ranged: i32,
    #[schemars(length(min = 1, max = 5))]
    pub short: String,
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    pub lower: String,
    /// Immutable once set.
    #[x_kube(validation = Rule::new("self == oldSelf").message("is immutable"))]
    pub fixed: String,
    pub value: serde_json::Value,
    pub untag: Untag,
}

/// Inner doc.
#[derive(Serialize, Deserialize, Clone, Debug, KubeSchema, Default)]
#[x_kube(validation = "self.a != ''")]
pub struct Inner {
    /// a.
    pub a: String,
    pub b: Option<i32>,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Flat {
    pub flat_a: String,
    pub flat_b: Option<bool>,
    #[garde(length(min = 2))]
    pub guarded: Vec<String>,
    #[garde(range(min = 0.5, max = 1.5))]
    pub factor: Option<f64>,
    #[garde(url)]
    pub home: String,
    #[garde(pattern(r"^[A-Z]{2}$"))]
    pub country: String,
    #[schemars(email)]
    pub contact: Option<String>,
}

/// Level doc.
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub enum Level {
    /// Low level.
    Low,
    High,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// A circle.
    Circle { radius: i32 },
    Square { side: i32 },
    Named(String),
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(untagged)]
pub enum Untag {
    One { one: i32 },
    Two { two: String, shared: Option<String> },
}

/// The observed state.
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct DocumentStatus {
    pub replicas: i32,
    pub selector: Option<String>,
    pub ready: Option<bool>,
}
