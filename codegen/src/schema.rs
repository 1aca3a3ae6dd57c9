//! The schema emitter: IR types to OpenAPI v3 `JSONSchemaProps` as the apiserver wants them
//! (structural, inlined), applying serde's wire format and the markers.

use crate::diag::Diagnostic;
use crate::ir::*;
use crate::known;
use crate::markers::registry::{FieldCount, Keyword, SchemaEffect};
use crate::markers::{Effect, Kind};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    ExternalDocumentation, JSON, JSONSchemaProps as Props, JSONSchemaPropsOrArray,
    JSONSchemaPropsOrBool, ValidationRule,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Where named types are looked up: the module tree (scan) or the derives' schema trait (derive).
pub trait Scope {
    fn def(&self) -> &TypeDef;
    /// The definition a path written inside this definition names.
    fn resolve(&self, path: &str) -> std::result::Result<Box<dyn Scope + '_>, Diagnostic>;
    /// The source file the definition was read from, when there is one (the scan's).
    fn file(&self) -> Option<&std::path::Path> {
        None
    }
}

/// Generator settings that change schemas.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// Allow float types, like controller-gen's `allowDangerousTypes` (unsigned integers need
    /// no permission, as in controller-gen).
    pub allow_dangerous_types: bool,
    /// Cut descriptions longer than this, like controller-gen's `maxDescLen`.
    pub max_desc_len: Option<usize>,
}

/// A problem found in the definition `scope` stands for, at `loc` or else at the definition,
/// located by that definition's type and file (errors of the emitter carry both).
pub fn located_in(
    scope: &dyn Scope,
    loc: Option<Loc>,
    problem: impl Into<Diagnostic>,
) -> Diagnostic {
    let def = scope.def();
    let mut d = problem.into().in_type(def.name.clone());
    d.loc = loc.or(def.loc);
    d.file = scope.file().map(std::path::Path::to_path_buf);
    d
}

type Result<T> = std::result::Result<T, Diagnostic>;

pub struct Emitter<'s> {
    pub settings: &'s Settings,
    depth: usize,
}

impl<'s> Emitter<'s> {
    pub fn new(settings: &'s Settings) -> Self {
        Emitter { settings, depth: 0 }
    }

    fn err(
        &self,
        scope: &dyn Scope,
        loc: Option<Loc>,
        problem: impl Into<Diagnostic>,
    ) -> Diagnostic {
        located_in(scope, loc, problem)
    }

    /// The schema of the definition `scope` stands for, with its type-level markers applied.
    pub fn type_schema(&mut self, scope: &dyn Scope) -> Result<Props> {
        self.depth += 1;
        if self.depth > 64 {
            return Err(self.err(scope, None, "type nests more than 64 levels deep: CRD schemas cannot be recursive, break the cycle with serde_json::Value"));
        }
        let result = self.type_schema_inner(scope);
        self.depth -= 1;
        result
    }

    fn type_schema_inner(&mut self, scope: &dyn Scope) -> Result<Props> {
        let def = scope.def();
        if let Body::Newtype(ty) = &def.body
            && let TypeExpr::Named(path) = strip_option(ty)
            && !names_known_type(scope, path)
        {
            // a newtype over a named type refers to it, as a field would
            return self.merged_schema(scope, ty, &def.doc, &def.markers, false, def.loc);
        }
        let mut embedded = Vec::new();
        let mut props = match &def.body {
            Body::Struct(fields) => {
                let (own, inner) = self.struct_parts(scope, fields, &def.serde)?;
                embedded = inner;
                own
            }
            Body::Newtype(ty) => self.expr_schema(scope, ty, def.loc)?,
            Body::Unit => Props {
                type_: Some("object".into()),
                ..Default::default()
            },
            Body::Enum(variants) => self.enum_schema(scope, variants)?,
        };
        let description = description(&def.doc);
        if description.is_some() {
            props.description = description;
        }
        apply_markers(&mut props, &def.markers).map_err(|m| self.err(scope, def.loc, m))?;
        merge_embedded(embedded, props).map_err(|m| self.err(scope, def.loc, m))
    }

    /// A struct's schema with the schemas of its flattened structs merged in (see
    /// [`merge_embedded`]); the struct itself has no markers here (an enum variant's fields).
    fn struct_schema(
        &mut self,
        scope: &dyn Scope,
        fields: &[Field],
        serde: &ContainerSerde,
    ) -> Result<Props> {
        let (own, embedded) = self.struct_parts(scope, fields, serde)?;
        merge_embedded(embedded, own).map_err(|m| self.err(scope, scope.def().loc, m))
    }

    /// A struct's own schema (its fields, flattened maps and flattened enums included) and,
    /// apart, the schemas of the structs it flattens, in field order: those carry their
    /// type-level markers to the struct, as controller-gen carries an embedded struct's.
    fn struct_parts(
        &mut self,
        scope: &dyn Scope,
        fields: &[Field],
        serde: &ContainerSerde,
    ) -> Result<(Props, Vec<Props>)> {
        let mut embedded = Vec::new();
        let mut props = Props {
            type_: Some("object".into()),
            ..Default::default()
        };
        let mut properties = std::collections::BTreeMap::new();
        let mut required = Vec::new();
        let mut parent_rules = Vec::new();
        for field in fields {
            if field.serde.skip {
                continue;
            }
            if field.serde.flatten {
                let inner = self.expr_schema(scope, strip_option(&field.ty), field.loc)?;
                if names_struct(scope, strip_option(&field.ty)) {
                    embedded.push(inner);
                    continue;
                }
                if let Some(p) = inner.properties {
                    properties.extend(p);
                }
                required.extend(inner.required.unwrap_or_default());
                if inner.additional_properties.is_some()
                    || inner.x_kubernetes_preserve_unknown_fields == Some(true)
                {
                    props.x_kubernetes_preserve_unknown_fields = Some(true);
                }
                continue;
            }
            let name = wire_name(
                &field.ident,
                field.serde.rename.as_deref(),
                serde.rename_all.as_deref(),
            );
            let schema = self.field_schema(scope, field)?;
            let is_required = field_required(field, serde);
            if has_marker(&field.markers, Kind::Immutable) && !is_required {
                parent_rules.push(ValidationRule {
                    rule: format!("!has(oldSelf.{name}) || has(self.{name})"),
                    message: Some(format!("field {name} is immutable once set")),
                    ..Default::default()
                });
            }
            if is_required {
                required.push(name.clone());
            }
            properties.insert(name, schema);
        }
        required.sort();
        required.dedup();
        if !properties.is_empty() {
            props.properties = Some(properties);
        }
        if !required.is_empty() {
            props.required = Some(required);
        }
        if !parent_rules.is_empty() {
            props.x_kubernetes_validations = Some(parent_rules);
        }
        Ok((props, embedded))
    }

    pub fn field_schema(&mut self, scope: &dyn Scope, field: &Field) -> Result<Props> {
        let schemaless = has_marker(&field.markers, Kind::Schemaless);
        if !schemaless && let TypeExpr::Named(_) = strip_option(&field.ty) {
            let immutable = has_marker(&field.markers, Kind::Immutable);
            return self.merged_schema(
                scope,
                &field.ty,
                &field.doc,
                &field.markers,
                immutable,
                field.loc,
            );
        }
        let mut props = if schemaless {
            Props::default()
        } else {
            self.expr_schema(scope, &field.ty, field.loc)?
        };
        if let Some(d) = description(&field.doc) {
            props.description = Some(d);
        }
        apply_markers(&mut props, &field.markers).map_err(|m| self.err(scope, field.loc, m))?;
        if has_marker(&field.markers, Kind::Immutable) {
            push_rule(
                &mut props,
                ValidationRule {
                    rule: "self == oldSelf".into(),
                    message: Some("field is immutable".into()),
                    ..Default::default()
                },
            );
        }
        Ok(props)
    }

    /// The schema of a reference to a named type (a field, or a newtype over it) that has docs and
    /// markers of its own: the type's schema merged with the reference's, as controller-gen
    /// flattens a `$ref` carrying field-level markers. The reference's description, title,
    /// example and external docs win; its CEL rules come before the type's; preserve-unknown-fields
    /// and map type are the reference's; a validation both set to different values keeps both as
    /// `allOf: [{type's}, {reference's}]`; equal values collapse; `items:` markers apply last.
    fn merged_schema(
        &mut self,
        scope: &dyn Scope,
        ty: &TypeExpr,
        doc: &[String],
        markers: &[Marker],
        immutable: bool,
        loc: Option<Loc>,
    ) -> Result<Props> {
        let target = self.expr_schema(scope, ty, loc)?;
        let (items, own): (Vec<Marker>, Vec<Marker>) =
            markers.iter().cloned().partition(|m| m.items);
        // the reference starts from the type's type, so markers check against it
        let mut reference = Props {
            type_: target.type_.clone(),
            x_kubernetes_int_or_string: target.x_kubernetes_int_or_string,
            description: description(doc),
            ..Default::default()
        };
        apply_markers(&mut reference, &own).map_err(|m| self.err(scope, loc, m))?;
        if immutable {
            push_rule(
                &mut reference,
                ValidationRule {
                    rule: "self == oldSelf".into(),
                    message: Some("field is immutable".into()),
                    ..Default::default()
                },
            );
        }
        let mut merged = merge_reference(target, reference).map_err(|m| self.err(scope, loc, m))?;
        apply_markers(&mut merged, &items).map_err(|m| self.err(scope, loc, m))?;
        Ok(merged)
    }

    pub fn expr_schema(
        &mut self,
        scope: &dyn Scope,
        ty: &TypeExpr,
        loc: Option<Loc>,
    ) -> Result<Props> {
        let s = |t: &str| Props {
            type_: Some(t.into()),
            ..Default::default()
        };
        let f = |t: &str, fmt: &str| Props {
            type_: Some(t.into()),
            format: Some(fmt.into()),
            ..Default::default()
        };
        let dangerous = |e: &Self, what: &str| -> Result<()> {
            if e.settings.allow_dangerous_types {
                Ok(())
            } else {
                Err(e.err(scope, loc, format!("{what} is not portable across Kubernetes clients: use i32 or i64, or allow dangerous types (--allow-dangerous-types)")))
            }
        };
        Ok(match ty {
            TypeExpr::Prim(p) => match p {
                Prim::String => s("string"),
                Prim::Bool => s("boolean"),
                // as controller-gen: a format only for the 32- and 64-bit widths, the same
                // for unsigned types (no `minimum: 0`)
                Prim::I8 | Prim::I16 | Prim::Isize | Prim::U8 | Prim::U16 | Prim::Usize => {
                    s("integer")
                }
                Prim::I32 | Prim::U32 => f("integer", "int32"),
                Prim::I64 | Prim::U64 => f("integer", "int64"),
                Prim::F32 | Prim::F64 => {
                    dangerous(self, "a floating-point number")?;
                    s("number")
                }
                Prim::Bytes => f("string", "byte"),
            },
            TypeExpr::Vec(inner) => Props {
                type_: Some("array".into()),
                items: Some(JSONSchemaPropsOrArray::Schema(Box::new(
                    self.expr_schema(scope, inner, loc)?,
                ))),
                ..Default::default()
            },
            TypeExpr::Map(inner) => Props {
                type_: Some("object".into()),
                additional_properties: Some(JSONSchemaPropsOrBool::Schema(Box::new(
                    self.expr_schema(scope, inner, loc)?,
                ))),
                ..Default::default()
            },
            TypeExpr::Option(inner) => self.expr_schema(scope, inner, loc)?,
            TypeExpr::Value => Props {
                x_kubernetes_preserve_unknown_fields: Some(true),
                ..Default::default()
            },
            TypeExpr::Known(name) => known::schema(name).map_err(|m| self.err(scope, loc, m))?,
            TypeExpr::Named(path) => {
                let inner = scope.resolve(path).map_err(|m| self.err(scope, loc, m))?;
                // a type without a source location (a Kubernetes type of the table) has its
                // errors located at the field that names it
                self.type_schema(inner.as_ref()).map_err(|e| match e.loc {
                    Some(_) => e,
                    None => self.err(scope, loc, e.message),
                })?
            }
        })
    }

    fn enum_schema(&mut self, scope: &dyn Scope, variants: &[Variant]) -> Result<Props> {
        let def = scope.def();
        let serde = &def.serde;
        let live: Vec<&Variant> = variants.iter().filter(|v| !v.serde.skip).collect();
        let all_unit = live.iter().all(|v| matches!(v.fields, VariantFields::Unit));
        if let Some(message) = enum_shape_error(def, variants) {
            return Err(self.err(scope, def.loc, message));
        }
        if serde.untagged {
            return self.untagged_schema(scope, &live);
        }
        if all_unit && serde.tag.is_none() {
            return Ok(Props {
                type_: Some("string".into()),
                enum_: Some(variant_names(def, &live)),
                ..Default::default()
            });
        }
        match &serde.tag {
            Some(tag) => self.tagged_schema(scope, &live, tag, serde.content.as_ref()),
            None => self.externally_tagged_schema(scope, &live),
        }
    }

    /// The schema of a variant's data; `None` for a unit or tuple variant.
    fn variant_body(&mut self, scope: &dyn Scope, v: &Variant) -> Result<Option<Props>> {
        Ok(match &v.fields {
            VariantFields::Unit | VariantFields::Tuple(_) => None,
            VariantFields::Newtype(ty) => Some(self.expr_schema(scope, ty, scope.def().loc)?),
            VariantFields::Struct(fields) => {
                Some(self.struct_schema(scope, fields, &ContainerSerde::default())?)
            }
        })
    }

    /// An internally or adjacently tagged enum: one object with the tag as a string enum.
    fn tagged_schema(
        &mut self,
        scope: &dyn Scope,
        live: &[&Variant],
        tag: &str,
        content: Option<&String>,
    ) -> Result<Props> {
        let def = scope.def();
        let mut properties = std::collections::BTreeMap::new();
        properties.insert(
            tag.to_string(),
            Props {
                type_: Some("string".into()),
                enum_: Some(variant_names(def, live)),
                ..Default::default()
            },
        );
        for v in live {
            let Some(body) = self.variant_body(scope, v)? else {
                continue;
            };
            match content {
                Some(c) => {
                    let slot = properties.entry(c.clone()).or_insert_with(|| Props {
                        x_kubernetes_preserve_unknown_fields: Some(true),
                        ..Default::default()
                    });
                    if live
                        .iter()
                        .filter(|v| !matches!(v.fields, VariantFields::Unit))
                        .count()
                        == 1
                    {
                        *slot = body;
                    }
                }
                None => {
                    if body.type_.as_deref() != Some("object") {
                        return Err(self.err(scope, def.loc, format!(
                            "variant `{}` of internally tagged `{}` does not hold an object: serde cannot tag it, use `#[serde(tag = \"...\", content = \"...\")]`",
                            v.ident, def.name
                        )));
                    }
                    for (k, p) in body.properties.unwrap_or_default() {
                        properties.entry(k).or_insert(p);
                    }
                }
            }
        }
        Ok(Props {
            type_: Some("object".into()),
            properties: Some(properties),
            required: Some(vec![tag.to_string()]),
            ..Default::default()
        })
    }

    /// An externally tagged enum: an object with exactly one property per variant.
    fn externally_tagged_schema(&mut self, scope: &dyn Scope, live: &[&Variant]) -> Result<Props> {
        let mut properties = std::collections::BTreeMap::new();
        let mut one_of = Vec::new();
        for v in live {
            let Some(mut body) = self.variant_body(scope, v)? else {
                continue;
            };
            if let Some(d) = description(&v.doc) {
                body.description = Some(d);
            }
            let n = variant_name(scope.def(), v);
            one_of.push(Props {
                required: Some(vec![n.clone()]),
                ..Default::default()
            });
            properties.insert(n, body);
        }
        Ok(Props {
            type_: Some("object".into()),
            properties: Some(properties),
            one_of: Some(one_of),
            ..Default::default()
        })
    }

    /// An untagged enum, in the shape kube-rs's schema rewriter gives it: variants that are all
    /// objects become one object with every variant's properties and `anyOf` their `required`
    /// sets; variants of one scalar type become that type, integer and string variants an
    /// int-or-string; a unit variant (`null` on the wire) makes the schema nullable. Variants the
    /// apiserver cannot hold in one type are an error naming them.
    fn untagged_schema(&mut self, scope: &dyn Scope, live: &[&Variant]) -> Result<Props> {
        let def = scope.def();
        let mut nullable = false;
        let mut bodies: Vec<(&str, Props)> = Vec::new();
        for v in live {
            let body = match &v.fields {
                VariantFields::Unit => {
                    nullable = true;
                    continue;
                }
                VariantFields::Newtype(ty) => {
                    nullable |= matches!(ty, TypeExpr::Option(_));
                    self.expr_schema(scope, ty, def.loc)?
                }
                VariantFields::Struct(fields) => {
                    self.struct_schema(scope, fields, &ContainerSerde::default())?
                }
                // rejected by enum_shape_error before
                VariantFields::Tuple(_) => continue,
            };
            bodies.push((v.ident.as_str(), body));
        }
        let merged = untagged_merge(&def.name, bodies).map_err(|m| self.err(scope, def.loc, m))?;
        Ok(Props {
            nullable: nullable.then_some(true),
            ..merged
        })
    }
}

/// A variant's name on the wire.
fn variant_name(def: &TypeDef, v: &Variant) -> String {
    wire_name(
        &v.ident,
        v.serde.rename.as_deref(),
        def.serde.rename_all.as_deref(),
    )
}

/// The wire names of variants, as enum values.
fn variant_names(def: &TypeDef, variants: &[&Variant]) -> Vec<JSON> {
    variants
        .iter()
        .map(|v| JSON(Value::String(variant_name(def, v))))
        .collect()
}

/// The one schema the variants of an untagged enum share (see `untagged_schema`), or why there
/// is none.
fn untagged_merge(enum_name: &str, bodies: Vec<(&str, Props)>) -> Result<Props> {
    let Some((first, _)) = bodies.first() else {
        return Err(Diagnostic::new(format!(
            "untagged enum `{enum_name}` has only unit variants, which are all `null` on the wire: drop `untagged` to write their names"
        )));
    };
    let first = first.to_string();
    let kind = |p: &Props| {
        if p.x_kubernetes_int_or_string == Some(true) {
            "int-or-string".to_string()
        } else {
            p.type_.clone().unwrap_or_else(|| "any value".into())
        }
    };
    let kinds: BTreeSet<String> = bodies.iter().map(|(_, b)| kind(b)).collect();
    let names = |k: &str| {
        bodies
            .iter()
            .filter(|(_, b)| kind(b) == k)
            .map(|(n, _)| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let strip = |mut p: Props| {
        p.description = None;
        p
    };
    match kinds
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["object"] if bodies.iter().all(|(_, b)| b.properties.is_some()) => {
            untagged_objects(enum_name, &bodies)
        }
        [k] if *k != "object" => {
            let schema = strip(bodies[0].1.clone());
            match bodies.iter().find(|(_, b)| strip(b.clone()) != schema) {
                None => Ok(schema),
                Some((other, _)) => Err(Diagnostic::new(format!(
                    "variants `{first}` and `{other}` of untagged enum `{enum_name}` are both {k}s with different schemas: the apiserver needs one schema per field, so make them agree or tag the enum"
                ))),
            }
        }
        ["integer", "string"] => Ok(crate::known::int_or_string()),
        _ => Err(Diagnostic::new(format!(
            "untagged enum `{enum_name}` has no structural schema: its variants are {} on the wire, and the apiserver needs one type per field; tag the enum or make the variants agree",
            kinds
                .iter()
                .map(|k| format!("{k} ({})", names(k)))
                .collect::<Vec<_>>()
                .join(" and ")
        ))),
    }
}

/// Untagged variants that are all objects, hoisted into one object holding every variant's
/// fields, with `anyOf` their required sets.
fn untagged_objects(enum_name: &str, bodies: &[(&str, Props)]) -> Result<Props> {
    let strip = |mut p: Props| {
        p.description = None;
        p
    };
    let mut properties: BTreeMap<String, Props> = BTreeMap::new();
    let mut owner: BTreeMap<String, &str> = BTreeMap::new();
    let mut any_of = Vec::new();
    for (variant, body) in bodies {
        let rest = Props {
            type_: None,
            description: None,
            properties: None,
            required: None,
            ..body.clone()
        };
        if rest != Props::default() {
            return Err(Diagnostic::new(format!(
                "variant `{variant}` of untagged enum `{enum_name}` carries object-level validations, which the merged object would apply to every variant: move them onto fields"
            )));
        }
        for (name, p) in body.properties.clone().unwrap_or_default() {
            match properties.get(&name) {
                Some(q) if strip(q.clone()) != strip(p.clone()) => {
                    return Err(Diagnostic::new(format!(
                        "variants `{}` and `{variant}` of untagged enum `{enum_name}` both have a field `{name}`, with different schemas: one object cannot hold both, so rename one",
                        owner[&name]
                    )));
                }
                Some(_) => {}
                None => {
                    owner.insert(name.clone(), variant);
                    properties.insert(name, p);
                }
            }
        }
        any_of.push(body.required.clone().unwrap_or_default());
    }
    // a variant without required fields matches every object: then anyOf says nothing
    let any_of = (!any_of.iter().any(Vec::is_empty)).then(|| {
        any_of
            .into_iter()
            .map(|r| Props {
                required: Some(r),
                ..Default::default()
            })
            .collect()
    });
    Ok(Props {
        type_: Some("object".into()),
        properties: Some(properties),
        any_of,
        ..Default::default()
    })
}

/// Whether a path names a type with a built-in schema (a newtype over one takes the built-in
/// schema with the newtype's markers applied, as before a type-level `Type` marker replaces it).
fn names_known_type(scope: &dyn Scope, path: &str) -> bool {
    scope
        .resolve(path)
        .is_ok_and(|s| matches!(&s.def().body, Body::Newtype(TypeExpr::Known(_))))
}

/// Whether a type expression names a struct (one whose schema a flattening merges whole).
fn names_struct(scope: &dyn Scope, ty: &TypeExpr) -> bool {
    matches!(ty, TypeExpr::Named(path)
        if scope.resolve(path).is_ok_and(|s| matches!(&s.def().body, Body::Struct(_))))
}

fn as_map(p: Props) -> Result<serde_json::Map<String, Value>> {
    match serde_json::to_value(p) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(Diagnostic::new("a schema does not serialise as an object")),
    }
}

fn from_map(m: serde_json::Map<String, Value>) -> Result<Props> {
    serde_json::from_value(Value::Object(m))
        .map_err(|e| Diagnostic::new(format!("merged schema: {e}")))
}

/// Merges what a reference says (`src`) into the schema of the type it names (`dst`), following
/// controller-gen's `flattenAllOfInto`; see [`Emitter::merged_schema`].
fn merge_reference(dst: Props, src: Props) -> Result<Props> {
    from_map(merge_maps(as_map(dst)?, as_map(src)?, Docs::FromSource)?)
}

/// A struct's schema (`own`, its type-level markers applied) with the schemas of the structs it
/// flattens merged in as controller-gen merges an embedded struct's (`flattenAllOfInto`, each
/// embedded schema in field order, then the struct's own): properties and required fields
/// join; CEL rules come out the struct's own first, then each flattened struct's, the last
/// flattened first; a validation two of them set differently is kept as `allOf` of both;
/// preserve-unknown-fields, map type and embedded-resource carry over; the description, title,
/// example and external docs are the struct's own only.
fn merge_embedded(embedded: Vec<Props>, own: Props) -> Result<Props> {
    if embedded.is_empty() {
        return Ok(own);
    }
    let mut merged = serde_json::Map::new();
    for schema in embedded {
        merged = merge_maps(merged, as_map(schema)?, Docs::Kept)?;
    }
    let own = as_map(own)?;
    for key in DOC_KEYS {
        merged.remove(*key);
        if let Some(v) = own.get(*key) {
            merged.insert(key.to_string(), v.clone());
        }
    }
    from_map(merge_maps(merged, own, Docs::Kept)?)
}

/// The keys a merge takes from one side only: see [`Docs`].
const DOC_KEYS: &[&str] = &["description", "title", "example", "externalDocs"];

/// Whose description, title, example and external docs a merge keeps.
#[derive(Clone, Copy, PartialEq)]
enum Docs {
    /// The source's (a reference's docs replace its type's).
    FromSource,
    /// The destination's (an embedded struct's docs are not the embedding one's).
    Kept,
}

fn merge_maps(
    mut dst: serde_json::Map<String, Value>,
    mut src: serde_json::Map<String, Value>,
    docs: Docs,
) -> Result<serde_json::Map<String, Value>> {
    // as controller-gen: a source's own `allOf` entries are merged first, one by one
    if let Some(Value::Array(entries)) = src.remove("allOf") {
        for entry in entries {
            if let Value::Object(entry) = entry {
                dst = merge_maps(dst, entry, docs)?;
            }
        }
    }
    let (mut dst_rest, mut src_rest) = (serde_json::Map::new(), serde_json::Map::new());
    for (key, value) in src {
        match key.as_str() {
            "description" | "title" | "example" | "externalDocs" => {
                if docs == Docs::FromSource {
                    dst.insert(key, value);
                }
            }
            "enum" => {
                dst.entry(key).or_insert(value);
            }
            "type" => match dst.get(&key) {
                Some(t) if t != &value => return Err(conflicting_types(t, &value, docs)),
                _ => {
                    dst.insert(key, value);
                }
            },
            "x-kubernetes-validations" => {
                let mut rules = value.as_array().cloned().unwrap_or_default();
                if let Some(Value::Array(theirs)) = dst.get(&key) {
                    rules.extend(theirs.iter().cloned());
                }
                dst.insert(key, Value::Array(rules));
            }
            "x-kubernetes-preserve-unknown-fields" | "x-kubernetes-map-type" => {
                dst.insert(key, value);
            }
            "required" => {
                let names = required_union(dst.get(&key), &value);
                dst.insert(key, names);
            }
            "properties" => {
                let mut ours = match dst.remove(&key) {
                    Some(Value::Object(m)) => m,
                    _ => serde_json::Map::new(),
                };
                for (name, prop) in value.as_object().cloned().unwrap_or_default() {
                    let merged = match (ours.remove(&name), prop) {
                        (Some(Value::Object(a)), Value::Object(b)) => {
                            Value::Object(merge_maps(a, b, docs)?)
                        }
                        (_, b) => b,
                    };
                    ours.insert(name, merged);
                }
                dst.insert(key, Value::Object(ours));
            }
            _ => match dst.get(&key) {
                None => {
                    dst.insert(key, value);
                }
                Some(v) if v == &value => {}
                Some(_) => {
                    // both set a validation, differently: keep both
                    if let Some(v) = dst.remove(&key) {
                        dst_rest.insert(key.clone(), v);
                    }
                    src_rest.insert(key, value);
                }
            },
        }
    }
    if !dst_rest.is_empty() {
        let all_of = dst
            .entry("allOf")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(a) = all_of {
            a.push(Value::Object(dst_rest));
            a.push(Value::Object(src_rest));
        }
    }
    Ok(dst)
}

/// Two `type`s a merge cannot join: `dst`'s (the type's, or the flattened structs') and `src`'s.
fn conflicting_types(dst: &Value, src: &Value, docs: Docs) -> Diagnostic {
    Diagnostic::new(match docs {
        Docs::FromSource => format!(
            "conflicting types: the field says {src} but its type is {dst}: drop the field's Type marker or change the type"
        ),
        Docs::Kept => format!(
            "conflicting types: a flattened struct's schema is {dst} but the struct's is {src}: a struct that flattens others must be an object, drop its Type marker"
        ),
    })
}

/// The names two `required` lists hold, sorted, each once.
fn required_union(dst: Option<&Value>, src: &Value) -> Value {
    let mut names: Vec<String> = [dst, Some(src)]
        .into_iter()
        .flatten()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names.into_iter().map(Value::String).collect()
}

fn strip_option(ty: &TypeExpr) -> &TypeExpr {
    match ty {
        TypeExpr::Option(inner) => inner,
        other => other,
    }
}

/// Whether a field must be present: not an `Option`, no serde default, no optional marker.
pub fn field_required(field: &Field, container: &ContainerSerde) -> bool {
    let m = &field.markers;
    if has_marker(m, Kind::ValidationOptional) {
        return false;
    }
    if has_marker(m, Kind::ValidationRequired) {
        return true;
    }
    if has_marker(m, Kind::Optional) || has_marker(m, Kind::K8sOptional) {
        return false;
    }
    if has_marker(m, Kind::Required) || has_marker(m, Kind::K8sRequired) {
        return true;
    }
    !matches!(field.ty, TypeExpr::Option(_)) && !field.serde.default && !container.default
}

/// The JSON name serde gives a field or variant.
pub fn wire_name(ident: &str, rename: Option<&str>, rename_all: Option<&str>) -> String {
    use heck::*;
    if let Some(r) = rename {
        return r.to_string();
    }
    match rename_all {
        Some("camelCase") => ident.to_lower_camel_case(),
        Some("PascalCase") => ident.to_upper_camel_case(),
        Some("snake_case") => ident.to_snake_case(),
        Some("lowercase") => ident.to_lowercase(),
        Some("UPPERCASE") => ident.to_uppercase(),
        Some("kebab-case") => ident.to_kebab_case(),
        Some("SCREAMING_SNAKE_CASE") => ident.to_shouty_snake_case(),
        Some("SCREAMING-KEBAB-CASE") => ident.to_shouty_kebab_case(),
        _ => ident.to_string(),
    }
}

/// A description from doc lines (marker lines already removed), built as controller-gen
/// builds one from a Go comment: first Go's comment text (trailing spaces and tabs cut,
/// leading and trailing blank lines dropped, each run of blank lines collapsed to one), then,
/// outside fenced code blocks, lines starting with `TODO` dropped and everything from a line
/// starting with `---` on cut. The second step trims nothing, as controller-gen's does not.
pub fn description(doc: &[String]) -> Option<String> {
    let mut text: Vec<&str> = Vec::new();
    for line in doc {
        let line = line.trim_end_matches([' ', '\t', '\r']);
        if line.is_empty() && text.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        text.push(line);
    }
    if text.last().is_some_and(|l| l.is_empty()) {
        text.pop();
    }
    let mut lines: Vec<&str> = Vec::new();
    let mut in_fence = false;
    for line in text {
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if !in_fence {
            if line.starts_with("TODO") {
                continue;
            }
            if line.starts_with("---") {
                break;
            }
        }
        lines.push(line);
    }
    let text = lines.join("\n");
    (!text.is_empty()).then_some(text)
}

fn push_rule(props: &mut Props, rule: ValidationRule) {
    props
        .x_kubernetes_validations
        .get_or_insert_with(Vec::new)
        .push(rule);
}

/// Applies the markers with a schema effect in their registry priority order (controller-gen's
/// `ApplyPriority`); ties keep source order; `items:` markers apply to the list's items, last.
pub fn apply_markers(props: &mut Props, markers: &[Marker]) -> std::result::Result<(), Diagnostic> {
    let mut ordered: Vec<(&Marker, SchemaEffect)> = markers
        .iter()
        .filter_map(|m| match m.def().effect {
            Effect::Schema(effect) => Some((m, effect)),
            _ => None,
        })
        .collect();
    ordered.sort_by_key(|(m, _)| {
        if m.items {
            crate::markers::registry::ITEMS_PRIORITY
        } else {
            m.def().priority
        }
    });
    for (m, effect) in ordered {
        if m.items {
            let Some(JSONSchemaPropsOrArray::Schema(items)) = props.items.as_mut() else {
                return Err(Diagnostic::new(format!(
                    "marker `+{}` applies to list items, but this is not a list: drop `items:`",
                    m.name()
                )));
            };
            let inner = Marker {
                items: false,
                ..m.clone()
            };
            apply_effect(items, effect, &inner)?;
        } else {
            apply_effect(props, effect, m)?;
        }
    }
    Ok(())
}

/// What the registry says marker `m` does, done to `props`.
fn apply_effect(
    props: &mut Props,
    effect: SchemaEffect,
    m: &Marker,
) -> std::result::Result<(), Diagnostic> {
    match effect {
        SchemaEffect::Set(keyword, needs) => {
            if !needs.is_empty() {
                need(props, needs, m)?;
            }
            set_keyword(props, keyword, m)
        }
        SchemaEffect::AddRule => add_rule(props, m),
        SchemaEffect::AddFieldCountRule(count) => add_field_count_rule(props, count, m),
        SchemaEffect::SortEnum => sort_enum(props),
    }
}

fn set_keyword(
    props: &mut Props,
    keyword: Keyword,
    m: &Marker,
) -> std::result::Result<(), Diagnostic> {
    match keyword {
        Keyword::Minimum => props.minimum = Some(float(m)?),
        Keyword::Maximum => props.maximum = Some(float(m)?),
        Keyword::ExclusiveMinimum => props.exclusive_minimum = Some(on(m)),
        Keyword::ExclusiveMaximum => props.exclusive_maximum = Some(on(m)),
        Keyword::MultipleOf => props.multiple_of = Some(float(m)?),
        Keyword::MinLength => props.min_length = Some(int(m)?),
        Keyword::MaxLength => props.max_length = Some(int(m)?),
        Keyword::Pattern => props.pattern = Some(string(m)?),
        Keyword::Enum => {
            let items = m.value.as_array().cloned().unwrap_or_default();
            props.enum_ = Some(items.into_iter().map(|i| JSON(enum_item(i))).collect());
        }
        Keyword::Format => props.format = Some(string(m)?),
        Keyword::MinItems => props.min_items = Some(int(m)?),
        Keyword::MaxItems => props.max_items = Some(int(m)?),
        Keyword::UniqueItems => props.unique_items = Some(on(m)),
        Keyword::MinProperties => props.min_properties = Some(int(m)?),
        Keyword::MaxProperties => props.max_properties = Some(int(m)?),
        Keyword::Type => {
            let t = string(m)?;
            if t != "object" {
                props.properties = None;
                props.required = None;
            }
            props.type_ = Some(t);
        }
        Keyword::Default => {
            let value = match (&m.value, props.type_.as_deref()) {
                (Value::Object(o), Some("array")) if o.is_empty() => Value::Array(vec![]),
                (v, _) => v.clone(),
            };
            props.default = Some(JSON(value));
        }
        Keyword::DefaultJson => {
            if !m.value.is_null() {
                props.default = Some(JSON(m.value.clone()));
            }
        }
        Keyword::Example => props.example = Some(JSON(m.value.clone())),
        Keyword::Title => props.title = Some(value_to_string(&m.value)),
        Keyword::ListType => {
            let t = string(m)?;
            if !["map", "set", "atomic"].contains(&t.as_str()) {
                return Err(Diagnostic::new(format!(
                    "listType must be map, set or atomic, found `{t}`"
                )));
            }
            props.x_kubernetes_list_type = Some(t);
        }
        Keyword::ListMapKey => {
            let k = string(m)?;
            let keys = props
                .x_kubernetes_list_map_keys
                .get_or_insert_with(Vec::new);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        Keyword::MapType => props.x_kubernetes_map_type = Some(string(m)?),
        Keyword::ExternalDocs => {
            props.external_docs = Some(ExternalDocumentation {
                url: m.arg_str("url").map(str::to_string),
                description: m.arg_str("description").map(str::to_string),
            });
        }
        Keyword::Nullable => {
            if on(m) {
                props.nullable = Some(true);
            }
        }
        Keyword::PreserveUnknownFields => {
            if on(m) {
                props.x_kubernetes_preserve_unknown_fields = Some(true);
            }
        }
        Keyword::EmbeddedResource => {
            if on(m) {
                props.x_kubernetes_embedded_resource = Some(true);
                props.x_kubernetes_preserve_unknown_fields = Some(true);
                props.type_ = Some("object".into());
            }
        }
        Keyword::IntOrString => {
            if on(m) {
                let int_or_string = known::int_or_string();
                props.x_kubernetes_int_or_string = int_or_string.x_kubernetes_int_or_string;
                props.any_of = int_or_string.any_of;
                props.type_ = None;
            }
        }
    }
    Ok(())
}

fn on(m: &Marker) -> bool {
    m.value != Value::Bool(false)
}

fn int(m: &Marker) -> std::result::Result<i64, Diagnostic> {
    m.value
        .as_i64()
        .ok_or_else(|| Diagnostic::new(format!("marker `+{}` expects an integer", m.name())))
}

fn float(m: &Marker) -> std::result::Result<f64, Diagnostic> {
    m.value
        .as_f64()
        .ok_or_else(|| Diagnostic::new(format!("marker `+{}` expects a number", m.name())))
}

fn string(m: &Marker) -> std::result::Result<String, Diagnostic> {
    m.value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| Diagnostic::new(format!("marker `+{}` expects a string", m.name())))
}

/// Enum items are JSON-decoded where they parse (`1;2;"foo"`), strings otherwise.
fn enum_item(v: Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str::<Value>(&s)
            .ok()
            .filter(|p| p.is_number() || p.is_string() || p.is_boolean())
            .unwrap_or(Value::String(s)),
        other => other,
    }
}

/// `+kubebuilder:validation:{AtMostOneOf,ExactlyOneOf,AtLeastOneOf}`: a CEL rule on the object.
fn add_field_count_rule(
    props: &mut Props,
    count: FieldCount,
    m: &Marker,
) -> std::result::Result<(), Diagnostic> {
    let short = m.kind.name().trim_start_matches("kubebuilder:validation:");
    let fields: Vec<String> = m
        .value
        .as_array()
        .map(|a| a.iter().map(value_to_string).collect())
        .unwrap_or_default();
    if let Some(f) = fields.iter().find(|f| f.contains('.')) {
        return Err(Diagnostic::new(format!(
            "{short} lists `{f}`: name direct fields only, without dots"
        )));
    }
    let counts: Vec<String> = fields
        .iter()
        .map(|f| format!("(has(self.{f})?1:0)"))
        .collect();
    let names = fields.join(" ");
    let (rule, message) = match count {
        FieldCount::AtMostOne => (
            format!("{} <= 1", counts.join("+")),
            format!("at most one of the fields in [{names}] may be set"),
        ),
        FieldCount::ExactlyOne => (
            format!("{} == 1", counts.join("+")),
            format!("exactly one of the fields in [{names}] must be set"),
        ),
        FieldCount::AtLeastOne => (
            fields
                .iter()
                .map(|f| format!("has(self.{f})"))
                .collect::<Vec<_>>()
                .join("||"),
            format!("at least one of the fields in [{names}] must be set"),
        ),
    };
    push_rule(
        props,
        ValidationRule {
            rule,
            message: Some(message),
            ..Default::default()
        },
    );
    Ok(())
}

/// `+kubebuilder:validation:XValidation`: the rule its arguments spell.
fn add_rule(props: &mut Props, m: &Marker) -> std::result::Result<(), Diagnostic> {
    let reason = m.arg_str("reason").map(str::to_string);
    if let Some(r) = &reason
        && ![
            "FieldValueInvalid",
            "FieldValueForbidden",
            "FieldValueRequired",
            "FieldValueDuplicate",
        ]
        .contains(&r.as_str())
    {
        return Err(Diagnostic::new(format!(
            "XValidation reason `{r}` is not one of FieldValueInvalid, FieldValueForbidden, FieldValueRequired, FieldValueDuplicate"
        )));
    }
    let Some(rule) = m.arg_str("rule") else {
        return Err(Diagnostic::new(
            "XValidation needs `rule=\"<CEL expression>\"`",
        ));
    };
    push_rule(
        props,
        ValidationRule {
            rule: rule.to_string(),
            message: m.arg_str("message").map(str::to_string),
            message_expression: m.arg_str("messageExpression").map(str::to_string),
            reason,
            field_path: m.arg_str("fieldPath").map(str::to_string),
            optional_old_self: m.arg("optionalOldSelf").and_then(Value::as_bool),
        },
    );
    Ok(())
}

/// `+k8s:enum`: controller-gen collects the string constants of the type, sorted; in Rust the
/// constants are the unit variants of an enum, whose wire names become the sorted values.
fn sort_enum(props: &mut Props) -> std::result::Result<(), Diagnostic> {
    let is_string = props.type_.as_deref() == Some("string");
    let Some(values) = props.enum_.as_mut().filter(|_| is_string) else {
        return Err(Diagnostic::new(
            "`+k8s:enum` needs an enum of unit variants (its values, as Go's string constants are): put it on such an enum, or list values with `+kubebuilder:validation:Enum`",
        ));
    };
    values.sort_by_key(|v| serde_json::to_string(&v.0).unwrap_or_default());
    Ok(())
}

fn type_is(props: &Props, types: &[&str]) -> bool {
    props.type_.as_deref().is_none_or(|t| types.contains(&t))
        || props.x_kubernetes_int_or_string == Some(true)
}

/// Refuses a marker on a schema whose type it does not fit.
fn need(props: &Props, types: &[&str], m: &Marker) -> std::result::Result<(), Diagnostic> {
    if type_is(props, types) {
        Ok(())
    } else {
        Err(Diagnostic::new(format!(
            "marker `+{}` needs a {} field, but this one is {}: move it to a matching field or drop it",
            m.name(),
            types.join(" or "),
            props.type_.as_deref().unwrap_or("untyped")
        )))
    }
}

/// Cuts every description in a schema tree to `max` bytes as controller-gen does.
pub fn truncate_descriptions(props: &mut Props, max: usize) {
    if let Some(d) = props.description.take()
        && max > 0
    {
        props.description = Some(truncate(&d, max));
    }
    if let Some(p) = props.properties.as_mut() {
        for v in p.values_mut() {
            truncate_descriptions(v, max);
        }
    }
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = props.items.as_mut() {
        truncate_descriptions(items, max);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(a)) = props.additional_properties.as_mut() {
        truncate_descriptions(a, max);
    }
    for list in [&mut props.all_of, &mut props.any_of, &mut props.one_of]
        .into_iter()
        .flatten()
    {
        for p in list {
            truncate_descriptions(p, max);
        }
    }
}

fn truncate(d: &str, max: usize) -> String {
    if d.len() <= max {
        return d.to_string();
    }
    let mut cut = max;
    while !d.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &d[..cut];
    if let Some(i) = head.rfind(['.', '!', '?']) {
        return head[..=i].to_string();
    }
    match head.rfind(char::is_whitespace) {
        Some(i) => format!("{}...", &head[..i]),
        None => format!("{head}..."),
    }
}

/// A named type a definition mentions, as written, and the function yielding its definition.
pub type Dependency = (&'static str, fn() -> Definition);

/// A definition as the derives hand it over at run time: the IR of one type and, for every
/// named type its fields mention, the function that yields that type's definition.
#[derive(Clone)]
pub struct Definition {
    pub def: TypeDef,
    pub deps: Vec<Dependency>,
}

impl Definition {
    /// Builds a definition from the IR a derive serialised at compile time.
    pub fn from_ir(ir: &str, deps: Vec<Dependency>) -> Definition {
        match serde_json::from_str(ir) {
            Ok(def) => Definition { def, deps },
            Err(e) => panic!(
                "operator-gen: the IR a derive recorded does not parse ({e}): rebuild with the same operator-gen version"
            ),
        }
    }
}

impl Definition {
    /// The definition of a type with a built-in schema, by its canonical full path
    /// (`k8s_openapi::api::core::v1::Container`, `serde_json::Value`).
    pub fn known(path: &str) -> Definition {
        Definition {
            def: known::definition(path),
            deps: Vec::new(),
        }
    }
}

impl Scope for Definition {
    fn def(&self) -> &TypeDef {
        &self.def
    }
    fn resolve(&self, path: &str) -> std::result::Result<Box<dyn Scope + '_>, Diagnostic> {
        self.deps
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, f)| Box::new(f()) as Box<dyn Scope>)
            .ok_or_else(|| {
                Diagnostic::new(format!(
                    "`{path}` has no schema: add #[derive(Schema)] to it"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn props(v: Value) -> Props {
        serde_json::from_value(v).expect("schema")
    }

    /// Doc lines (marker lines already removed) and the description controller-gen v0.21.0
    /// writes for the Go comment of the same lines.
    #[test]
    fn descriptions_follow_go_comment_text_then_controller_gen_filters() {
        let cases: &[(&[&str], Option<&str>)] = &[
            // `A.`, blank, `+optional`, blank, `B.`: the marker's removal leaves a run of two
            (&["A.", "", "", "B."], Some("A.\n\nB.")),
            // marker first and last; runs of blank lines, one of them only spaces
            (&["", "A.", "", "", "B.", ""], Some("A.\n\nB.")),
            (&["A.   ", "    ", "B.", "", ""], Some("A.\n\nB.")),
            (&["", "", "Lead blanks."], Some("Lead blanks.")),
            // indentation stays
            (
                &["A.", "  indented", "\ttabbed", "", "    code"],
                Some("A.\n  indented\n\ttabbed\n\n    code"),
            ),
            // `---` cuts after the collapse: the blank before it stays
            (&["A.", "", "---", "hidden"], Some("A.\n")),
            // a dropped TODO line leaves its blank neighbours
            (&["A.", "", "TODO x", "", "B."], Some("A.\n\n\nB.")),
            (&["TODO first", "", "A."], Some("\nA.")),
            // inside a fence neither rule applies; a fence must start the line
            (
                &["A.", "```", "TODO inside", "", "", "---", "```", "C."],
                Some("A.\n```\nTODO inside\n\n---\n```\nC."),
            ),
            (
                &["A.", " ```", "TODO inside", "", "", "---", " ```", "C."],
                Some("A.\n ```\n"),
            ),
            (&["", "  ", ""], None),
            (&["TODO only", ""], None),
        ];
        for (doc, want) in cases {
            let doc: Vec<String> = doc.iter().map(|l| l.to_string()).collect();
            assert_eq!(description(&doc).as_deref(), *want, "doc {doc:?}");
        }
    }

    /// controller-gen's `fieldLevelAliasOverride` / `fieldLevelLocalDeclarationOverride`: a
    /// validation both sides set differently stays twice in `allOf`, type's first; equal values
    /// collapse; the reference's docs win; its rules come first.
    #[test]
    fn references_merge_like_controller_gen_flattens_them() {
        let ty = props(json!({
            "type": "string", "description": "type doc", "title": "type title",
            "minLength": 4, "maxLength": 255, "pattern": "^a",
            "x-kubernetes-validations": [{"rule": "type"}]
        }));
        let field = props(json!({
            "type": "string", "description": "field doc",
            "minLength": 10, "pattern": "^a", "enum": ["ab"],
            "x-kubernetes-validations": [{"rule": "field"}]
        }));
        let merged =
            serde_json::to_value(merge_reference(ty, field).expect("merges")).expect("json");
        assert_eq!(
            merged,
            json!({
                "type": "string", "description": "field doc", "title": "type title",
                "maxLength": 255, "pattern": "^a", "enum": ["ab"],
                "allOf": [{"minLength": 4}, {"minLength": 10}],
                "x-kubernetes-validations": [{"rule": "field"}, {"rule": "type"}]
            })
        );
    }

    #[test]
    fn a_reference_cannot_change_the_type() {
        let err = merge_reference(
            props(json!({"type": "object"})),
            props(json!({"type": "string"})),
        )
        .expect_err("conflicting types");
        assert!(err.message.contains("conflicting types"), "{err}");
    }

    /// Embedded schemas merge in field order, then the struct's own: rules come out own first,
    /// the last flattened first; a keyword two set differently is kept as allOf of both, as
    /// controller-gen's flattenAllOfInto hoists it; docs are the struct's own; a struct that is
    /// no object cannot flatten.
    #[test]
    fn flattened_structs_merge_like_controller_gen_embeds_them() {
        let first = props(
            json!({"type": "object", "description": "first", "title": "First",
            "minProperties": 1, "x-kubernetes-validations": [{"rule": "a"}],
            "properties": {"a": {"type": "string"}}, "required": ["a"]}),
        );
        let second = props(json!({"type": "object", "minProperties": 2,
            "x-kubernetes-validations": [{"rule": "b"}], "x-kubernetes-map-type": "atomic",
            "properties": {"b": {"type": "string"}}}));
        let own = props(json!({"type": "object", "description": "own",
            "x-kubernetes-validations": [{"rule": "own"}], "minProperties": 3,
            "properties": {"c": {"type": "string"}}, "required": ["c"]}));
        let merged = merge_embedded(vec![first, second], own).expect("merges");
        assert_eq!(
            serde_json::to_value(merged).expect("json"),
            json!({
                "type": "object",
                "description": "own",
                // the conflict moves both to allOf and clears the keyword, which the next sets
                "allOf": [{"minProperties": 1}, {"minProperties": 2}],
                "minProperties": 3,
                "x-kubernetes-validations": [{"rule": "own"}, {"rule": "b"}, {"rule": "a"}],
                "x-kubernetes-map-type": "atomic",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}},
                "required": ["a", "c"]
            })
        );
        let err = merge_embedded(
            vec![props(json!({"type": "object"}))],
            props(json!({"type": "string"})),
        )
        .expect_err("a string cannot flatten a struct");
        assert!(
            err.message
                .contains("a struct that flattens others must be an object"),
            "{err}"
        );
    }

    fn untagged(variants: Vec<(&'static str, Value)>) -> Result<Value> {
        let bodies = variants.into_iter().map(|(n, v)| (n, props(v))).collect();
        untagged_merge("Choice", bodies).map(|p| serde_json::to_value(p).expect("json"))
    }

    /// kube-rs's rewriter shape: one object with every variant's properties, `anyOf` their
    /// required sets.
    #[test]
    fn untagged_objects_are_hoisted_into_one() {
        let merged = untagged(vec![
            ("Git", json!({"type": "object", "description": "git", "required": ["url"],
                "properties": {"url": {"type": "string", "description": "the URL"}}})),
            ("Image", json!({"type": "object", "required": ["image"],
                "properties": {"image": {"type": "string"}, "url": {"type": "string", "description": "other doc"}}})),
        ])
        .expect("structural");
        assert_eq!(
            merged,
            json!({
                "type": "object",
                "properties": {"image": {"type": "string"}, "url": {"type": "string", "description": "the URL"}},
                "anyOf": [{"required": ["url"]}, {"required": ["image"]}]
            })
        );
        // a variant with nothing required matches any object: anyOf would say nothing
        let loose = untagged(vec![
            ("A", json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}})),
            ("B", json!({"type": "object", "properties": {"b": {"type": "string"}}})),
        ])
        .expect("structural");
        assert!(loose.get("anyOf").is_none(), "{loose}");
    }

    #[test]
    fn untagged_scalars_share_their_type() {
        assert_eq!(
            untagged(vec![
                ("Number", json!({"type": "integer", "format": "int32"})),
                ("Name", json!({"type": "string"}))
            ]),
            Ok(
                json!({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true})
            )
        );
        assert_eq!(
            untagged(vec![
                ("A", json!({"type": "string", "description": "a"})),
                ("B", json!({"type": "string"}))
            ]),
            Ok(json!({"type": "string"}))
        );
    }

    #[test]
    fn untagged_without_one_type_is_an_error_naming_the_variants() {
        let err = untagged(vec![
            ("Name", json!({"type": "string"})),
            (
                "Spec",
                json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            ),
        ])
        .expect_err("string or object");
        assert_eq!(
            err.message,
            "untagged enum `Choice` has no structural schema: its variants are object (`Spec`) and string (`Name`) on the wire, and the apiserver needs one type per field; tag the enum or make the variants agree"
        );
        let err = untagged(vec![
            (
                "A",
                json!({"type": "object", "properties": {"x": {"type": "string"}}}),
            ),
            (
                "B",
                json!({"type": "object", "properties": {"x": {"type": "integer"}}}),
            ),
        ])
        .expect_err("x twice");
        assert!(
            err.message
                .contains("variants `A` and `B` of untagged enum `Choice` both have a field `x`"),
            "{err}"
        );
        let err = untagged(vec![
            ("A", json!({"type": "string", "format": "date-time"})),
            ("B", json!({"type": "string"})),
        ])
        .expect_err("two string schemas");
        assert!(
            err.message.contains("both strings with different schemas"),
            "{err}"
        );
        let err = untagged(vec![]).expect_err("all unit");
        assert!(err.message.contains("only unit variants"), "{err}");
    }
}
