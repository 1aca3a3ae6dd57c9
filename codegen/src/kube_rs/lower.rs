//! Lowering a type of a kube-rs crate: the IR operator-gen's own derive gives (serde, fields,
//! docs), plus what kube's `#[kube(...)]` and schemars' `#[schemars(...)]`, `#[garde(...)]`,
//! `#[x_kube(...)]` attributes say. An attribute that is not read is an error naming it.

use crate::ir::{KubeResource, KubeType, ResourceAttrs, SchemaAttrs, TypeDef};
use crate::lower::{Errors, lists_key, skip_value};
use serde_json::{Value, json};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;

/// The IR of a type deriving kube's `CustomResource` (`kind`) or schemars' `JsonSchema`.
pub fn type_def(input: &syn::DeriveInput, kind: bool, errors: &mut Errors) -> Option<TypeDef> {
    let before = errors.len();
    let mut def = crate::lower::type_def(input, errors)?;
    // kube's KubeSchema derives the schema of a copy of the type without its `garde` attributes
    let garde = !lists_key(&input.attrs, "derive", "KubeSchema");
    let mut kube = KubeType {
        schema: schema_attrs(&input.attrs, garde, errors),
        ..Default::default()
    };
    let members: Vec<&[syn::Attribute]> = match &input.data {
        syn::Data::Struct(s) => s.fields.iter().map(|f| f.attrs.as_slice()).collect(),
        syn::Data::Enum(e) => e.variants.iter().map(|v| v.attrs.as_slice()).collect(),
        syn::Data::Union(_) => Vec::new(),
    };
    kube.members = members
        .iter()
        .map(|a| schema_attrs(a, garde, errors))
        .collect();
    for attrs in std::iter::once(input.attrs.as_slice()).chain(members.iter().copied()) {
        default_fn(attrs, errors);
    }
    if let crate::ir::Body::Struct(fields) = &mut def.body {
        for (field, attrs) in fields.iter_mut().zip(&members) {
            field.serde.skip |= lists_key(attrs, "schemars", "skip");
        }
    }
    if kind {
        let (resource, attrs) = kube_attrs(input, errors);
        def.resource = Some(resource);
        kube.resource = Some(attrs);
    }
    def.kube = Some(Box::new(kube));
    (errors.len() == before).then_some(def)
}

/// `#[serde(default = "path")]` is an error: kube's `crd()` writes the value the function
/// returns, which operator-gen does not evaluate.
fn default_fn(attrs: &[syn::Attribute], errors: &mut Errors) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("default") && meta.input.peek(syn::Token![=]) {
                errors.push(
                    meta.path.span(),
                    "#[serde(default = \"...\")]: kube's crd() writes the value that function returns, which operator-gen does not evaluate: drop it, or describe this type with operator-gen's #[derive(Schema)] and markers",
                );
            }
            skip_value(&meta)
        });
    }
}

/// The error for an attribute key operator-gen does not read.
fn not_read(attr: &str, key: &str) -> String {
    format!(
        "#[{attr}({key})] is not read by operator-gen, so the CRD would not be the one kube's crd() generates: drop it, or describe this type with operator-gen's #[derive(Schema)] and markers"
    )
}

fn lit_str(meta: &ParseNestedMeta) -> syn::Result<String> {
    let lit: syn::LitStr = meta.value()?.parse()?;
    Ok(lit.value())
}

fn key_of(meta: &ParseNestedMeta) -> String {
    meta.path
        .get_ident()
        .map(|i| i.to_string())
        .unwrap_or_default()
}

/// `#[schemars(...)]`, `#[garde(...)]` (when `garde`) and `#[x_kube(...)]` of a type, field or
/// variant.
fn schema_attrs(attrs: &[syn::Attribute], garde: bool, errors: &mut Errors) -> SchemaAttrs {
    let mut out = SchemaAttrs::default();
    for attr in attrs {
        let Some(name) = attr.path().get_ident().map(|i| i.to_string()) else {
            continue;
        };
        let result = match name.as_str() {
            "garde" if !garde => Ok(()),
            "schemars" | "garde" => {
                attr.parse_nested_meta(|meta| schemars_key(&name, &meta, &mut out))
            }
            "x_kube" => attr.parse_nested_meta(|meta| match key_of(&meta).as_str() {
                "validation" => {
                    out.validations.push(rule(&meta.value()?.parse()?)?);
                    Ok(())
                }
                "cel" => Ok(()),
                key => Err(meta.error(not_read("x_kube", key))),
            }),
            "validate" => Err(syn::Error::new(attr.span(), not_read("validate", "..."))),
            _ => Ok(()),
        };
        if let Err(e) = result {
            errors.push(e.span(), e.to_string());
        }
    }
    out
}

/// One key of `#[schemars(...)]` (or of `#[garde(...)]`, the validation keys schemars reads).
fn schemars_key(attr: &str, meta: &ParseNestedMeta, out: &mut SchemaAttrs) -> syn::Result<()> {
    let key = key_of(meta);
    let mut keyword = |ty: &str, name: &str, v: Value| {
        out.keywords.push((ty.to_string(), name.to_string(), v));
    };
    match key.as_str() {
        "title" if attr == "schemars" => out.title = Some(lit_str(meta)?),
        "description" if attr == "schemars" => out.description = Some(lit_str(meta)?),
        "skip" | "crate" if attr == "schemars" => skip_value(meta)?,
        "length" | "range" => {
            let (ty, suffix): (&[&str], &[&str]) = if key == "length" {
                (&["string", "array"], &["Length", "Items"])
            } else {
                (&["number"], &["imum"])
            };
            meta.parse_nested_meta(|inner| {
                let bound = key_of(&inner);
                let value = number(&inner.value()?.parse()?)?;
                let ends: &[&str] = match bound.as_str() {
                    "min" => &["min"],
                    "max" => &["max"],
                    "equal" => &["min", "max"],
                    other => return Err(inner.error(not_read(attr, &format!("{key}({other})")))),
                };
                for end in ends {
                    for (t, s) in ty.iter().zip(suffix) {
                        keyword(t, &format!("{end}{s}"), value.clone());
                    }
                }
                Ok(())
            })?;
        }
        "regex" | "pattern" if meta.input.peek(syn::token::Paren) => {
            // `regex(pattern = "...")`, `pattern("...")`
            let pattern = if key == "pattern" {
                let content;
                syn::parenthesized!(content in meta.input);
                content.parse::<syn::LitStr>()?.value()
            } else {
                let mut found = None;
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("pattern") {
                        found = Some(lit_str(&inner)?);
                        Ok(())
                    } else {
                        Err(inner.error(not_read(attr, &format!("{key}({})", key_of(&inner)))))
                    }
                })?;
                found.ok_or_else(|| meta.error(not_read(attr, &key)))?
            };
            keyword("string", "pattern", Value::String(pattern));
        }
        "email" => keyword("", "format", json!("email")),
        "url" => keyword("", "format", json!("uri")),
        "ip" => keyword("", "format", json!("ip")),
        "ipv4" => keyword("", "format", json!("ipv4")),
        "ipv6" => keyword("", "format", json!("ipv6")),
        // garde's checks schemars does not read
        "dive" | "skip" | "custom" | "ascii" | "alphanumeric" if attr == "garde" => {
            skip_value(meta)?
        }
        _ => return Err(meta.error(not_read(attr, &key))),
    }
    Ok(())
}

/// A numeric literal (possibly negated) as JSON.
fn number(expr: &syn::Expr) -> syn::Result<Value> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => Ok(json!(i.base10_parse::<i64>()?)),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => Ok(json!(f.base10_parse::<f64>()?)),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match number(&u.expr)? {
            Value::Number(n) if n.is_i64() => Ok(json!(-n.as_i64().unwrap_or_default())),
            Value::Number(n) => Ok(json!(-n.as_f64().unwrap_or_default())),
            _ => Err(syn::Error::new(u.span(), "expected a number")),
        },
        other => Err(syn::Error::new(
            other.span(),
            "expected a number literal: operator-gen reads bounds written as literals",
        )),
    }
}

/// A CEL rule as kube writes it into `x-kubernetes-validations`: a string literal, or
/// `Rule::new("...")` with `.message("...")`, `.field_path("...")`, `.reason(Reason::...)`.
fn rule(expr: &syn::Expr) -> syn::Result<Value> {
    let string = |e: &syn::Expr| match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    };
    let unreadable = |e: &dyn Spanned| {
        syn::Error::new(
            e.span(),
            "a CEL rule operator-gen reads is a string literal or Rule::new(\"...\") with .message(\"...\"), .field_path(\"...\"), .reason(Reason::...): write it so",
        )
    };
    if let Some(r) = string(expr) {
        return Ok(json!({ "rule": r }));
    }
    match expr {
        syn::Expr::Call(c) if c.args.len() == 1 => {
            let r = string(&c.args[0]).ok_or_else(|| unreadable(c))?;
            Ok(json!({ "rule": r }))
        }
        syn::Expr::MethodCall(m) if m.args.len() == 1 => {
            let mut base = rule(&m.receiver)?;
            let arg = &m.args[0];
            let (key, value) = match m.method.to_string().as_str() {
                "message" => ("message", string(arg).ok_or_else(|| unreadable(arg))?),
                "field_path" => ("fieldPath", string(arg).ok_or_else(|| unreadable(arg))?),
                "reason" => match arg {
                    syn::Expr::Path(p) => (
                        "reason",
                        p.path
                            .segments
                            .last()
                            .map(|s| s.ident.to_string())
                            .unwrap_or_default(),
                    ),
                    other => return Err(unreadable(other)),
                },
                _ => return Err(unreadable(m)),
            };
            base[key] = Value::String(value);
            Ok(base)
        }
        syn::Expr::Group(g) => rule(&g.expr),
        other => Err(unreadable(other)),
    }
}

/// What `#[kube(...)]` says: the resource's identity (the IR every kind has) and the rest.
fn kube_attrs(input: &syn::DeriveInput, errors: &mut Errors) -> (ResourceAttrs, KubeResource) {
    let mut id = ResourceAttrs::default();
    let mut k = KubeResource {
        schema_derived: true,
        served: true,
        storage: true,
        ..Default::default()
    };
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("kube")) {
        if let Err(e) = attr.parse_nested_meta(|meta| kube_key(&meta, &mut id, &mut k)) {
            errors.push(e.span(), e.to_string());
        }
    }
    for (key, value) in [
        ("group", &id.group),
        ("version", &id.version),
        ("kind", &id.kind),
    ] {
        if value.is_empty() {
            errors.push(
                input.ident.span(),
                format!("#[kube(...)] on `{}` needs `{key} = \"...\"`", input.ident),
            );
        }
    }
    if id.doc.is_empty() {
        id.doc = vec![format!(
            " Auto-generated derived type for {} via `CustomResource`",
            input.ident
        )];
    }
    (id, k)
}

fn kube_key(
    meta: &ParseNestedMeta,
    id: &mut ResourceAttrs,
    k: &mut KubeResource,
) -> syn::Result<()> {
    let key = key_of(meta);
    match key.as_str() {
        "group" => id.group = lit_str(meta)?,
        "version" => id.version = lit_str(meta)?,
        "kind" => id.kind = lit_str(meta)?,
        "doc" => id.doc = vec![lit_str(meta)?],
        "status" => id.status = Some(lit_str(meta)?),
        "plural" => k.plural = Some(lit_str(meta)?),
        "singular" => k.singular = Some(lit_str(meta)?),
        "namespaced" => k.namespaced = true,
        "shortname" => k.shortnames.push(lit_str(meta)?),
        "category" => k.categories.push(lit_str(meta)?),
        "selectable" => k.selectable.push(lit_str(meta)?),
        "printcolumn" => k.printcolumns.push(object_attr(meta, &PRINTCOLUMN_KEYS)?),
        "scale" => k.scale = Some(object_attr(meta, &SCALE_KEYS)?),
        "validation" => k.validations.push(rule(&meta.value()?.parse()?)?),
        "served" | "storage" => {
            let b: syn::LitBool = meta.value()?.parse()?;
            if key == "served" { k.served = b.value } else { k.storage = b.value }
        }
        "deprecated" => {
            k.deprecated = Some(if meta.input.peek(syn::Token![=]) {
                Some(lit_str(meta)?)
            } else {
                None
            })
        }
        "schema" => match lit_str(meta)?.as_str() {
            "derived" => k.schema_derived = true,
            "disabled" => k.schema_derived = false,
            "manual" => return Err(meta.error("#[kube(schema = \"manual\")] takes the CRD's schema from a hand-written JsonSchema impl, which operator-gen does not read: derive JsonSchema, or describe this type with operator-gen's #[derive(Schema)] and markers")),
            other => return Err(meta.error(format!("#[kube(schema = \"{other}\")] is not a schema mode: write \"derived\", \"manual\" or \"disabled\""))),
        },
        "annotation" | "label" => {
            let content;
            syn::parenthesized!(content in meta.input);
            let pair: syn::punctuated::Punctuated<syn::LitStr, syn::Token![,]> =
                content.parse_terminated(|s: syn::parse::ParseStream| s.parse(), syn::Token![,])?;
            let [key_lit, value] = [pair.first(), pair.get(1)];
            let (Some(key_lit), Some(value), 2) = (key_lit, value, pair.len()) else {
                return Err(meta.error(format!("#[kube({key}(\"key\", \"value\"))] takes a key and a value")));
            };
            let kv = (key_lit.value(), value.value());
            if key == "annotation" { k.annotations.push(kv) } else { k.labels.push(kv) }
        }
        // what changes the Rust code kube generates, not the CRD
        "derive" | "attr" | "crates" | "cel" | "root" => skip_value(meta)?,
        _ => return Err(meta.error(not_read("kube", &key))),
    }
    Ok(())
}

/// The keys of `printcolumn(...)`, by their name in the attribute and in the CRD.
const PRINTCOLUMN_KEYS: [(&str, &str); 6] = [
    ("name", "name"),
    ("type_", "type"),
    ("json_path", "jsonPath"),
    ("description", "description"),
    ("format", "format"),
    ("priority", "priority"),
];

const SCALE_KEYS: [(&str, &str); 3] = [
    ("spec_replicas_path", "specReplicasPath"),
    ("status_replicas_path", "statusReplicasPath"),
    ("label_selector_path", "labelSelectorPath"),
];

/// `key = r#"{ JSON }"#` or `key(name = value, ...)` as the JSON object the CRD holds, its keys
/// in the CRD's order.
fn object_attr(meta: &ParseNestedMeta, keys: &[(&str, &str)]) -> syn::Result<Value> {
    let mut given = serde_json::Map::new();
    if meta.input.peek(syn::Token![=]) {
        let text = lit_str(meta)?;
        let parsed: Value = serde_json::from_str(&text)
            .map_err(|e| meta.error(format!("#[kube({})] is not JSON: {e}", key_of(meta))))?;
        given = parsed.as_object().cloned().unwrap_or_default();
    } else {
        meta.parse_nested_meta(|inner| {
            let k = key_of(&inner);
            let Some((_, crd)) = keys.iter().find(|(a, _)| *a == k) else {
                return Err(inner.error(not_read("kube", &format!("{}({k})", key_of(meta)))));
            };
            let expr: syn::Expr = inner.value()?.parse()?;
            let v = match &expr {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Value::String(s.value()),
                other => number(other)?,
            };
            given.insert(crd.to_string(), v);
            Ok(())
        })?;
    }
    Ok(Value::Object(given))
}
