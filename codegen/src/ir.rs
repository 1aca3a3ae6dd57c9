//! The intermediate representation both front ends (source scan and derive) build and every
//! emitter reads: type definitions, fields, serde attributes and markers.

pub use crate::diag::Loc;
pub use crate::markers::{Kind, Marker, has_marker, marker, markers_named, value_to_string};
use serde::{Deserialize, Serialize};

/// A named type definition: a struct, a newtype, an enum.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TypeDef {
    pub name: String,
    #[serde(default)]
    pub doc: Vec<String>,
    #[serde(default)]
    pub markers: Vec<Marker>,
    #[serde(default)]
    pub serde: ContainerSerde,
    pub body: Body,
    /// Set for the spec struct of a custom resource (`#[derive(CustomResource)]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceAttrs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loc: Option<Loc>,
    /// Set for a type of a kube-rs crate (deriving kube's `CustomResource` or schemars'
    /// `JsonSchema`): its schema is the one kube's `crd()` generates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube: Option<Box<KubeType>>,
}

/// What kube's and schemars' attributes say about a type of a kube-rs crate.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct KubeType {
    /// `#[kube(...)]` of kube's `CustomResource` derive; `None` for a `JsonSchema` type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<KubeResource>,
    /// The type's own `#[schemars(...)]`, `#[x_kube(...)]`.
    #[serde(default)]
    pub schema: SchemaAttrs,
    /// Each field's (or variant's) schemars attributes, in the order of the body's fields
    /// (variants).
    #[serde(default)]
    pub members: Vec<SchemaAttrs>,
}

/// `#[kube(...)]` on the spec struct of a kube-rs kind.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct KubeResource {
    pub plural: Option<String>,
    pub singular: Option<String>,
    pub namespaced: bool,
    pub shortnames: Vec<String>,
    pub categories: Vec<String>,
    /// Printer columns as the CRD holds them (`name`, `type`, `jsonPath`, ...).
    pub printcolumns: Vec<serde_json::Value>,
    /// The scale subresource as the CRD holds it.
    pub scale: Option<serde_json::Value>,
    pub selectable: Vec<String>,
    /// `schema = "derived"` (the default): the CRD holds the derived schema; `"disabled"`: no
    /// schema.
    pub schema_derived: bool,
    pub validations: Vec<serde_json::Value>,
    pub annotations: Vec<(String, String)>,
    pub labels: Vec<(String, String)>,
    pub served: bool,
    pub storage: bool,
    /// `deprecated`: `Some(None)`, `deprecated = "warning"`: `Some(Some(warning))`.
    pub deprecated: Option<Option<String>>,
}

/// The schemars (and kube) attributes of a type, field or variant that shape its schema.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct SchemaAttrs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Keywords set on the schema (`minLength`, `maximum`, `pattern`, ...), each with its
    /// schema type (`string`, `number`, `array`, ...): schemars sets one only on a schema of
    /// that type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<(String, String, serde_json::Value)>,
    /// `#[x_kube(validation = ...)]` rules, as the CRD holds them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validations: Vec<serde_json::Value>,
}

/// What `#[k8s(...)]` says about the root type a `CustomResource` derive generates.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ResourceAttrs {
    pub group: String,
    pub version: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doc: Vec<String>,
    /// The root object's schema markers: the marker lines of `doc`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub markers: Vec<Marker>,
    /// The struct's fields sit on the root object itself, not under `spec`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_spec: bool,
    /// The root's `spec` may be omitted (Go's `json:"spec,omitempty"`): the root does not
    /// require it and a missing spec deserialises as the spec struct's `Default`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional_spec: bool,
    /// The root requires `metadata` (Go's `+required` on the kind's `metav1.ObjectMeta`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required_metadata: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum Body {
    Struct(Vec<Field>),
    /// A tuple struct with one field: serialised as that field.
    Newtype(TypeExpr),
    Unit,
    Enum(Vec<Variant>),
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Field {
    pub ident: String,
    #[serde(default)]
    pub doc: Vec<String>,
    #[serde(default)]
    pub markers: Vec<Marker>,
    #[serde(default)]
    pub serde: FieldSerde,
    pub ty: TypeExpr,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loc: Option<Loc>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Variant {
    pub ident: String,
    #[serde(default)]
    pub doc: Vec<String>,
    #[serde(default)]
    pub markers: Vec<Marker>,
    #[serde(default)]
    pub serde: FieldSerde,
    pub fields: VariantFields,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum VariantFields {
    Unit,
    Newtype(TypeExpr),
    Tuple(usize),
    Struct(Vec<Field>),
}

/// serde's container attributes that change the wire format.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ContainerSerde {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename_all: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default)]
    pub untagged: bool,
    #[serde(default)]
    pub transparent: bool,
    #[serde(default)]
    pub default: bool,
}

/// serde's field (and variant) attributes that change the wire format.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct FieldSerde {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename: Option<String>,
    #[serde(default)]
    pub default: bool,
    #[serde(default)]
    pub skip: bool,
    #[serde(default)]
    pub skip_serializing_if: bool,
    #[serde(default)]
    pub flatten: bool,
}

/// A field's type as written, reduced to what decides its schema.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum TypeExpr {
    Prim(Prim),
    Vec(Box<TypeExpr>),
    /// A string-keyed map.
    Map(Box<TypeExpr>),
    Option(Box<TypeExpr>),
    /// A type whose schema the generator knows (Time, Quantity, Condition, ...).
    Known(String),
    /// `serde_json::Value`: anything goes.
    Value,
    /// A path to a type defined elsewhere, as written.
    Named(String),
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prim {
    String,
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    /// `isize`, the twin of Go's `int`: an integer without a format.
    Isize,
    /// `usize`, the twin of Go's `uint`: an integer without a format.
    Usize,
    F32,
    F64,
    Bytes,
}

/// Every named type a definition's fields and variants mention, in first-use order.
pub fn named_paths(def: &TypeDef) -> Vec<String> {
    fn walk(ty: &TypeExpr, out: &mut Vec<String>) {
        match ty {
            TypeExpr::Vec(i) | TypeExpr::Map(i) | TypeExpr::Option(i) => walk(i, out),
            TypeExpr::Named(p) if !out.contains(p) => out.push(p.clone()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    match &def.body {
        Body::Struct(fields) => fields
            .iter()
            .filter(|f| !f.serde.skip)
            .for_each(|f| walk(&f.ty, &mut out)),
        Body::Newtype(t) => walk(t, &mut out),
        Body::Unit => {}
        Body::Enum(vs) => {
            for v in vs {
                match &v.fields {
                    VariantFields::Newtype(t) => walk(t, &mut out),
                    VariantFields::Struct(fs) => fs.iter().for_each(|f| walk(&f.ty, &mut out)),
                    _ => {}
                }
            }
        }
    }
    out
}

/// Why an enum has no structural schema, if it has none; checked when the enum is lowered, so
/// the derive reports it at compile time and the scan with a location.
pub fn enum_shape_error(def: &TypeDef, variants: &[Variant]) -> Option<String> {
    let live: Vec<&Variant> = variants.iter().filter(|v| !v.serde.skip).collect();
    if let Some(v) = live
        .iter()
        .find(|v| matches!(v.fields, VariantFields::Tuple(_)))
    {
        return Some(format!(
            "variant `{}` of `{}` is a tuple of several values, which has no structural schema: give its fields names",
            v.ident, def.name
        ));
    }
    let units = live
        .iter()
        .filter(|v| matches!(v.fields, VariantFields::Unit))
        .count();
    if def.serde.tag.is_none() && !def.serde.untagged && units > 0 && units < live.len() {
        let unit = live
            .iter()
            .find(|v| matches!(v.fields, VariantFields::Unit))
            .map(|v| v.ident.as_str())
            .unwrap_or_default();
        return Some(format!(
            "enum `{}` mixes unit variants (strings on the wire) with data variants (objects): the apiserver needs one type, so give `{unit}` a field or tag the enum",
            def.name
        ));
    }
    None
}
