//! One version's OpenAPI schema as Rust types: each object a struct, each constrained list
//! item or map value a newtype, every keyword a marker line on the field or type it stands on.

use super::error::{Error, Note};
use super::lit;
use crate::rustgen::{Body, Docs, Field, Item, Struct, TYPE_DERIVES, ident};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The Rust type of an int-or-string.
pub const INT_OR_STRING: &str = "k8s_openapi::apimachinery::pkg::util::intstr::IntOrString";

/// The keywords a schema node may hold: each is written as a type or a marker.
const KNOWN: &[&str] = &[
    "description",
    "type",
    "format",
    "enum",
    "default",
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "nullable",
    "title",
    "example",
    "externalDocs",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "anyOf",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-validations",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
];

/// Why an `anyOf` that is not an int-or-string's is refused.
pub const ANY_OF: &str = "`anyOf` other than an int-or-string's has no marker that writes it; write the schema with `x-kubernetes-validations` rules instead";

/// The first keyword of `node` no marker writes, as the error naming it and `path`.
pub fn known_keywords(node: &Map<String, Value>, path: &str) -> Result<(), Error> {
    match node.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        Some(k) => Err(Error::new(
            path,
            format!(
                "`{k}` has no marker that writes it (operator-gen writes the keywords of a structural schema that controller-gen writes)"
            ),
        )),
        None => Ok(()),
    }
}

/// The types of one version, collected as they are named.
pub struct Types {
    pub items: Vec<Item>,
    names: BTreeSet<String>,
    pub notes: Vec<Note>,
    /// A `number` was seen: the CRD needs `--allow-dangerous-types`.
    pub floats: bool,
    /// `BTreeMap` is used.
    pub maps: bool,
}

/// What a schema node becomes where it is used.
pub struct Typed {
    /// The Rust type as written.
    pub ty: String,
    /// The node's markers, for the field (or type) that holds it.
    pub markers: Vec<String>,
}

impl Types {
    /// `reserved`: names the caller defines itself (the kind, its spec, status and list).
    pub fn new(reserved: &[String]) -> Types {
        Types {
            items: Vec::new(),
            names: reserved.iter().cloned().collect(),
            notes: Vec::new(),
            floats: false,
            maps: false,
        }
    }

    /// A type name not yet taken, from `hint`.
    pub fn fresh_name(&mut self, hint: &str) -> String {
        let base = ident::type_ident(hint);
        let mut name = base.clone();
        let mut n = 2;
        while !self.names.insert(name.clone()) {
            name = format!("{base}{n}");
            n += 1;
        }
        name
    }

    /// The fields of an object node, each with its doc and markers; `path` names the node.
    pub fn fields(
        &mut self,
        node: &Map<String, Value>,
        path: &str,
        owner: &str,
    ) -> Result<Vec<Field>, Error> {
        let props = match node.get("properties") {
            Some(Value::Object(p)) => p.clone(),
            Some(_) => return Err(Error::new(path, "`properties` is not a map")),
            None => Map::new(),
        };
        let required: Vec<String> = match node.get("required") {
            None => Vec::new(),
            Some(Value::Array(r)) => r
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            Some(_) => return Err(Error::new(path, "`required` is not a list of names")),
        };
        if let Some(missing) = required.iter().find(|r| !props.contains_key(*r)) {
            return Err(Error::new(
                path,
                format!(
                    "`required` lists `{missing}`, which is not among the properties: a field that does not exist cannot be required"
                ),
            ));
        }
        let mut taken = BTreeSet::new();
        let mut fields = Vec::new();
        for (json, schema) in &props {
            let fpath = format!("{path}.properties.{json}");
            let Value::Object(schema) = schema else {
                return Err(Error::new(&fpath, "the property's schema is not an object"));
            };
            let name = ident::field_name(json, true);
            let mut id = name.ident.clone();
            let mut rename = name.rename.clone();
            let mut n = 2;
            while !taken.insert(id.clone()) {
                id = format!("{}_{n}", name.ident.trim_start_matches("r#"));
                rename = Some(json.clone());
                n += 1;
            }
            let hint = format!("{owner} {json}");
            let typed = self.node(schema, &fpath, &hint, Place::Field)?;
            let is_required = required.contains(json);
            let mut serde = Vec::new();
            if let Some(r) = rename {
                serde.push(format!("rename = {}", crate::rustgen::str_lit(&r)));
            }
            let ty = if is_required {
                typed.ty
            } else {
                serde.push("default".to_string());
                serde.push("skip_serializing_if = \"Option::is_none\"".to_string());
                format!("Option<{}>", typed.ty)
            };
            fields.push(Field {
                ident: id,
                ty,
                doc: Docs {
                    prose: self.prose(schema, &fpath),
                    markers: typed.markers,
                },
                attrs: Vec::new(),
                serde,
            });
        }
        Ok(fields)
    }

    /// A node's description as doc lines.
    pub fn prose(&mut self, node: &Map<String, Value>, path: &str) -> Vec<String> {
        match node.get("description").and_then(Value::as_str) {
            Some(text) => super::docs::lines(text, path, &mut self.notes),
            None => Vec::new(),
        }
    }

    /// The type and markers of a node used at `place`; types it needs are added to `items`.
    pub fn node(
        &mut self,
        node: &Map<String, Value>,
        path: &str,
        hint: &str,
        place: Place,
    ) -> Result<Typed, Error> {
        known_keywords(node, path)?;
        let mut markers = Vec::new();
        let ty = self.shape(node, path, hint, &mut markers)?;
        markers.extend(keyword_markers(node, path)?);
        if place == Place::Field {
            return Ok(Typed { ty, markers });
        }
        // a list item or map value: its own doc and markers need a type to stand on
        let prose = self.prose(node, path);
        if markers.is_empty() && prose.is_empty() {
            return Ok(Typed { ty, markers });
        }
        if let Some(Item::Struct(s)) = self
            .items
            .iter_mut()
            .find(|i| matches!(i, Item::Struct(s) if s.name == ty))
        {
            s.doc = Docs { prose, markers };
            return Ok(Typed {
                ty,
                markers: Vec::new(),
            });
        }
        let name = self.fresh_name(hint);
        self.items.push(Item::Struct(Struct {
            name: name.clone(),
            doc: Docs { prose, markers },
            derives: TYPE_DERIVES.iter().map(|d| d.to_string()).collect(),
            attrs: Vec::new(),
            serde: Vec::new(),
            body: Body::Tuple(vec![ty]),
        }));
        Ok(Typed {
            ty: name,
            markers: Vec::new(),
        })
    }

    /// The Rust type of a node; markers its shape needs (a format, a type) go to `markers`.
    fn shape(
        &mut self,
        node: &Map<String, Value>,
        path: &str,
        hint: &str,
        markers: &mut Vec<String>,
    ) -> Result<String, Error> {
        let flag = |k: &str| node.get(k).and_then(Value::as_bool).unwrap_or(false);
        if flag("x-kubernetes-int-or-string") {
            let any_of = node.get("anyOf");
            let expected = serde_json::json!([{"type": "integer"}, {"type": "string"}]);
            if any_of != Some(&expected) {
                return Err(Error::new(
                    path,
                    "`x-kubernetes-int-or-string` without `anyOf: [{type: integer}, {type: string}]` has no Rust type that writes it: write the anyOf as IntOrString has it",
                ));
            }
            if node.contains_key("type") {
                return Err(Error::new(path, "an int-or-string has no `type`"));
            }
            return Ok(INT_OR_STRING.to_string());
        }
        if node.contains_key("anyOf") {
            return Err(Error::new(path, ANY_OF));
        }
        let format = node.get("format").and_then(Value::as_str);
        // a format on a list, a boolean or an object: the marker sets it on any type
        if let (Some(f), Some("array" | "boolean" | "object")) =
            (format, node.get("type").and_then(Value::as_str))
        {
            markers.push(format!("+kubebuilder:validation:Format={}", lit::word(f)));
        }
        let ty = node.get("type").and_then(Value::as_str);
        Ok(match ty {
            None => return self.untyped(node, path, markers),
            Some("string") => {
                if let Some(f) = format {
                    markers.push(format!("+kubebuilder:validation:Format={}", lit::word(f)));
                }
                "String".to_string()
            }
            Some("boolean") => "bool".to_string(),
            Some("integer") => match format {
                Some("int32") => "i32".to_string(),
                Some("int64") => "i64".to_string(),
                None => "isize".to_string(),
                Some(f) => {
                    markers.push(format!("+kubebuilder:validation:Format={}", lit::word(f)));
                    "i64".to_string()
                }
            },
            Some("number") => {
                self.floats = true;
                if let Some(f) = format {
                    markers.push(format!("+kubebuilder:validation:Format={}", lit::word(f)));
                }
                "f64".to_string()
            }
            Some("array") => {
                let Some(Value::Object(items)) = node.get("items") else {
                    return Err(Error::new(
                        path,
                        "a list needs `items` as one schema (a list of schemas, a tuple, has no Rust type)",
                    ));
                };
                let inner = self.node(
                    items,
                    &format!("{path}.items"),
                    &format!("{hint} item"),
                    Place::Item,
                )?;
                format!("Vec<{}>", inner.ty)
            }
            Some("object") => return self.object(node, path, hint, markers),
            Some(other) => {
                return Err(Error::new(
                    path,
                    format!("type `{other}` is not an OpenAPI type a CRD may hold"),
                ));
            }
        })
    }

    /// A node without `type`: anything (`serde_json::Value`), kept or not.
    fn untyped(
        &mut self,
        node: &Map<String, Value>,
        path: &str,
        markers: &mut Vec<String>,
    ) -> Result<String, Error> {
        let flag = |k: &str| node.get(k).and_then(Value::as_bool).unwrap_or(false);
        if node.contains_key("properties")
            || node.contains_key("items")
            || node.contains_key("additionalProperties")
        {
            return Err(Error::new(
                path,
                "a schema with properties, items or additionalProperties needs a `type`",
            ));
        }
        if flag("x-kubernetes-embedded-resource") {
            return Err(Error::new(
                path,
                "an embedded resource is an object: give it `type: object`",
            ));
        }
        if !flag("x-kubernetes-preserve-unknown-fields") {
            markers.push("+kubebuilder:validation:Schemaless".to_string());
        }
        Ok("serde_json::Value".to_string())
    }

    fn object(
        &mut self,
        node: &Map<String, Value>,
        path: &str,
        hint: &str,
        markers: &mut Vec<String>,
    ) -> Result<String, Error> {
        let flag = |k: &str| node.get(k).and_then(Value::as_bool).unwrap_or(false);
        let has_props = node
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        match node.get("additionalProperties") {
            Some(Value::Object(values)) if !has_props => {
                self.maps = true;
                let inner = self.node(
                    values,
                    &format!("{path}.additionalProperties"),
                    &format!("{hint} value"),
                    Place::Item,
                )?;
                return Ok(format!("BTreeMap<String, {}>", inner.ty));
            }
            Some(Value::Object(_)) => {
                return Err(Error::new(
                    path,
                    "an object with both properties and additionalProperties has no Rust type that writes it",
                ));
            }
            Some(Value::Bool(_)) => {
                return Err(Error::new(
                    path,
                    "`additionalProperties: true/false` has no marker that writes it; give additionalProperties a schema or drop it",
                ));
            }
            Some(_) => {
                return Err(Error::new(
                    path,
                    "`additionalProperties` is neither a schema nor a boolean",
                ));
            }
            None => {}
        }
        let embedded = flag("x-kubernetes-embedded-resource");
        let preserve = flag("x-kubernetes-preserve-unknown-fields");
        if !has_props && (preserve || embedded) {
            // free-form data: the embedded-resource marker keeps unknown fields itself
            if !embedded {
                markers.push("+kubebuilder:validation:Type=object".to_string());
            }
            return Ok("serde_json::Value".to_string());
        }
        let name = self.fresh_name(hint);
        let fields = self.fields(node, path, &name)?;
        self.items.push(Item::Struct(Struct {
            name: name.clone(),
            doc: Docs::default(),
            derives: TYPE_DERIVES.iter().map(|d| d.to_string()).collect(),
            attrs: Vec::new(),
            serde: vec!["rename_all = \"camelCase\"".to_string()],
            body: Body::Named(fields),
        }));
        if preserve {
            markers.push("+kubebuilder:pruning:PreserveUnknownFields".to_string());
        }
        Ok(name)
    }
}

/// Where a node is used: as a field (its markers go on the field) or as a list item or map
/// value (its markers go on a type of its own).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Field,
    Item,
}

/// The markers of a node's keywords, but its type, format and structure (which [`Types`]
/// writes as the Rust type).
pub fn keyword_markers(node: &Map<String, Value>, path: &str) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    let flag = |k: &str| node.get(k).and_then(Value::as_bool).unwrap_or(false);
    let num = |k: &str| node.get(k).filter(|v| v.is_number()).map(lit::number);
    if let Some(Value::Array(values)) = node.get("enum") {
        let items: Vec<String> = values.iter().map(lit::enum_item).collect();
        out.push(format!("+kubebuilder:validation:Enum={}", items.join(";")));
    }
    for (key, marker) in [
        ("minimum", "Minimum"),
        ("maximum", "Maximum"),
        ("multipleOf", "MultipleOf"),
        ("minLength", "MinLength"),
        ("maxLength", "MaxLength"),
        ("minItems", "MinItems"),
        ("maxItems", "MaxItems"),
        ("minProperties", "MinProperties"),
        ("maxProperties", "MaxProperties"),
    ] {
        if let Some(n) = num(key) {
            out.push(format!("+kubebuilder:validation:{marker}={n}"));
        }
    }
    for (key, marker) in [
        ("exclusiveMinimum", "ExclusiveMinimum"),
        ("exclusiveMaximum", "ExclusiveMaximum"),
        ("uniqueItems", "UniqueItems"),
    ] {
        if let Some(b) = node.get(key).and_then(Value::as_bool) {
            out.push(format!("+kubebuilder:validation:{marker}={b}"));
        }
    }
    if let Some(p) = node.get("pattern").and_then(Value::as_str) {
        out.push(format!(
            "+kubebuilder:validation:Pattern={}",
            lit::string(p)
        ));
    }
    if flag("nullable") {
        out.push("+kubebuilder:validation:Nullable".to_string());
    }
    if flag("x-kubernetes-embedded-resource") {
        out.push("+kubebuilder:validation:XEmbeddedResource".to_string());
    }
    if let Some(d) = node.get("default") {
        out.push(format!(
            "+default={}",
            serde_json::to_string(d).unwrap_or_default()
        ));
    }
    for (key, marker) in [("title", "title"), ("example", "example")] {
        if let Some(v) = node.get(key) {
            let Some(text) = lit::any(v) else {
                return Err(Error::new(
                    path,
                    format!("`{key}` {v} has no marker literal that writes it"),
                ));
            };
            out.push(format!("+kubebuilder:{marker}={text}"));
        }
    }
    if let Some(docs) = node.get("externalDocs") {
        let mut args = Vec::new();
        for key in ["url", "description"] {
            if let Some(v) = docs.get(key).and_then(Value::as_str) {
                args.push(format!("{key}={}", lit::go_quoted(v)));
            }
        }
        out.push(format!("+kubebuilder:externalDocs:{}", args.join(",")));
    }
    if let Some(t) = node.get("x-kubernetes-list-type").and_then(Value::as_str) {
        out.push(format!("+listType={t}"));
    }
    if let Some(Value::Array(keys)) = node.get("x-kubernetes-list-map-keys") {
        for k in keys.iter().filter_map(Value::as_str) {
            out.push(format!("+listMapKey={}", lit::word(k)));
        }
    }
    if let Some(t) = node.get("x-kubernetes-map-type").and_then(Value::as_str) {
        out.push(format!("+mapType={t}"));
    }
    if let Some(rules) = node.get("x-kubernetes-validations") {
        let Value::Array(rules) = rules else {
            return Err(Error::new(path, "`x-kubernetes-validations` is not a list"));
        };
        for (i, rule) in rules.iter().enumerate() {
            out.push(validation_marker(
                rule,
                &format!("{path}.x-kubernetes-validations[{i}]"),
            )?);
        }
    }
    Ok(out)
}

/// `+kubebuilder:validation:XValidation:rule=...` for one CEL rule.
pub fn validation_marker(rule: &Value, path: &str) -> Result<String, Error> {
    let Value::Object(rule) = rule else {
        return Err(Error::new(path, "a validation rule is not an object"));
    };
    let mut args = Vec::new();
    for (key, v) in rule {
        match (key.as_str(), v) {
            (
                "rule" | "message" | "messageExpression" | "reason" | "fieldPath",
                Value::String(s),
            ) => args.push((key.as_str(), lit::go_quoted(s))),
            ("optionalOldSelf", Value::Bool(b)) => args.push(("optionalOldSelf", b.to_string())),
            _ => {
                return Err(Error::new(
                    path,
                    format!("`{key}` of a validation rule has no marker argument that writes it"),
                ));
            }
        }
    }
    let order = [
        "rule",
        "message",
        "messageExpression",
        "reason",
        "fieldPath",
        "optionalOldSelf",
    ];
    args.sort_by_key(|(k, _)| order.iter().position(|o| o == k));
    let args: Vec<String> = args.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    Ok(format!(
        "+kubebuilder:validation:XValidation:{}",
        args.join(",")
    ))
}
