//! Lowering from `syn` items to the IR, shared by the derive and the source scan: doc comments,
//! markers in both spellings, serde attributes, field types.

use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::*;
use crate::markers::{self, Effect, Target};
use proc_macro2::Span;
use serde_json::Value;
use syn::spanned::Spanned;

/// What lowering reports problems into: [`Diagnostics`] anchored by the span each problem
/// points at (the derive's `compile_error!` needs it; the scan reads the location).
pub type Errors = Diagnostics<Span>;

impl Diagnostics<Span> {
    /// Reports a problem at `span`, located at the span's start.
    pub fn push(&mut self, span: Span, problem: impl Into<Diagnostic>) {
        self.push_anchored(span, problem.into().at(loc(span)));
    }
}

pub fn loc(span: Span) -> Option<Loc> {
    let start = span.start();
    (start.line > 0).then_some(Loc {
        line: start.line,
        column: start.column,
    })
}

/// Which derives an item carries, as far as operator-gen cares, each known by its path.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Derives {
    /// operator-gen's `CustomResource`.
    pub custom_resource: bool,
    /// operator-gen's `Schema`.
    pub schema: bool,
    /// kube's `CustomResource` (`kube::CustomResource`, `kube::derive::CustomResource`,
    /// `kube_derive::CustomResource`).
    pub kube_custom_resource: bool,
    /// schemars' `JsonSchema` or kube's `KubeSchema`: a type kube's schema generation reads.
    pub json_schema: bool,
}

/// The crates whose `CustomResource` derive is kube's.
const KUBE_CRATES: &[&str] = &["kube", "kube_derive"];

/// The derives of `attrs`; `resolve` gives the full path an imported name stands for in the
/// item's module (`CustomResource` → `kube::CustomResource` after `use kube::CustomResource`),
/// `None` for a name not imported.
pub fn derives(attrs: &[syn::Attribute], resolve: &dyn Fn(&str) -> Option<Vec<String>>) -> Derives {
    let mut d = Derives::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = attr.parse_nested_meta(|meta| {
            let written: Vec<String> = meta
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let full = match written.split_first() {
                Some((first, rest)) => match resolve(first) {
                    Some(mut full) => {
                        full.extend(rest.iter().cloned());
                        full
                    }
                    None => written.clone(),
                },
                None => return Ok(()),
            };
            let from = |crates: &[&str]| {
                full.len() > 1 && full.first().is_some_and(|c| crates.contains(&c.as_str()))
            };
            match full.last().map(String::as_str) {
                Some("CustomResource") if from(KUBE_CRATES) => d.kube_custom_resource = true,
                Some("CustomResource") => d.custom_resource = true,
                Some("Schema") => d.schema = true,
                Some("JsonSchema" | "KubeSchema") => d.json_schema = true,
                _ => {}
            }
            Ok(())
        });
    }
    d
}

/// Whether an `#[name(...)]` among `attrs` lists a key (or a derive) whose path ends in `key`.
pub fn lists_key(attrs: &[syn::Attribute], name: &str, key: &str) -> bool {
    attrs.iter().filter(|a| a.path().is_ident(name)).any(|a| {
        let mut found = false;
        let _ = a.parse_nested_meta(|meta| {
            found |= meta.path.segments.last().is_some_and(|s| s.ident == key);
            skip_value(&meta)
        });
        found
    })
}

/// Checks that depend on which derive an item carries; the derives and the scan share them.
pub fn check_derives(
    input: &syn::DeriveInput,
    def: Option<&TypeDef>,
    derives: Derives,
    errors: &mut Errors,
) {
    let Some(d) = def else { return };
    if derives.custom_resource {
        if d.resource.is_none() {
            errors.push(
                input.ident.span(),
                "#[derive(CustomResource)] needs #[k8s(group = \"...\", version = \"...\", kind = \"...\")]",
            );
        }
        if !matches!(d.body, Body::Struct(_)) {
            errors.push(
                input.ident.span(),
                "#[derive(CustomResource)] goes on the spec struct, a struct with named fields",
            );
        }
        if let Some(names) = crate::resource::names(d)
            && let Err(message) = crate::client::namespaced(&d.markers, names.namespaced)
        {
            errors.push(input.ident.span(), message);
        }
    } else if derives.schema && d.resource.is_some() {
        errors.push(
            input.ident.span(),
            "#[k8s(group, version, kind)] belongs with #[derive(CustomResource)]: derive it instead of Schema",
        );
    }
}

/// Doc text and markers of an item's attributes (outer or inner doc comments).
pub fn docs_and_markers(
    attrs: &[syn::Attribute],
    target: Target,
    errors: &mut Errors,
) -> (Vec<String>, Vec<Marker>) {
    let mut doc = Vec::new();
    let mut found = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        let syn::Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) = &nv.value
        else {
            continue;
        };
        for line in s.value().split('\n') {
            let line = line.strip_prefix(' ').unwrap_or(line);
            if line.trim_start().starts_with('+') {
                match markers::parse_line(line) {
                    Ok(Some(marker)) => {
                        check_target(&marker, target, attr.span(), errors);
                        found.push(Marker {
                            loc: loc(attr.span()),
                            ..marker
                        });
                    }
                    Ok(None) => {}
                    Err(e) => errors.push(attr.span(), e.message),
                }
            } else {
                doc.push(line.trim_end().to_string());
            }
        }
    }
    (doc, found)
}

fn check_target(marker: &Marker, target: Target, span: Span, errors: &mut Errors) {
    let targets = marker.def().targets;
    if !targets.contains(&target) {
        let name = marker.name();
        let place = match target {
            Target::Package => "a module",
            Target::Type => "a type",
            Target::Field => "a field",
        };
        let want: Vec<&str> = targets
            .iter()
            .map(|t| match t {
                Target::Package => "a module (`//!`)",
                Target::Type => "a type",
                Target::Field => "a field",
            })
            .collect();
        errors.push(
            span,
            format!(
                "marker `+{name}` cannot stand on {place}: put it on {}",
                want.join(" or ")
            ),
        );
    }
}

/// Markers given in the attribute form `#[k8s(...)]`; resource keys go to `resource`.
fn k8s_attrs(
    attrs: &[syn::Attribute],
    target: Target,
    resource: &mut Option<ResourceAttrs>,
    errors: &mut Errors,
) -> Vec<Marker> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("k8s")) {
        let result = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            let span = meta.path.span();
            let repeatable = markers::attribute_name(&key).is_some_and(|(d, _)| d.repeatable);
            if !repeatable && !seen.insert(key.clone()) {
                return Err(meta.error(format!("#[k8s({key})] is given twice: give it once")));
            }
            if target == Target::Type
                && matches!(
                    key.as_str(),
                    "group" | "version" | "kind" | "status" | "doc"
                )
            {
                let lit: syn::LitStr = meta.value()?.parse()?;
                let r = resource.get_or_insert_with(ResourceAttrs::default);
                match key.as_str() {
                    "group" => r.group = lit.value(),
                    "version" => r.version = lit.value(),
                    "kind" => r.kind = lit.value(),
                    "status" => r.status = Some(lit.value()),
                    _ => root_doc(r, &lit, errors),
                }
                return Ok(());
            }
            if target == Target::Type && key == "no_spec" {
                resource.get_or_insert_with(ResourceAttrs::default).no_spec = true;
                return Ok(());
            }
            if target == Target::Type && key == "optional_spec" {
                resource
                    .get_or_insert_with(ResourceAttrs::default)
                    .optional_spec = true;
                return Ok(());
            }
            if target == Target::Type && key == "required_metadata" {
                resource
                    .get_or_insert_with(ResourceAttrs::default)
                    .required_metadata = true;
                return Ok(());
            }
            let Some((def, items)) = markers::attribute_name(&key) else {
                let hint = attribute_suggestion(&key);
                return Err(meta.error(format!("unknown key `{key}` in #[k8s(...)]{hint}")));
            };
            let value = if meta.input.peek(syn::Token![=]) {
                let expr: syn::Expr = meta.value()?.parse()?;
                expr_value(&expr)?
            } else if meta.input.peek(syn::token::Paren) {
                let mut map = serde_json::Map::new();
                meta.parse_nested_meta(|inner| {
                    let k = inner
                        .path
                        .get_ident()
                        .map(|i| i.to_string())
                        .unwrap_or_default();
                    let k = k.trim_end_matches('_').to_string();
                    let expr: syn::Expr = inner.value()?.parse()?;
                    map.insert(markers::attribute_arg_name(def, &k), expr_value(&expr)?);
                    Ok(())
                })?;
                Value::Object(map)
            } else {
                Value::Bool(true)
            };
            let mut marker = Marker {
                kind: def.kind,
                items,
                value: Value::Null,
                loc: loc(span),
            };
            match markers::check_value(&marker.name(), def.arg, value) {
                Ok(value) => {
                    marker.value = value;
                    check_target(&marker, target, span, errors);
                    out.push(marker);
                }
                Err(e) => errors.push(span, format!("#[k8s({key})]: {}", e.message)),
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push(e.span(), e.to_string());
        }
    }
    out
}

/// `#[k8s(doc = "...")]`: the root object's doc comment, as Go's doc comment on the kind's
/// type, so its marker lines are the root object's schema markers (a CEL rule on the whole
/// object, which may read `self.metadata.name`); the other lines are its description.
fn root_doc(r: &mut ResourceAttrs, lit: &syn::LitStr, errors: &mut Errors) {
    r.doc.clear();
    for line in lit.value().lines() {
        if !line.trim_start().starts_with('+') {
            r.doc.push(line.to_string());
            continue;
        }
        match markers::parse_line(line) {
            Ok(Some(marker)) if matches!(marker.def().effect, Effect::Schema(_)) => {
                check_target(&marker, Target::Type, lit.span(), errors);
                r.markers.push(Marker {
                    loc: loc(lit.span()),
                    ..marker
                });
            }
            Ok(Some(marker)) => errors.push(
                lit.span(),
                format!(
                    "marker `+{}` in #[k8s(doc)] has no effect on the root object's schema: put it on the spec struct's doc comment",
                    marker.name()
                ),
            ),
            Ok(None) => {}
            Err(e) => errors.push(lit.span(), e.message),
        }
    }
}

/// Keys of `#[k8s(...)]` that describe the resource itself rather than a marker.
const RESOURCE_KEYS: &[&str] = &[
    "group",
    "version",
    "kind",
    "status",
    "doc",
    "no_spec",
    "optional_spec",
    "required_metadata",
];

fn attribute_suggestion(key: &str) -> String {
    let keys = RESOURCE_KEYS
        .iter()
        .map(|k| k.to_string())
        .chain(markers::registry::all_keys());
    markers::closest(key, keys, 0.8)
        .map(|k| format!(": did you mean `{k}`?"))
        .unwrap_or_else(|| ": see the marker reference, https://github.com/operator-gen/operator-gen/blob/main/docs/src/reference/markers.md".to_string())
}

/// A literal expression of the attribute form as a JSON value.
fn expr_value(expr: &syn::Expr) -> syn::Result<Value> {
    match expr {
        syn::Expr::Lit(l) => match &l.lit {
            syn::Lit::Str(s) => Ok(Value::String(s.value())),
            syn::Lit::Bool(b) => Ok(Value::Bool(b.value)),
            syn::Lit::Int(i) => Ok(Value::from(i.base10_parse::<i64>()?)),
            syn::Lit::Float(f) => Ok(markers::number(f.base10_parse::<f64>()?)),
            other => Err(syn::Error::new(
                other.span(),
                "expected a string, number or bool literal",
            )),
        },
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match expr_value(&u.expr)? {
            Value::Number(n) => Ok(markers::number(-n.as_f64().unwrap_or_default())),
            _ => Err(syn::Error::new(u.span(), "only numbers can be negated")),
        },
        syn::Expr::Array(a) => a
            .elems
            .iter()
            .map(expr_value)
            .collect::<syn::Result<Vec<_>>>()
            .map(Value::Array),
        syn::Expr::Group(g) => expr_value(&g.expr),
        other => Err(syn::Error::new(
            other.span(),
            "expected a literal or a list of literals `[...]`",
        )),
    }
}

fn lit_str(meta: &syn::meta::ParseNestedMeta) -> syn::Result<String> {
    let lit: syn::LitStr = meta.value()?.parse()?;
    Ok(lit.value())
}

/// Visits every key of every `#[serde(...)]` attribute; errors are recorded with their span.
fn each_serde_key(
    attrs: &[syn::Attribute],
    errors: &mut Errors,
    mut visit: impl FnMut(&str, &syn::meta::ParseNestedMeta) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let r = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            visit(&key, &meta)
        });
        if let Err(e) = r {
            errors.push(e.span(), e.to_string());
        }
    }
}

/// The serialize-side value of `rename = "x"` or `rename(serialize = "x", ...)` (and `rename_all`).
fn serialize_name(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Option<String>> {
    if meta.input.peek(syn::Token![=]) {
        return lit_str(meta).map(Some);
    }
    let mut name = None;
    meta.parse_nested_meta(|inner| {
        let v = lit_str(&inner)?;
        if inner.path.is_ident("serialize") {
            name = Some(v);
        }
        Ok(())
    })?;
    Ok(name)
}

fn container_serde(attrs: &[syn::Attribute], errors: &mut Errors) -> ContainerSerde {
    let mut s = ContainerSerde::default();
    each_serde_key(attrs, errors, |key, meta| {
        match key {
            "rename_all" => s.rename_all = serialize_name(meta)?.or(s.rename_all.take()),
            "tag" => s.tag = Some(lit_str(meta)?),
            "content" => s.content = Some(lit_str(meta)?),
            "untagged" => s.untagged = true,
            "transparent" => s.transparent = true,
            "default" => {
                s.default = true;
                skip_value(meta)?;
            }
            _ => skip_value(meta)?,
        }
        Ok(())
    });
    s
}

fn field_serde(attrs: &[syn::Attribute], errors: &mut Errors) -> FieldSerde {
    let mut s = FieldSerde::default();
    each_serde_key(attrs, errors, |key, meta| {
        match key {
            "rename" => s.rename = serialize_name(meta)?.or(s.rename.take()),
            "default" => {
                s.default = true;
                skip_value(meta)?;
            }
            "skip" => s.skip = true,
            "skip_serializing_if" => {
                s.skip_serializing_if = true;
                skip_value(meta)?;
            }
            "flatten" => s.flatten = true,
            _ => skip_value(meta)?,
        }
        Ok(())
    });
    s
}

/// Consumes whatever value a key we do not interpret carries (`= expr`, or `(...)` whatever
/// it holds).
pub fn skip_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: proc_macro2::TokenStream = content.parse()?;
    }
    Ok(())
}

/// Lowers a struct or enum. `None` for unions and for items lowering refused (errors recorded).
pub fn type_def(input: &syn::DeriveInput, errors: &mut Errors) -> Option<TypeDef> {
    let before = errors.len();
    if input.generics.type_params().next().is_some()
        || input.generics.const_params().next().is_some()
    {
        errors.push(
            input.generics.span(),
            format!("`{}` has type parameters: a schema needs concrete types, so write a struct without generics", input.ident),
        );
    }
    let (doc, mut found) = docs_and_markers(&input.attrs, Target::Type, errors);
    let mut resource = None;
    found.extend(k8s_attrs(&input.attrs, Target::Type, &mut resource, errors));
    let serde = container_serde(&input.attrs, errors);
    let body = match &input.data {
        syn::Data::Struct(s) => {
            match &s.fields {
                syn::Fields::Named(named) => Body::Struct(
                    named
                        .named
                        .iter()
                        .filter_map(|f| field(f, errors))
                        .collect(),
                ),
                syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => {
                    let f = &u.unnamed[0];
                    let (_, fm) = docs_and_markers(&f.attrs, Target::Field, errors);
                    found.extend(fm);
                    Body::Newtype(type_expr(&f.ty, errors))
                }
                syn::Fields::Unnamed(u) => {
                    errors.push(u.span(), "tuple structs with more than one field have no object schema: name the fields");
                    Body::Unit
                }
                syn::Fields::Unit => Body::Unit,
            }
        }
        syn::Data::Enum(e) => Body::Enum(e.variants.iter().map(|v| variant(v, errors)).collect()),
        syn::Data::Union(u) => {
            errors.push(u.union_token.span(), "unions have no schema: use an enum");
            return None;
        }
    };
    if let Some(r) = &resource {
        for (key, value) in [
            ("group", &r.group),
            ("version", &r.version),
            ("kind", &r.kind),
        ] {
            if value.is_empty() && key != "group" {
                errors.push(
                    input.ident.span(),
                    format!("#[k8s(...)] on `{}` needs `{key} = \"...\"`", input.ident),
                );
            }
        }
    }
    let def = TypeDef {
        name: input.ident.to_string(),
        doc,
        markers: found,
        serde,
        body,
        resource,
        loc: loc(input.ident.span()),
        kube: None,
    };
    if let Body::Enum(variants) = &def.body
        && let Some(message) = enum_shape_error(&def, variants)
    {
        errors.push(input.ident.span(), message);
    }
    (errors.len() == before).then_some(def)
}

fn field(f: &syn::Field, errors: &mut Errors) -> Option<Field> {
    let ident = f.ident.as_ref()?;
    let (doc, mut found) = docs_and_markers(&f.attrs, Target::Field, errors);
    let mut no_resource = None;
    found.extend(k8s_attrs(&f.attrs, Target::Field, &mut no_resource, errors));
    Some(Field {
        ident: ident.to_string().trim_start_matches("r#").to_string(),
        doc,
        markers: found,
        serde: field_serde(&f.attrs, errors),
        ty: type_expr(&f.ty, errors),
        loc: loc(ident.span()),
    })
}

fn variant(v: &syn::Variant, errors: &mut Errors) -> Variant {
    let (doc, markers) = docs_and_markers(&v.attrs, Target::Field, errors);
    let fields = match &v.fields {
        syn::Fields::Unit => VariantFields::Unit,
        syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => {
            VariantFields::Newtype(type_expr(&u.unnamed[0].ty, errors))
        }
        syn::Fields::Unnamed(u) => VariantFields::Tuple(u.unnamed.len()),
        syn::Fields::Named(n) => {
            VariantFields::Struct(n.named.iter().filter_map(|f| field(f, errors)).collect())
        }
    };
    Variant {
        ident: v.ident.to_string(),
        doc,
        markers,
        serde: field_serde(&v.attrs, errors),
        fields,
    }
}

/// The error for `impl Trait` as a field type; rustc reports it too, so the derive leaves it out.
pub const IMPL_TRAIT_FIELD: &str =
    "`impl Trait` is not allowed in a field type: name a concrete type that has a schema";

pub fn type_expr(ty: &syn::Type, errors: &mut Errors) -> TypeExpr {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => path_type(&p.path, errors),
        syn::Type::Reference(r) => type_expr(&r.elem, errors),
        syn::Type::Paren(p) => type_expr(&p.elem, errors),
        syn::Type::Group(g) => type_expr(&g.elem, errors),
        // a fixed-size array is a list on the wire, as Go's `[N]T` is
        syn::Type::Array(a) => TypeExpr::Vec(Box::new(type_expr(&a.elem, errors))),
        syn::Type::ImplTrait(i) => {
            errors.push(i.span(), IMPL_TRAIT_FIELD);
            TypeExpr::Value
        }
        other => {
            errors.push(other.span(), "this type has no schema: use a named struct, a primitive, Vec, Option or a string-keyed map");
            TypeExpr::Value
        }
    }
}

fn generic_args(seg: &syn::PathSegment) -> Vec<&syn::Type> {
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn path_type(path: &syn::Path, errors: &mut Errors) -> TypeExpr {
    let Some(seg) = path.segments.last() else {
        return TypeExpr::Value;
    };
    let name = seg.ident.to_string();
    let args = generic_args(seg);
    let one = |errors: &mut Errors| match args.first() {
        Some(t) => type_expr(t, errors),
        None => {
            errors.push(seg.span(), format!("`{name}` needs a type argument"));
            TypeExpr::Value
        }
    };
    let prim = |p| TypeExpr::Prim(p);
    match name.as_str() {
        "String" | "str" | "char" => prim(Prim::String),
        "bool" => prim(Prim::Bool),
        "i8" => prim(Prim::I8),
        "i16" => prim(Prim::I16),
        "i32" => prim(Prim::I32),
        "i64" => prim(Prim::I64),
        "isize" => prim(Prim::Isize),
        "u8" => prim(Prim::U8),
        "u16" => prim(Prim::U16),
        "u32" => prim(Prim::U32),
        "u64" => prim(Prim::U64),
        "usize" => prim(Prim::Usize),
        "f32" => prim(Prim::F32),
        "f64" => prim(Prim::F64),
        "ByteString" => prim(Prim::Bytes),
        "Option" => TypeExpr::Option(Box::new(one(errors))),
        "Box" | "Arc" | "Rc" | "Cow" => one(errors),
        "Vec" | "VecDeque" | "BTreeSet" | "HashSet" | "IndexSet" => match one(errors) {
            TypeExpr::Prim(Prim::U8) if name == "Vec" => prim(Prim::Bytes),
            inner => TypeExpr::Vec(Box::new(inner)),
        },
        "BTreeMap" | "HashMap" | "IndexMap" => {
            if args.len() != 2 {
                errors.push(seg.span(), format!("`{name}` needs a key and a value type"));
                return TypeExpr::Value;
            }
            match type_expr(args[0], errors) {
                // a named key type must serialise as a string (a newtype over String, or a type
                // with a string Serialize impl), as a Go key type must implement TextMarshaler
                TypeExpr::Prim(Prim::String) | TypeExpr::Named(_) => {}
                _ => errors.push(
                    args[0].span(),
                    "map keys must be strings: JSON objects have string keys, so use String",
                ),
            }
            TypeExpr::Map(Box::new(type_expr(args[1], errors)))
        }
        // every other type is named by its path as written; the scan resolves it through the
        // module tree and `use`, the derive through the compiler (`<path as Schema>`), so a known
        // type is recognised by its full path, never by its last segment
        _ => {
            let mut written: Vec<String> =
                path.segments.iter().map(|s| s.ident.to_string()).collect();
            if !args.is_empty() {
                let args = &seg.arguments;
                let last = written.pop().unwrap_or_default();
                written.push(format!(
                    "{last}{}",
                    quote::quote!(#args).to_string().replace(' ', "")
                ));
            }
            TypeExpr::Named(written.join("::"))
        }
    }
}
