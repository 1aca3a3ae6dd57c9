//! The schema kube's `crd()` generates for a type of a kube-rs crate: what schemars 1 derives
//! (OpenAPI 3 settings, subschemas inlined) after kube's transforms (nullable for `Option`,
//! the structural rewrite of enums, no `uniqueItems`), built directly as JSON.

use crate::diag::Diagnostic;
use crate::ir::*;
use crate::schema::{Scope, located_in, wire_name};
use serde_json::{Map, Value, json};

type Result<T> = std::result::Result<T, Diagnostic>;

/// Deepest nesting of types followed (the schema of a recursive type has no end).
const MAX_DEPTH: usize = 64;

/// The schema of the type `scope` stands for, with its own description.
pub fn type_schema(scope: &dyn Scope, depth: usize) -> Result<Value> {
    let def = scope.def();
    if depth > MAX_DEPTH {
        return Err(located_in(
            scope,
            None,
            "type nests more than 64 levels deep: kube's crd() cannot inline a recursive type, break the cycle with serde_json::Value",
        ));
    }
    let kube = def.kube.as_deref().cloned().unwrap_or_default();
    let mut schema = match &def.body {
        Body::Struct(fields) => struct_schema(scope, fields, &kube.members, depth)?,
        Body::Newtype(ty) => expr_schema(scope, ty, def.loc, depth)?,
        Body::Unit => json!({ "type": "null" }),
        Body::Enum(variants) => enum_schema(scope, variants, &kube.members, depth)?,
    };
    describe(&mut schema, &def.doc, &kube.schema);
    apply(&mut schema, &kube.schema);
    Ok(schema)
}

/// A description (and title) as schemars takes them from doc comments and `#[schemars]`: the
/// doc's lines joined and trimmed; a doc starting with `#` gives its first line as title.
fn describe(schema: &mut Value, doc: &[String], attrs: &SchemaAttrs) {
    let text = doc.join("\n");
    let text = text.trim();
    let (title, description) = match text.strip_prefix('#') {
        Some(rest) => {
            let (first, more) = rest.split_once('\n').unwrap_or((rest, ""));
            (first.trim_start_matches('#').trim(), more.trim())
        }
        None => ("", text),
    };
    let title = attrs.title.as_deref().unwrap_or(title);
    let description = attrs.description.as_deref().unwrap_or(description);
    if !title.is_empty() {
        schema["title"] = json!(title);
    }
    if !description.is_empty() {
        schema["description"] = json!(description);
    }
}

/// The keywords and CEL rules of `#[schemars]`, `#[garde]` and `#[x_kube]`, each keyword only
/// on a schema of its type, as schemars sets them.
fn apply(schema: &mut Value, attrs: &SchemaAttrs) {
    for (ty, key, value) in &attrs.keywords {
        let of = schema
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if ty.is_empty() || ty == of || (ty == "number" && of == "integer") {
            schema[key.as_str()] = value.clone();
        }
    }
    if !attrs.validations.is_empty() {
        schema["x-kubernetes-validations"] = Value::Array(attrs.validations.clone());
    }
}

fn struct_schema(
    scope: &dyn Scope,
    fields: &[Field],
    members: &[SchemaAttrs],
    depth: usize,
) -> Result<Value> {
    let def = scope.def();
    let mut properties = Map::new();
    let mut required = Vec::new();
    let none = SchemaAttrs::default();
    for (i, field) in fields.iter().enumerate() {
        if field.serde.skip {
            continue;
        }
        let attrs = members.get(i).unwrap_or(&none);
        if field.serde.flatten {
            let inner = expr_schema(scope, &field.ty, field.loc, depth)?;
            let Some(props) = inner.get("properties").and_then(Value::as_object) else {
                return Err(located_in(
                    scope,
                    field.loc,
                    format!(
                        "#[serde(flatten)] on `{}`: operator-gen reads a flattened struct only, not a flattened map or enum; flatten a struct",
                        field.ident
                    ),
                ));
            };
            properties.extend(props.clone());
            if let Some(r) = inner.get("required").and_then(Value::as_array) {
                required.extend(r.iter().filter_map(Value::as_str).map(str::to_string));
            }
            continue;
        }
        let name = wire_name(
            &field.ident,
            field.serde.rename.as_deref(),
            def.serde.rename_all.as_deref(),
        );
        let defaulted = field.serde.default || def.serde.default;
        let mut schema = field_schema(scope, field, attrs, depth)?;
        if defaulted && !field.serde.skip_serializing_if {
            schema["default"] = default_value(scope, field)?;
        }
        if !defaulted && !matches!(field.ty, TypeExpr::Option(_)) {
            required.push(name.clone());
        }
        properties.insert(name, schema);
    }
    let mut out = json!({ "type": "object" });
    if !properties.is_empty() {
        out["properties"] = Value::Object(properties);
    }
    if !required.is_empty() {
        required.sort();
        required.dedup();
        out["required"] = json!(required);
    }
    Ok(out)
}

/// A field's schema: its type's, its doc replacing the type's description, its attributes
/// applied to the value before `Option` makes it nullable.
fn field_schema(
    scope: &dyn Scope,
    field: &Field,
    attrs: &SchemaAttrs,
    depth: usize,
) -> Result<Value> {
    let (inner, optional) = match &field.ty {
        TypeExpr::Option(inner) => (inner.as_ref(), true),
        other => (other, false),
    };
    let mut schema = expr_schema(scope, inner, field.loc, depth)?;
    describe(&mut schema, &field.doc, attrs);
    apply(&mut schema, attrs);
    if optional {
        nullable_of(scope, inner, &mut schema);
    }
    Ok(schema)
}

fn documented(v: &Variant) -> bool {
    !v.serde.skip && v.doc.iter().any(|l| !l.trim().is_empty())
}

/// What kube makes of `Option<T>` for `ty`: `nullable: true`, and [`nullable`]'s `null` among
/// the values of an enum unless schemars writes them as `oneOf` branches (a documented
/// variant), which kube's rewrite lifts without it.
fn nullable_of(scope: &dyn Scope, ty: &TypeExpr, schema: &mut Value) {
    let branches = match ty {
        TypeExpr::Named(path) => scope
            .resolve(path)
            .ok()
            .is_some_and(|d| matches!(&d.def().body, Body::Enum(vs) if vs.iter().any(documented))),
        _ => false,
    };
    if branches {
        schema["nullable"] = json!(true);
    } else {
        nullable(schema);
    }
}

/// `nullable: true`, and `null` among the values of an enum.
fn nullable(schema: &mut Value) {
    if let Some(values) = schema.get_mut("enum").and_then(Value::as_array_mut) {
        values.push(Value::Null);
    }
    if schema.as_object().is_some_and(|o| !o.is_empty()) {
        schema["nullable"] = json!(true);
    }
}

/// The value `#[serde(default)]` gives a field, which schemars writes as its `default`: known
/// for the types whose `Default` is fixed.
fn default_value(scope: &dyn Scope, field: &Field) -> Result<Value> {
    Ok(match &field.ty {
        TypeExpr::Prim(Prim::String) => json!(""),
        TypeExpr::Prim(Prim::Bool) => json!(false),
        TypeExpr::Prim(Prim::F32 | Prim::F64) => json!(0.0),
        TypeExpr::Prim(Prim::Bytes) | TypeExpr::Vec(_) => json!([]),
        TypeExpr::Prim(_) => json!(0),
        TypeExpr::Map(_) => json!({}),
        TypeExpr::Option(_) => Value::Null,
        _ => {
            return Err(located_in(
                scope,
                field.loc,
                format!(
                    "#[serde(default)] on `{}`: kube's crd() writes the value of its type's Default impl, which operator-gen does not evaluate; add skip_serializing_if, or give the field a string, number, bool, list or map type",
                    field.ident
                ),
            ));
        }
    })
}

fn expr_schema(scope: &dyn Scope, ty: &TypeExpr, loc: Option<Loc>, depth: usize) -> Result<Value> {
    Ok(match ty {
        TypeExpr::Prim(p) => prim(*p),
        TypeExpr::Vec(inner) => {
            json!({ "type": "array", "items": expr_schema(scope, inner, loc, depth)? })
        }
        TypeExpr::Map(inner) => json!({
            "type": "object",
            "additionalProperties": expr_schema(scope, inner, loc, depth)?
        }),
        TypeExpr::Option(inner) => {
            let mut s = expr_schema(scope, inner, loc, depth)?;
            nullable_of(scope, inner, &mut s);
            s
        }
        TypeExpr::Value => json!({}),
        TypeExpr::Known(name) => {
            return Err(located_in(
                scope,
                loc,
                format!(
                    "`{name}` in a kube-rs crate: operator-gen does not read the schemas k8s-openapi's schemars feature gives; describe this kind with operator-gen's derive"
                ),
            ));
        }
        TypeExpr::Named(path) => {
            let inner = scope
                .resolve(path)
                .map_err(|d| located_in(scope, loc, d.message))?;
            if let Body::Newtype(TypeExpr::Known(known)) = &inner.def().body {
                if known == "serde_json::Value" {
                    // schemars' schema of any JSON value, `true`, is `{}` in the CRD
                    return Ok(json!({}));
                }
                return expr_schema(scope, &TypeExpr::Known(known.clone()), loc, depth);
            }
            if inner.def().kube.is_none() {
                return Err(located_in(
                    scope,
                    loc,
                    format!(
                        "`{path}` does not derive schemars' JsonSchema, so kube's crd() cannot use it: derive JsonSchema on it"
                    ),
                ));
            }
            type_schema(inner.as_ref(), depth + 1)?
        }
    })
}

/// The schema schemars gives a primitive type.
fn prim(p: Prim) -> Value {
    let int = |format: &str| json!({ "type": "integer", "format": format });
    let bounded = |format: &str, min: f64, max: Option<f64>| {
        let mut s = json!({ "type": "integer", "format": format, "minimum": min });
        if let Some(max) = max {
            s["maximum"] = json!(max);
        }
        s
    };
    match p {
        Prim::String => json!({ "type": "string" }),
        Prim::Bool => json!({ "type": "boolean" }),
        Prim::I8 => bounded("int8", -128.0, Some(127.0)),
        Prim::I16 => bounded("int16", -32768.0, Some(32767.0)),
        Prim::I32 => int("int32"),
        Prim::I64 => int("int64"),
        Prim::Isize => int("int"),
        Prim::U8 => bounded("uint8", 0.0, Some(255.0)),
        Prim::U16 => bounded("uint16", 0.0, Some(65535.0)),
        Prim::U32 => bounded("uint32", 0.0, None),
        Prim::U64 => bounded("uint64", 0.0, None),
        Prim::Usize => bounded("uint", 0.0, None),
        Prim::F32 => json!({ "type": "number", "format": "float" }),
        Prim::F64 => json!({ "type": "number", "format": "double" }),
        Prim::Bytes => json!({ "type": "array", "items": prim(Prim::U8) }),
    }
}

fn enum_schema(
    scope: &dyn Scope,
    variants: &[Variant],
    members: &[SchemaAttrs],
    depth: usize,
) -> Result<Value> {
    let def = scope.def();
    let live: Vec<(usize, &Variant)> = variants
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.serde.skip)
        .collect();
    let name = |v: &Variant| {
        wire_name(
            &v.ident,
            v.serde.rename.as_deref(),
            def.serde.rename_all.as_deref(),
        )
    };
    let unsupported = |what: &str| {
        Err(located_in(
            scope,
            def.loc,
            format!(
                "enum `{}` is {what}: kube's crd() cannot build a structural schema for it (its rewrite panics), so operator-gen does not read it; make it an externally tagged or untagged enum",
                def.name
            ),
        ))
    };
    if def.serde.tag.is_some() && live.len() > 1 {
        return unsupported("internally or adjacently tagged with several variants");
    }
    if live
        .iter()
        .all(|(_, v)| matches!(v.fields, VariantFields::Unit))
        && !def.serde.untagged
    {
        // schemars gives the documented variants a `oneOf` branch each, after one branch of all
        // the others; kube's rewrite lifts their values in that order
        let (plain, documented): (Vec<_>, Vec<_>) = live.iter().partition(|(_, v)| !documented(v));
        let values: Vec<Value> = plain
            .iter()
            .chain(&documented)
            .map(|(_, v)| json!(name(v)))
            .collect();
        return Ok(json!({ "type": "string", "enum": values }));
    }
    let none = SchemaAttrs::default();
    let mut properties = Map::new();
    let mut alternatives = Vec::new();
    for (i, v) in &live {
        let attrs = members.get(*i).unwrap_or(&none);
        let content = variant_content(scope, v, depth)?;
        let (props, required) = if def.serde.untagged {
            let Some(props) = content
                .get("properties")
                .and_then(Value::as_object)
                .cloned()
            else {
                return unsupported("untagged with a variant that is not a struct");
            };
            (props, content.get("required").cloned().unwrap_or(json!([])))
        } else {
            let mut content = content;
            describe(&mut content, &v.doc, attrs);
            let mut props = Map::new();
            props.insert(name(v), content);
            (props, json!([name(v)]))
        };
        for (k, p) in props {
            match properties.get(&k) {
                Some(existing) if existing != &p => {
                    return unsupported(&format!(
                        "giving property `{k}` two schemas in two variants"
                    ));
                }
                _ => {
                    properties.insert(k, p);
                }
            }
        }
        alternatives.push(json!({ "required": required }));
    }
    let key = if def.serde.untagged { "anyOf" } else { "oneOf" };
    Ok(json!({ "type": "object", "properties": properties, key: alternatives }))
}

/// The value of an enum variant: a struct variant's object, a newtype variant's type.
fn variant_content(scope: &dyn Scope, v: &Variant, depth: usize) -> Result<Value> {
    match &v.fields {
        VariantFields::Struct(fields) => {
            // a struct variant's fields are renamed by `rename_all_fields`, not `rename_all`
            let plain = TypeDef {
                serde: ContainerSerde::default(),
                ..scope.def().clone()
            };
            let inner = Renamed { scope, def: plain };
            struct_schema(&inner, fields, &[], depth)
        }
        VariantFields::Newtype(ty) => expr_schema(scope, ty, None, depth),
        VariantFields::Unit => Ok(json!({ "type": "string", "enum": [v.ident] })),
        VariantFields::Tuple(_) => Err(located_in(
            scope,
            None,
            format!("variant `{}` is a tuple: give its fields names", v.ident),
        )),
    }
}

/// A scope standing for another's definition with its container attributes replaced.
struct Renamed<'s> {
    scope: &'s dyn Scope,
    def: TypeDef,
}

impl Scope for Renamed<'_> {
    fn def(&self) -> &TypeDef {
        &self.def
    }
    fn resolve(&self, path: &str) -> std::result::Result<Box<dyn Scope + '_>, Diagnostic> {
        self.scope.resolve(path)
    }
    fn file(&self) -> Option<&std::path::Path> {
        self.scope.file()
    }
}
