//! Types the generator knows by their full path: every Kubernetes type of the generated table
//! `known/k8s.json` (built from a real kube-apiserver's OpenAPI documents and the Go sources of
//! the same release, as controller-gen emits them; see `hack/k8s-types/regenerate.sh`), the
//! listable Kubernetes kinds, and the time types of the Rust ecosystem.

use crate::diag::Diagnostic;
use crate::ir::{Body, TypeDef, TypeExpr};
#[cfg(feature = "manifests")]
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps as Props;
#[cfg(feature = "manifests")]
use serde_json::Value;

#[cfg(feature = "manifests")]
/// `anyOf: [integer, string]` with `x-kubernetes-int-or-string`, as IntOrString and the
/// XIntOrString marker give it.
pub(crate) fn int_or_string() -> Props {
    Props {
        any_of: Some(vec![
            Props {
                type_: Some("integer".into()),
                ..Default::default()
            },
            Props {
                type_: Some("string".into()),
                ..Default::default()
            },
        ]),
        x_kubernetes_int_or_string: Some(true),
        ..Default::default()
    }
}

/// One listable Kubernetes kind, as the apiserver serves it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct Kind {
    /// The API group (`""` for the core group).
    pub group: String,
    pub version: String,
    pub kind: String,
    /// The resource name (plural).
    pub plural: String,
    pub namespaced: bool,
    /// The type under `k8s_openapi::` (`api::apps::v1::Deployment`).
    #[serde(rename = "type")]
    pub type_path: String,
}

#[derive(serde::Deserialize)]
struct Entry {
    // read by the schema emitter only, and parsed only when it asks: a run needs a few of the
    // table's thousands of schemas
    #[cfg_attr(not(feature = "manifests"), allow(dead_code))]
    #[serde(borrow)]
    schema: &'static serde_json::value::RawValue,
    #[serde(default, rename = "k8s-openapi")]
    k8s_openapi: Vec<u32>,
}

/// The table: the release and kinds parsed, each type's entry kept as its JSON text (one line
/// of `known/k8s.json` each) and parsed when a run asks for it ([`Table::entry`]): most runs
/// need a few of the table's types, so the others are never parsed.
struct Table {
    kubernetes: String,
    kinds: Vec<Kind>,
    types: Types,
}

/// The part of the table before its types.
#[derive(serde::Deserialize)]
struct Head {
    kubernetes: String,
    kinds: Vec<Kind>,
}

/// The table's types: one `"path": {entry}` line each, sorted by path, searched where they lie
/// in the text by binary search over the sorted lines, without an index built first.
struct Types(&'static str);

impl Types {
    /// Each line's path and entry, in order; `None` for a line that is not `"path": entry`.
    fn lines(&self) -> impl Iterator<Item = Option<(&'static str, &'static str)>> {
        self.0.lines().map(split_line)
    }

    /// The paths, in order.
    fn keys(&self) -> impl Iterator<Item = &'static str> {
        self.lines().flatten().map(|(path, _)| path)
    }

    /// The entry's text of the type at `path`, by binary search over the lines.
    fn get(&self, path: &str) -> Option<&'static str> {
        let text = self.0;
        // the lines starting in lo..hi are left; lo is always a line's start
        let (mut lo, mut hi) = (0, text.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let start = text[lo..mid].rfind('\n').map_or(lo, |n| lo + n + 1);
            let end = text[start..].find('\n').map_or(text.len(), |n| start + n);
            let (at, entry) = split_line(&text[start..end])?;
            match at.cmp(path) {
                std::cmp::Ordering::Equal => return Some(entry),
                std::cmp::Ordering::Less => lo = end + 1,
                std::cmp::Ordering::Greater => hi = start,
            }
        }
        None
    }

    fn contains_key(&self, path: &str) -> bool {
        self.get(path).is_some()
    }
}

/// `"path": entry` (with or without a trailing comma) as the path and the entry's text.
fn split_line(line: &'static str) -> Option<(&'static str, &'static str)> {
    let line = line.strip_suffix(',').unwrap_or(line);
    line.strip_prefix('"')?.split_once("\": ")
}

impl Table {
    /// The table in `text`, laid out as `hack/k8s-types/regenerate.sh` writes it: the release
    /// and the kinds, then `"types": {`, one `"path": {entry}` per line sorted by path, and
    /// `}`.
    fn parse(text: &'static str) -> Result<Table, Diagnostic> {
        const TYPES: &str = "\n\"types\": {\n";
        let at = text
            .find(TYPES)
            .ok_or_else(|| Diagnostic::new("no `\"types\": {` line"))?;
        let head = format!("{}\n}}", text[..at].trim_end().trim_end_matches(','));
        let head: Head = serde_json::from_str(&head).map_err(|e| Diagnostic::new(e.to_string()))?;
        // the types' `}` and the table's, found from the end so the text is not scanned whole
        let types = text[at + TYPES.len()..]
            .trim_end()
            .strip_suffix('}')
            .and_then(|t| t.trim_end().strip_suffix('}'))
            .ok_or_else(|| Diagnostic::new("the types and the table do not end with `}`"))?;
        Ok(Table {
            kubernetes: head.kubernetes,
            kinds: head.kinds,
            types: Types(types.trim_end()),
        })
    }

    /// The entry of the type at `path` under `k8s_openapi::`, when the table has it.
    fn entry(&self, path: &str) -> Option<Result<Entry, Diagnostic>> {
        self.types.get(path).map(|text| {
            serde_json::from_str(text).map_err(|e| {
                Diagnostic::new(format!(
                    "the built-in entry of `k8s_openapi::{path}` does not parse: {e}"
                ))
            })
        })
    }
}

fn table() -> Result<&'static Table, Diagnostic> {
    static TABLE: std::sync::OnceLock<Result<Table, Diagnostic>> = std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            Table::parse(include_str!("known/k8s.json")).map_err(|e| {
                Diagnostic::new(format!(
                    "the built-in table of Kubernetes types does not parse: {}",
                    e.message
                ))
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The Kubernetes release the table was built from (`1.37.2`).
pub fn kubernetes_version() -> &'static str {
    table().map(|t| t.kubernetes.as_str()).unwrap_or("unknown")
}

/// Every listable Kubernetes kind of the table, sorted by group, version and kind.
pub fn kinds() -> &'static [Kind] {
    table().map(|t| t.kinds.as_slice()).unwrap_or_default()
}

/// Every Kubernetes type of the table that k8s-openapi has, as its path under `k8s_openapi::`,
/// with the Kubernetes minor versions whose k8s-openapi module has it.
pub fn k8s_openapi_types() -> Vec<(&'static str, &'static [u32])> {
    static ALL: std::sync::OnceLock<Vec<(&'static str, Vec<u32>)>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let Ok(t) = table() else {
            return Vec::new();
        };
        t.types
            .keys()
            .filter_map(|p| Some((p, t.entry(p)?.ok()?.k8s_openapi)))
            .filter(|(_, versions)| !versions.is_empty())
            .collect()
    })
    .iter()
    .map(|(p, versions)| (*p, versions.as_slice()))
    .collect()
}

/// Types of other crates with a schema of their own, by full path.
const ECOSYSTEM: &[&str] = &[
    "serde_json::Value",
    "jiff::Timestamp",
    "jiff::Zoned",
    "jiff::SignedDuration",
    "jiff::Span",
    "chrono::DateTime",
];

/// Paths that re-export a crate or a type under another name: prefix → what it stands for.
const REEXPORTS: &[(&str, &str)] = &[
    ("operator_gen_runtime::k8s_openapi::", "k8s_openapi::"),
    ("operator_gen_runtime::serde_json::", "serde_json::"),
    ("k8s_openapi::jiff::", "jiff::"),
    ("k8s_openapi::serde_json::", "serde_json::"),
    ("kube::core::k8s_openapi::", "k8s_openapi::"),
    (
        "operator_gen_runtime::prelude::Condition",
        "k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition",
    ),
    (
        "operator_gen_runtime::prelude::ObjectMeta",
        "k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta",
    ),
    (
        "operator_gen_runtime::prelude::Time",
        "k8s_openapi::apimachinery::pkg::apis::meta::v1::Time",
    ),
    (
        "kube::api::ObjectMeta",
        "k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta",
    ),
    (
        "kube::core::ObjectMeta",
        "k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta",
    ),
];

/// What a path to a type of another crate (after `use` resolution, generic arguments dropped)
/// means to the generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum External {
    /// A type with a built-in schema, by its canonical path.
    Known(String),
    /// A path under `k8s_openapi::` the table does not have.
    MissingKubernetes(String),
    /// Anything else.
    Unknown(String),
}

/// Classifies the full path of a type defined outside the crate being scanned.
pub fn external(path: &str) -> External {
    let mut path = path.trim_start_matches("::").to_string();
    for _ in 0..4 {
        let Some((from, to)) = REEXPORTS.iter().find(|(from, _)| {
            path.starts_with(from) && (from.ends_with("::") || path.len() == from.len())
        }) else {
            break;
        };
        path = format!("{to}{}", &path[from.len()..]);
    }
    if ECOSYSTEM.contains(&path.as_str()) {
        return External::Known(path);
    }
    if let Some(rest) = path.strip_prefix("k8s_openapi::") {
        return match table() {
            Ok(t) if t.types.contains_key(rest) => External::Known(path),
            _ => External::MissingKubernetes(path),
        };
    }
    External::Unknown(path)
}

/// The definition standing for a known type: a newtype over it, so the emitters treat it as
/// any named type (a field's doc replaces the type's description).
pub fn definition(path: &str) -> TypeDef {
    TypeDef {
        name: path.rsplit("::").next().unwrap_or(path).to_string(),
        doc: Vec::new(),
        markers: Vec::new(),
        serde: Default::default(),
        body: Body::Newtype(TypeExpr::Known(path.to_string())),
        resource: None,
        loc: None,
        kube: None,
    }
}

/// The error for a path the generator has no schema for.
pub fn missing(path: &str) -> String {
    match external(path) {
        External::MissingKubernetes(p) => format!(
            "`{p}` is not in operator-gen's table of Kubernetes {} types: use a type that release has, or serde_json::Value",
            kubernetes_version()
        ),
        External::Known(p) | External::Unknown(p) => format!(
            "`{p}` has no schema: operator-gen knows Kubernetes types, jiff timestamps and serde_json::Value from other crates; define the type in this crate with #[derive(Schema)]"
        ),
    }
}

#[cfg(feature = "manifests")]
/// The schema of a known type, by the canonical path [`external`] returns.
pub fn schema(path: &str) -> Result<Props, Diagnostic> {
    let string = |format: Option<&str>| Props {
        type_: Some("string".into()),
        format: format.map(str::to_string),
        ..Default::default()
    };
    match path {
        "serde_json::Value" => {
            return Ok(Props {
                x_kubernetes_preserve_unknown_fields: Some(true),
                ..Default::default()
            });
        }
        "jiff::Timestamp" | "jiff::Zoned" | "chrono::DateTime" => {
            return Ok(string(Some("date-time")));
        }
        // jiff writes durations as ISO 8601 strings ("PT1H30M"), as metav1.Duration is a string
        "jiff::SignedDuration" | "jiff::Span" => return Ok(string(None)),
        _ => {}
    }
    let key = path
        .strip_prefix("k8s_openapi::")
        .ok_or_else(|| Diagnostic::new(missing(path)))?;
    // every kind's status holds the same few Kubernetes types (Condition, ObjectMeta): expand
    // each once per process
    type Expanded = std::collections::HashMap<String, Result<Props, Diagnostic>>;
    static EXPANDED: std::sync::LazyLock<std::sync::Mutex<Expanded>> =
        std::sync::LazyLock::new(Default::default);
    if let Some(done) = EXPANDED.lock().ok().and_then(|m| m.get(key).cloned()) {
        return done;
    }
    let mut stack = Vec::new();
    let result = expand_type(key, &mut stack).and_then(|expanded| {
        serde_json::from_value(expanded).map_err(|e| {
            Diagnostic::new(format!("the built-in schema of `{path}` does not fit: {e}"))
        })
    });
    if let Ok(mut m) = EXPANDED.lock() {
        m.insert(key.to_string(), result.clone());
    }
    result
}

#[cfg(feature = "manifests")]
fn expand_type(key: &str, stack: &mut Vec<String>) -> Result<Value, Diagnostic> {
    if stack.iter().any(|k| k == key) {
        return Err(Diagnostic::new(format!(
            "`k8s_openapi::{key}` contains itself, and a CRD schema cannot be recursive: use serde_json::Value for this field"
        )));
    }
    let entry = table()?
        .entry(key)
        .ok_or_else(|| Diagnostic::new(missing(&format!("k8s_openapi::{key}"))))??;
    let schema: Value = serde_json::from_str(entry.schema.get()).map_err(|e| {
        Diagnostic::new(format!(
            "the built-in schema of `k8s_openapi::{key}` does not parse: {e}"
        ))
    })?;
    stack.push(key.to_string());
    let out = expand(&schema, stack);
    stack.pop();
    out
}

#[cfg(feature = "manifests")]
/// Replaces `{"$known": path}` references with the referenced schema, merged with what the
/// field says beside the reference as controller-gen merges a field into its type: the field's
/// description, `default`, `x-kubernetes-map-type` (`+structType=granular` on a field of an
/// atomic type) and other keys win; its `x-kubernetes-validations` (`+k8s:immutable`) come before
/// the type's; `required` lists are joined.
fn expand(node: &Value, stack: &mut Vec<String>) -> Result<Value, Diagnostic> {
    Ok(match node {
        Value::Object(map) => {
            if let Some(Value::String(key)) = map.get("$known") {
                let mut expanded = expand_type(key, stack)?;
                if let Some(o) = expanded.as_object_mut() {
                    for (k, v) in map.iter().filter(|(k, _)| *k != "$known") {
                        let v = expand(v, stack)?;
                        match (k.as_str(), o.get_mut(k), v) {
                            (
                                "x-kubernetes-validations",
                                Some(Value::Array(type_rules)),
                                Value::Array(mut rules),
                            ) => {
                                rules.append(type_rules);
                                *type_rules = rules;
                            }
                            ("required", Some(Value::Array(type_required)), Value::Array(r)) => {
                                type_required.extend(r);
                            }
                            (_, _, v) => {
                                o.insert(k.clone(), v);
                            }
                        }
                    }
                }
                expanded
            } else {
                Value::Object(
                    map.iter()
                        .map(|(k, v)| Ok((k.clone(), expand(v, stack)?)))
                        .collect::<Result<_, Diagnostic>>()?,
                )
            }
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| expand(v, stack))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_types_are_sorted_lines_that_the_search_finds() {
        let table = table().expect("the table parses");
        let lines: Vec<_> = table.types.lines().collect();
        assert!(lines.len() > 800, "{} types", lines.len());
        let mut before = "";
        for line in lines {
            let (path, entry) = line.expect("each line is `\"path\": entry`");
            assert!(
                before < path,
                "`{before}` is not before `{path}`: the search needs order"
            );
            assert_eq!(table.types.get(path), Some(entry), "{path}");
            // a path between two of the table's is not found
            assert_eq!(table.types.get(&format!("{path}!")), None, "{path}!");
            before = path;
        }
        for absent in ["", "api", "zzz", "api::core::v1::Pod2"] {
            assert_eq!(table.types.get(absent), None, "{absent}");
        }
        assert!(table.types.contains_key("api::core::v1::Pod"));
        assert!(
            table
                .types
                .contains_key("apimachinery::pkg::apis::meta::v1::Condition")
        );
    }

    #[test]
    fn every_table_type_expands_or_is_recursive() {
        let table = table().expect("the table parses");
        let mut recursive = Vec::new();
        for key in table.types.keys() {
            match schema(&format!("k8s_openapi::{key}")) {
                Ok(_) => {}
                Err(e) if e.message.contains("cannot be recursive") => recursive.push(key),
                Err(e) => panic!("{key}: {e}"),
            }
        }
        assert_eq!(
            recursive,
            [
                // Kubernetes 1.37: a composite pod group template lists its children's templates
                "api::scheduling::v1alpha3::CompositePodGroupTemplate",
                "api::scheduling::v1alpha3::Workload",
                "api::scheduling::v1alpha3::WorkloadList",
                "api::scheduling::v1alpha3::WorkloadSpec",
                "api::scheduling::v1beta1::CompositePodGroupTemplate",
                "api::scheduling::v1beta1::Workload",
                "api::scheduling::v1beta1::WorkloadList",
                "api::scheduling::v1beta1::WorkloadSpec",
                "apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition",
                "apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionList",
                "apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionSpec",
                "apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion",
                "apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceValidation",
                "apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps",
            ]
        );
        let pod = schema("k8s_openapi::api::core::v1::PodTemplateSpec").expect("PodTemplateSpec");
        let spec = &pod.properties.as_ref().expect("properties")["spec"];
        let containers = &spec.properties.as_ref().expect("pod spec properties")["containers"];
        assert_eq!(containers.x_kubernetes_list_type.as_deref(), Some("map"));
        let item = match &containers.items {
            Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(s)) => s,
            other => panic!("containers items: {other:?}"),
        };
        assert_eq!(
            item.description.as_deref(),
            Some("A single application container that you want to run within a pod.")
        );
    }

    /// What a field says beside a reference to a Kubernetes type is merged into the type's
    /// schema as controller-gen merges it, not dropped.
    #[test]
    fn field_markers_beside_a_reference_are_kept() {
        let props = |s: &Props| s.properties.clone().expect("properties");
        // ObjectReference is +structType=atomic; PersistentVolumeSpec's claimRef says granular
        let reference = schema("k8s_openapi::api::core::v1::ObjectReference").expect("reference");
        assert_eq!(reference.x_kubernetes_map_type.as_deref(), Some("atomic"));
        let pv = schema("k8s_openapi::api::core::v1::PersistentVolumeSpec").expect("pv spec");
        assert_eq!(
            props(&pv)["claimRef"].x_kubernetes_map_type.as_deref(),
            Some("granular")
        );
        // +default={"single": {}} and +k8s:immutable on a field of a struct type
        let group = schema("k8s_openapi::api::scheduling::v1alpha3::PodGroupSpec").expect("spec");
        let mode = &props(&group)["disruptionMode"];
        let rules: Vec<&str> = mode
            .x_kubernetes_validations
            .iter()
            .flatten()
            .map(|r| r.rule.as_str())
            .collect();
        assert_eq!(rules, ["self == oldSelf"]);
        let default = mode.default.clone();
        assert_eq!(
            default.map(|d| d.0),
            Some(serde_json::json!({"single": {}}))
        );
    }

    #[test]
    fn paths_resolve_through_reexports_and_never_by_last_segment() {
        let container = "k8s_openapi::api::core::v1::Container";
        assert_eq!(external(container), External::Known(container.into()));
        assert_eq!(
            external("operator_gen_runtime::k8s_openapi::api::core::v1::Container"),
            External::Known(container.into())
        );
        assert_eq!(
            external("operator_gen_runtime::prelude::Condition"),
            External::Known("k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition".into())
        );
        assert_eq!(
            external("k8s_openapi::jiff::Timestamp"),
            External::Known("jiff::Timestamp".into())
        );
        assert_eq!(
            external("my_crate::Container"),
            External::Unknown("my_crate::Container".into())
        );
        assert_eq!(
            external("k8s_openapi::api::core::v1::NoSuchType"),
            External::MissingKubernetes("k8s_openapi::api::core::v1::NoSuchType".into())
        );
        assert!(missing("k8s_openapi::api::core::v1::NoSuchType").contains(kubernetes_version()));
    }

    #[test]
    fn kinds_name_their_types() {
        let deployment = kinds()
            .iter()
            .find(|k| k.group == "apps" && k.kind == "Deployment")
            .expect("apps/v1 Deployment");
        assert_eq!(
            (
                deployment.plural.as_str(),
                deployment.namespaced,
                deployment.type_path.as_str()
            ),
            ("deployments", true, "api::apps::v1::Deployment")
        );
        for k in kinds() {
            assert!(
                table()
                    .expect("table")
                    .types
                    .contains_key(k.type_path.as_str()),
                "{k:?}"
            );
        }
    }
}
