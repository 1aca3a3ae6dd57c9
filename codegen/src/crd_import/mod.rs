//! A CustomResourceDefinition as Rust types: for each of its versions the spec struct (with
//! the kind's markers: resource names, scope, subresources, printer columns, selectable
//! fields, storage, served and deprecation), the status type and a type for every object,
//! constrained list item and map value, each schema keyword a marker line, so that the
//! manifests the types give are the CRD again. What no marker can write is an error naming
//! its JSON path; what can be written only in a close form is written so, with a [`Note`].
//! No IO: the caller reads the CRD and writes the files ([`crate::rustgen`] renders them).

mod docs;
mod error;
pub mod lit;
mod schema;

pub use error::{Error, Note};

use crate::rustgen::{Body, Docs, Item, Struct, str_lit};
pub use schema::INT_OR_STRING;
use serde_json::{Map, Value};

/// A CRD as Rust types.
#[derive(Debug)]
pub struct Imported {
    pub group: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    /// The versions in the CRD's order.
    pub versions: Vec<Version>,
    pub notes: Vec<Note>,
    /// Some version has a `number`: its manifests need `--allow-dangerous-types`.
    pub floats: bool,
}

/// One version's types.
#[derive(Debug)]
pub struct Version {
    pub name: String,
    pub storage: bool,
    pub served: bool,
    /// The `use` paths its items need.
    pub uses: Vec<String>,
    /// The spec struct first, then the status type, then the types they use.
    pub items: Vec<Item>,
}

/// The types of `crd`, a CustomResourceDefinition of `apiextensions.k8s.io/v1` as JSON.
pub fn import(crd: &Value) -> Result<Imported, Error> {
    let api_version = crd.get("apiVersion").and_then(Value::as_str);
    let kind = crd.get("kind").and_then(Value::as_str);
    if api_version != Some("apiextensions.k8s.io/v1") || kind != Some("CustomResourceDefinition") {
        return Err(Error::new(
            ".",
            "not a CustomResourceDefinition of apiextensions.k8s.io/v1 (apiVersion and kind say otherwise)",
        ));
    }
    let spec = obj(crd, "spec", ".spec")?;
    let group = text(spec, "group", ".spec.group")?;
    let names = obj_in(spec, "names", ".spec.names")?;
    let kind = text(names, "kind", ".spec.names.kind")?;
    let plural = text(names, "plural", ".spec.names.plural")?;
    let namespaced = match spec.get("scope").and_then(Value::as_str) {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        _ => {
            return Err(Error::new(
                ".spec.scope",
                "scope must be Namespaced or Cluster",
            ));
        }
    };
    let mut notes = Vec::new();
    crd_notes(crd, spec, names, &kind, &group, &plural, &mut notes);
    let kind_markers = kind_markers(crd, names, &kind, &plural, namespaced);
    let Some(Value::Array(versions)) = spec.get("versions") else {
        return Err(Error::new(".spec.versions", "the CRD lists no versions"));
    };
    let several = versions.len() > 1;
    let mut out = Vec::new();
    let mut floats = false;
    for v in versions {
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let path = format!(".spec.versions[{name}]");
        let input = VersionInput {
            group: &group,
            kind: &kind,
            several,
            kind_markers: &kind_markers,
        };
        let (version, version_notes, f) = version(v, &path, &input)?;
        floats |= f;
        notes.extend(version_notes);
        out.push(version);
    }
    Ok(Imported {
        group,
        kind,
        plural,
        namespaced,
        versions: out,
        notes,
        floats,
    })
}

struct VersionInput<'a> {
    group: &'a str,
    kind: &'a str,
    several: bool,
    kind_markers: &'a [String],
}

fn obj<'a>(v: &'a Value, key: &str, path: &str) -> Result<&'a Map<String, Value>, Error> {
    v.get(key)
        .and_then(Value::as_object)
        .ok_or_else(|| Error::new(path, "missing, or not an object"))
}

fn obj_in<'a>(
    v: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a Map<String, Value>, Error> {
    v.get(key)
        .and_then(Value::as_object)
        .ok_or_else(|| Error::new(path, "missing, or not an object"))
}

fn text(v: &Map<String, Value>, key: &str, path: &str) -> Result<String, Error> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| Error::new(path, "missing, or not a string"))
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// What of the CRD object no marker writes, noted.
fn crd_notes(
    crd: &Value,
    spec: &Map<String, Value>,
    names: &Map<String, Value>,
    kind: &str,
    group: &str,
    plural: &str,
    notes: &mut Vec<Note>,
) {
    let name = crd.pointer("/metadata/name").and_then(Value::as_str);
    if name != Some(&format!("{plural}.{group}")) {
        notes.push(Note::new(
            ".metadata.name",
            format!("written as {plural}.{group}, the name the apiserver requires"),
        ));
    }
    if let Some(list) = names.get("listKind").and_then(Value::as_str)
        && list != format!("{kind}List")
    {
        notes.push(Note::new(
            ".spec.names.listKind",
            format!("written as {kind}List: the derive names the list type so"),
        ));
    }
    if let Some(c) = spec.get("conversion")
        && c.get("strategy").and_then(Value::as_str) != Some("None")
    {
        notes.push(Note::new(".spec.conversion", "not written: `create webhook --conversion` adds a conversion webhook, and kustomize patches it in"));
    }
    if spec.get("preserveUnknownFields").and_then(Value::as_bool) == Some(true) {
        notes.push(Note::new(".spec.preserveUnknownFields", "not written: apiextensions.k8s.io/v1 refuses true; unknown fields are kept per schema with `+kubebuilder:pruning:PreserveUnknownFields`"));
    }
}

/// The annotations of a CRD that name the tool that wrote it, which `manifests` writes anew.
pub const GENERATOR_ANNOTATIONS: &[&str] = &[
    "controller-gen.kubebuilder.io/version",
    crate::VERSION_ANNOTATION,
];

/// The markers every version of the kind carries: names, scope, the CRD's labels and
/// annotations.
fn kind_markers(
    crd: &Value,
    names: &Map<String, Value>,
    kind: &str,
    plural: &str,
    namespaced: bool,
) -> Vec<String> {
    let mut args = vec![format!("path={plural}")];
    if !namespaced {
        args.push("scope=Cluster".to_string());
    }
    let short = strings(names.get("shortNames"));
    if !short.is_empty() {
        args.push(format!("shortName={}", short.join(";")));
    }
    let categories = strings(names.get("categories"));
    if !categories.is_empty() {
        args.push(format!("categories={}", categories.join(";")));
    }
    if let Some(s) = names.get("singular").and_then(Value::as_str)
        && s != kind.to_ascii_lowercase()
    {
        args.push(format!("singular={s}"));
    }
    let mut out = vec![format!("+kubebuilder:resource:{}", args.join(","))];
    let pairs = |key: &str| -> Vec<String> {
        crd.pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| !GENERATOR_ANNOTATIONS.contains(&k.as_str()))
                    .map(|(k, v)| {
                        lit::go_quoted(&format!("{k}={}", v.as_str().unwrap_or_default()))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    for key in ["annotations", "labels"] {
        let items = pairs(key);
        if !items.is_empty() {
            out.push(format!("+kubebuilder:metadata:{key}={}", items.join(";")));
        }
    }
    out
}

/// One version's types, its notes, and whether it has a float.
fn version(
    v: &Value,
    path: &str,
    input: &VersionInput,
) -> Result<(Version, Vec<Note>, bool), Error> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let storage = v.get("storage").and_then(Value::as_bool).unwrap_or(false);
    let served = v.get("served").and_then(Value::as_bool).unwrap_or(true);
    let root_path = format!("{path}.schema.openAPIV3Schema");
    let root = v
        .pointer("/schema/openAPIV3Schema")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            Error::new(
                &root_path,
                "the version has no schema: operator-gen writes one for every version",
            )
        })?;
    let kind = input.kind;
    let reserved: Vec<String> = ["", "Spec", "Status", "List"]
        .iter()
        .map(|s| format!("{kind}{s}"))
        .collect();
    let mut types = schema::Types::new(&reserved);
    let mut spec_markers: Vec<String> = input.kind_markers.to_vec();
    spec_markers.extend(version_markers(v, storage && input.several, served));
    let root_parts = root_parts(root, &root_path, &mut types)?;
    let status_name = format!("{kind}Status");
    let status = match root_parts.status {
        Some(node) => Some(object_struct(
            &mut types,
            node,
            &format!("{root_path}.properties.status"),
            &status_name,
            Vec::new(),
            DeriveOf::Schema,
        )?),
        None => None,
    };
    let mut attrs = vec![
        format!("group = {}", str_lit(input.group)),
        format!("version = {}", str_lit(&name)),
        format!("kind = {}", str_lit(kind)),
    ];
    if status.is_some() {
        attrs.push(format!("status = {}", str_lit(&status_name)));
    }
    if !root_parts.doc.is_empty() {
        attrs.push(format!("doc = {}", str_lit(&root_parts.doc.join("\n"))));
    }
    attrs.extend(root_parts.flags.iter().map(|f| f.to_string()));
    let spec_path = match root_parts.spec {
        Some(_) => format!("{root_path}.properties.spec"),
        None => root_path.clone(),
    };
    let spec_node = root_parts.spec.cloned().unwrap_or(root_parts.no_spec_node);
    let mut spec = object_struct(
        &mut types,
        &spec_node,
        &spec_path,
        &format!("{kind}Spec"),
        spec_markers,
        DeriveOf::Kind,
    )?;
    spec.attrs = vec![format!("k8s(\n    {}\n)", attrs.join(",\n    "))];
    let mut items = vec![Item::Struct(spec)];
    items.extend(status.map(Item::Struct));
    items.extend(types.items);
    let mut uses = vec![
        "operator_gen_runtime::prelude::*".to_string(),
        "serde::{Deserialize, Serialize}".to_string(),
    ];
    if types.maps {
        uses.insert(1, "std::collections::BTreeMap".to_string());
        uses.sort();
    }
    Ok((
        Version {
            name,
            storage,
            served,
            uses,
            items,
        },
        types.notes,
        types.floats,
    ))
}

/// The markers of a version: storage (when the kind has several), served, deprecation,
/// subresources, printer columns, selectable fields.
fn version_markers(v: &Value, storage: bool, served: bool) -> Vec<String> {
    let mut out = Vec::new();
    if storage {
        out.push("+kubebuilder:storageversion".to_string());
    }
    if !served {
        out.push("+kubebuilder:unservedversion".to_string());
    }
    if v.get("deprecated").and_then(Value::as_bool) == Some(true) {
        match v.get("deprecationWarning").and_then(Value::as_str) {
            Some(w) => out.push(format!(
                "+kubebuilder:deprecatedversion:warning={}",
                lit::go_quoted(w)
            )),
            None => out.push("+kubebuilder:deprecatedversion".to_string()),
        }
    }
    if v.pointer("/subresources/status").is_some() {
        out.push("+kubebuilder:subresource:status".to_string());
    }
    if let Some(scale) = v.pointer("/subresources/scale") {
        let mut args = Vec::new();
        for (key, arg) in [
            ("specReplicasPath", "specpath"),
            ("statusReplicasPath", "statuspath"),
            ("labelSelectorPath", "selectorpath"),
        ] {
            if let Some(p) = scale.get(key).and_then(Value::as_str) {
                args.push(format!("{arg}={}", lit::go_quoted(p)));
            }
        }
        out.push(format!("+kubebuilder:subresource:scale:{}", args.join(",")));
    }
    for c in v
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut args = Vec::new();
        for (key, arg) in [
            ("name", "name"),
            ("type", "type"),
            ("jsonPath", "JSONPath"),
            ("description", "description"),
            ("format", "format"),
        ] {
            if let Some(s) = c.get(key).and_then(Value::as_str) {
                args.push(format!("{arg}={}", lit::go_quoted(s)));
            }
        }
        if let Some(p) = c.get("priority").and_then(Value::as_i64) {
            args.push(format!("priority={p}"));
        }
        out.push(format!("+kubebuilder:printcolumn:{}", args.join(",")));
    }
    for f in v
        .get("selectableFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(p) = f.get("jsonPath").and_then(Value::as_str) {
            out.push(format!(
                "+kubebuilder:selectablefield:JSONPath={}",
                lit::go_quoted(p)
            ));
        }
    }
    out
}

/// The parts of a version's root schema.
struct RootParts<'a> {
    spec: Option<&'a Map<String, Value>>,
    status: Option<&'a Map<String, Value>>,
    /// With no `spec`: the root's own fields, as the struct's node.
    no_spec_node: Map<String, Value>,
    /// `#[k8s(doc)]`: the description, then the root's marker lines.
    doc: Vec<String>,
    /// `optional_spec`, `required_metadata`, `no_spec`.
    flags: Vec<&'static str>,
}

fn root_parts<'a>(
    root: &'a Map<String, Value>,
    path: &str,
    types: &mut schema::Types,
) -> Result<RootParts<'a>, Error> {
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(Error::new(path, "the root schema must be `type: object`"));
    }
    let props = root
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let props_ref = root.get("properties").and_then(Value::as_object);
    let get = |k: &str| props_ref.and_then(|p| p.get(k)).and_then(Value::as_object);
    root_notes(root, path, types);
    let required = strings(root.get("required"));
    let mut flags = Vec::new();
    let spec = get("spec");
    let mut no_spec_node = Map::new();
    if spec.is_some() {
        let others: Vec<&String> = props
            .keys()
            .filter(|k| !["apiVersion", "kind", "metadata", "spec", "status"].contains(&k.as_str()))
            .collect();
        if let Some(o) = others.first() {
            return Err(Error::new(
                &format!("{path}.properties.{o}"),
                "a root field beside `spec` has no place in Rust (the spec struct's fields sit under `spec`, or on the root with no `spec` at all)",
            ));
        }
        if !required.iter().any(|r| r == "spec") {
            flags.push("optional_spec");
        }
    } else {
        flags.push("no_spec");
        let mut own = Map::new();
        for (k, v) in &props {
            if !["apiVersion", "kind", "metadata", "status"].contains(&k.as_str()) {
                own.insert(k.clone(), v.clone());
            }
        }
        no_spec_node.insert("type".into(), Value::from("object"));
        no_spec_node.insert("properties".into(), Value::Object(own));
        let own_required: Vec<Value> = required
            .iter()
            .filter(|r| !["metadata", "apiVersion", "kind", "status"].contains(&r.as_str()))
            .map(|r| Value::from(r.as_str()))
            .collect();
        if !own_required.is_empty() {
            no_spec_node.insert("required".into(), Value::Array(own_required));
        }
    }
    if required.iter().any(|r| r == "metadata") {
        flags.push("required_metadata");
    }
    for r in required
        .iter()
        .filter(|r| ["apiVersion", "kind", "status"].contains(&r.as_str()))
    {
        types.notes.push(Note::new(
            &format!("{path}.required"),
            format!("`{r}` is not listed: no marker makes the root require it"),
        ));
    }
    let mut doc = types.prose(root, path);
    let mut rules = Vec::new();
    if let Some(Value::Array(list)) = root.get("x-kubernetes-validations") {
        for (i, r) in list.iter().enumerate() {
            rules.push(schema::validation_marker(
                r,
                &format!("{path}.x-kubernetes-validations[{i}]"),
            )?);
        }
    }
    if !rules.is_empty() {
        if !doc.is_empty() {
            doc.push(String::new());
        }
        doc.extend(rules);
    }
    Ok(RootParts {
        spec,
        status: get("status"),
        no_spec_node,
        doc,
        flags,
    })
}

/// The root's `apiVersion`, `kind` and `metadata` are written as controller-gen writes them;
/// anything else there, and root keywords other than the description and CEL rules, noted.
fn root_notes(root: &Map<String, Value>, path: &str, types: &mut schema::Types) {
    let props = root.get("properties").and_then(Value::as_object);
    let expected = [
        (
            "apiVersion",
            serde_json::json!({"type": "string", "description": crate::crd::API_VERSION_DOC}),
        ),
        (
            "kind",
            serde_json::json!({"type": "string", "description": crate::crd::KIND_DOC}),
        ),
        ("metadata", serde_json::json!({"type": "object"})),
    ];
    for (key, want) in expected {
        let have = props.and_then(|p| p.get(key));
        if have != Some(&want) {
            types.notes.push(Note::new(
                &format!("{path}.properties.{key}"),
                format!("written as controller-gen writes the root's `{key}`"),
            ));
        }
    }
    for k in root.keys() {
        if ![
            "type",
            "properties",
            "required",
            "description",
            "x-kubernetes-validations",
        ]
        .contains(&k.as_str())
        {
            types.notes.push(Note::new(
                &format!("{path}.{k}"),
                "not written: no marker stands on the root object for it",
            ));
        }
    }
}

/// Which derives a spec or status struct takes.
enum DeriveOf {
    Kind,
    Schema,
}

/// The struct `name` of an object node (a spec or status), with `markers` first.
fn object_struct(
    types: &mut schema::Types,
    node: &Map<String, Value>,
    path: &str,
    name: &str,
    mut markers: Vec<String>,
    derive: DeriveOf,
) -> Result<Struct, Error> {
    if node.get("type").and_then(Value::as_str) != Some("object")
        || node.contains_key("additionalProperties")
    {
        return Err(Error::new(
            path,
            "must be an object with properties (a struct) to be a kind's spec or status",
        ));
    }
    // the spec's and status's own keywords, as a field's are checked
    schema::known_keywords(node, path)?;
    if node.contains_key("anyOf") {
        return Err(Error::new(path, schema::ANY_OF));
    }
    let mut shape = Vec::new();
    let fields = types.fields(node, path, name)?;
    if node
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
    {
        shape.push("+kubebuilder:pruning:PreserveUnknownFields".to_string());
    }
    markers.extend(shape);
    markers.extend(schema::keyword_markers(node, path)?);
    let derives = match derive {
        DeriveOf::Kind => crate::rustgen::KIND_DERIVES,
        DeriveOf::Schema => crate::rustgen::TYPE_DERIVES,
    };
    Ok(Struct {
        name: name.to_string(),
        doc: Docs {
            prose: types.prose(node, path),
            markers,
        },
        derives: derives.iter().map(|d| d.to_string()).collect(),
        attrs: Vec::new(),
        serde: vec!["rename_all = \"camelCase\"".to_string()],
        body: Body::Named(fields),
    })
}

#[cfg(test)]
mod tests;
