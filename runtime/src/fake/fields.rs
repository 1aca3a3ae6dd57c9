//! Field paths of JSON objects: which leaves an object sets, which changed between two versions,
//! and the `metadata.managedFields` entries (FieldsV1) that record who owns them.
//!
//! A path is the list of object keys from the root, and, inside a list its CRD marks
//! `x-kubernetes-list-type: map`, the item's key fields as FieldsV1 names them
//! (`k:{"type":"Ready"}`). An item of a list of scalars marked `x-kubernetes-list-type: set`,
//! and of `metadata.finalizers` (a set in every kind, as in the apiserver's `ObjectMeta`), is a
//! leaf of its own, named by its value (`v:"example.com/f"`): each manager owns the items it
//! sets. Other lists, scalars and empty objects are leaves: those lists are atomic, owned and
//! replaced whole.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray,
};
use serde_json::{Map, Value};

/// A field's keys from the root, `["spec", "size"]`.
pub(crate) type Path = Vec<String>;

/// The set of paths a manager owns.
pub(crate) type Fields = BTreeSet<Path>;

/// Where in an object the list items a path steps through stand, in a [`Shape`]'s paths.
const ITEM: &str = "[]";

/// The lists of a kind that merge item by item: the paths (object keys, [`ITEM`] for a list's
/// items) of those that merge by key, with their key fields, and of those that merge as sets of
/// scalars, from the CRD's schema.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    maps: BTreeMap<Path, Vec<String>>,
    sets: BTreeSet<Path>,
}

/// Every kind's shape holds `metadata.finalizers`, a set in `ObjectMeta`.
impl Default for Shape {
    fn default() -> Self {
        Shape {
            maps: BTreeMap::new(),
            sets: [vec!["metadata".to_owned(), "finalizers".to_owned()]].into(),
        }
    }
}

impl Shape {
    /// The list-map and set lists of `schema`, and `metadata.finalizers`.
    pub(crate) fn of(schema: Option<&JSONSchemaProps>) -> Self {
        let mut shape = Shape::default();
        if let Some(schema) = schema {
            shape.walk(schema, &mut Vec::new());
        }
        shape
    }

    fn walk(&mut self, schema: &JSONSchemaProps, at: &mut Path) {
        if schema.x_kubernetes_list_type.as_deref() == Some("map")
            && let Some(keys) = &schema.x_kubernetes_list_map_keys
        {
            self.maps.insert(at.clone(), keys.clone());
        }
        if schema.x_kubernetes_list_type.as_deref() == Some("set") {
            self.sets.insert(at.clone());
        }
        for (name, child) in schema.properties.iter().flatten() {
            at.push(name.clone());
            self.walk(child, at);
            at.pop();
        }
        if let Some(JSONSchemaPropsOrArray::Schema(items)) = &schema.items {
            at.push(ITEM.to_owned());
            self.walk(items, at);
            at.pop();
        }
    }

    /// The key fields of the list at `path`, when it merges by key.
    fn keys(&self, path: &[String]) -> Option<&Vec<String>> {
        if self.maps.is_empty() {
            return None;
        }
        self.maps.get(&normal(path))
    }

    /// Whether the list at `path` merges as a set of scalars.
    fn is_set(&self, path: &[String]) -> bool {
        self.sets.contains(&normal(path))
    }
}

/// `path` with each list item segment as [`ITEM`], as a [`Shape`] keys its lists.
fn normal(path: &[String]) -> Path {
    path.iter()
        .map(|s| {
            if is_item(s) {
                ITEM.to_owned()
            } else {
                s.clone()
            }
        })
        .collect()
}

/// Whether `segment` names a list item: by its keys (`k:{..}`) or, in a set, by its value
/// (`v:..`).
fn is_item(segment: &str) -> bool {
    segment.starts_with("k:{") || segment.starts_with("v:")
}

/// `v:"a"`: the segment naming a set's item by its value.
fn value_segment(item: &Value) -> String {
    format!("v:{item}")
}

/// The value a `v:` segment names.
fn segment_value(segment: &str) -> Option<Value> {
    serde_json::from_str(segment.strip_prefix("v:")?).ok()
}

/// The items of `list` by their segment, when the list at `path` is a set of scalars.
fn valued<'a>(list: &'a Value, shape: &Shape, path: &[String]) -> Option<Vec<(String, &'a Value)>> {
    if !shape.is_set(path) {
        return None;
    }
    list.as_array()?
        .iter()
        .map(|item| (!item.is_object() && !item.is_array()).then(|| (value_segment(item), item)))
        .collect()
}

/// The items of the list at `path` by segment, when it merges item by item (by key or as a set).
fn items<'a>(list: &'a Value, shape: &Shape, path: &[String]) -> Option<Vec<(String, &'a Value)>> {
    keyed(list, shape, path).or_else(|| valued(list, shape, path))
}

/// `k:{"type":"Ready"}`: the segment naming `item` by `keys`, or `None` when it lacks one.
fn item_segment(item: &Value, keys: &[String]) -> Option<String> {
    let mut sorted: Vec<&String> = keys.iter().collect();
    sorted.sort();
    let mut named = Map::new();
    for key in sorted {
        named.insert(key.clone(), item.get(key)?.clone());
    }
    Some(format!("k:{}", Value::Object(named)))
}

fn segment_keys(segment: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str(segment.strip_prefix("k:")?) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

fn item_matches(item: &Value, keys: &Map<String, Value>) -> bool {
    keys.iter().all(|(k, v)| item.get(k) == Some(v))
}

/// Fields no manager owns: the identity and bookkeeping the server sets.
fn untracked(path: &[String]) -> bool {
    match path {
        [one] => one == "apiVersion" || one == "kind",
        [meta, key, ..] if meta == "metadata" => !matches!(
            key.as_str(),
            "labels" | "annotations" | "finalizers" | "ownerReferences"
        ),
        _ => false,
    }
}

/// The leaf paths `value` sets, bookkeeping aside.
pub(crate) fn leaves(value: &Value, shape: &Shape) -> Fields {
    let mut out = Fields::new();
    collect(value, shape, &mut Vec::new(), &mut out);
    out.retain(|p| !untracked(p));
    out
}

/// The items of `list` by their segment, when the list at `path` merges by key and every item
/// has its keys.
fn keyed<'a>(list: &'a Value, shape: &Shape, path: &[String]) -> Option<Vec<(String, &'a Value)>> {
    let keys = shape.keys(path)?;
    list.as_array()?
        .iter()
        .map(|item| item_segment(item, keys).map(|s| (s, item)))
        .collect()
}

fn collect(value: &Value, shape: &Shape, prefix: &mut Path, out: &mut Fields) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                prefix.push(key.clone());
                collect(child, shape, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(list)
            if !list.is_empty() && (shape.keys(prefix).is_some() || shape.is_set(prefix)) =>
        {
            match items(value, shape, prefix) {
                Some(items) if shape.is_set(prefix) => {
                    for (segment, _) in items {
                        prefix.push(segment);
                        out.insert(prefix.clone());
                        prefix.pop();
                    }
                }
                Some(items) => {
                    for (segment, item) in items {
                        prefix.push(segment);
                        collect(item, shape, prefix, out);
                        prefix.pop();
                    }
                }
                None => {
                    out.insert(prefix.clone());
                }
            }
        }
        _ => {
            if !prefix.is_empty() {
                out.insert(prefix.clone());
            }
        }
    }
}

/// The leaf paths whose value differs between `old` and `new` (set, changed or removed).
pub(crate) fn changed(old: &Value, new: &Value, shape: &Shape) -> Fields {
    let mut out = Fields::new();
    diff(Some(old), Some(new), shape, &mut Vec::new(), &mut out);
    out.retain(|p| !untracked(p));
    out
}

fn diff(
    old: Option<&Value>,
    new: Option<&Value>,
    shape: &Shape,
    prefix: &mut Path,
    out: &mut Fields,
) {
    if old == new {
        return;
    }
    match (old, new) {
        (Some(Value::Object(a)), Some(Value::Object(b))) if !a.is_empty() && !b.is_empty() => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                prefix.push(key.clone());
                diff(a.get(key), b.get(key), shape, prefix, out);
                prefix.pop();
            }
            return;
        }
        (Some(a @ Value::Array(_)), Some(b @ Value::Array(_))) => {
            if let (Some(a), Some(b)) = (items(a, shape, prefix), items(b, shape, prefix)) {
                let a: BTreeMap<String, &Value> = a.into_iter().collect();
                let b: BTreeMap<String, &Value> = b.into_iter().collect();
                let segments: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                for segment in segments {
                    prefix.push(segment.clone());
                    diff(
                        a.get(segment).copied(),
                        b.get(segment).copied(),
                        shape,
                        prefix,
                        out,
                    );
                    prefix.pop();
                }
                return;
            }
        }
        _ => {}
    }
    match new {
        Some(b) if b.as_object().is_some_and(|m| !m.is_empty()) || b.is_array() => {
            let before = out.len();
            collect(b, shape, prefix, out);
            if out.len() == before && !prefix.is_empty() {
                out.insert(prefix.clone());
            }
        }
        _ => {
            if !prefix.is_empty() {
                out.insert(prefix.clone());
            }
        }
    }
}

/// The value at `path`, if any.
pub(crate) fn get<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, segment| {
        if let Some(want) = segment_value(segment) {
            v.as_array()?.iter().find(|item| **item == want)
        } else if is_item(segment) {
            let keys = segment_keys(segment)?;
            v.as_array()?.iter().find(|item| item_matches(item, &keys))
        } else {
            v.get(segment)
        }
    })
}

fn get_mut<'a>(value: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |v, segment| {
        if let Some(want) = segment_value(segment) {
            v.as_array_mut()?.iter_mut().find(|item| **item == want)
        } else if is_item(segment) {
            let keys = segment_keys(segment)?;
            v.as_array_mut()?
                .iter_mut()
                .find(|item| item_matches(item, &keys))
        } else {
            v.get_mut(segment)
        }
    })
}

/// Sets `path` to `new`, making the objects and list items on the way.
pub(crate) fn set(value: &mut Value, path: &[String], new: Value) {
    let Some((last, parents)) = path.split_last() else {
        *value = new;
        return;
    };
    let mut at = value;
    for segment in parents {
        at = step_or_make(at, segment);
    }
    if last.starts_with("v:") {
        // a set's item: there once, in the order it came
        if !at.is_array() {
            *at = Value::Array(Vec::new());
        }
        if let Value::Array(items) = at
            && !items.contains(&new)
        {
            items.push(new);
        }
        return;
    }
    if is_item(last) {
        let slot = step_or_make(at, last);
        *slot = new;
        return;
    }
    if !at.is_object() {
        *at = Value::Object(Map::new());
    }
    if let Value::Object(map) = at {
        map.insert(last.clone(), new);
    }
}

fn step_or_make<'a>(at: &'a mut Value, segment: &str) -> &'a mut Value {
    if let Some(keys) = segment_keys(segment).filter(|_| is_item(segment)) {
        if !at.is_array() {
            *at = Value::Array(Vec::new());
        }
        let Value::Array(items) = at else {
            unreachable!("made an array above")
        };
        let index = match items.iter().position(|item| item_matches(item, &keys)) {
            Some(i) => i,
            None => {
                items.push(Value::Object(keys));
                items.len() - 1
            }
        };
        return &mut items[index];
    }
    if !at.is_object() {
        *at = Value::Object(Map::new());
    }
    let Value::Object(map) = at else {
        unreachable!("made an object above")
    };
    map.entry(segment.to_owned())
        .or_insert_with(|| Value::Object(Map::new()))
}

/// Removes `path`, and the objects and list items it leaves empty on the way up. A list item's
/// key field goes only with its item: an item left with nothing but its keys goes.
pub(crate) fn remove(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    if let Some(item) = parents.last().filter(|p| is_item(p))
        && segment_keys(item).is_some_and(|keys| keys.contains_key(last))
    {
        prune(value, parents);
        return;
    }
    match get_mut(value, parents) {
        Some(Value::Object(map)) => {
            map.remove(last);
        }
        Some(Value::Array(items)) if is_item(last) => {
            if let Some(want) = segment_value(last) {
                items.retain(|item| *item != want);
            } else if let Some(keys) = segment_keys(last) {
                items.retain(|item| !item_matches(item, &keys));
            }
        }
        _ => return,
    }
    prune(value, parents);
}

/// Removes what `path` names when nothing is left in it (an item: nothing but its keys).
fn prune(value: &mut Value, path: &[String]) {
    let Some(last) = path.last() else {
        return;
    };
    let empty = match get(value, path) {
        Some(Value::Object(map)) if is_item(last) => {
            let keys = segment_keys(last).unwrap_or_default();
            map.keys().all(|k| keys.contains_key(k))
        }
        Some(Value::Object(map)) => map.is_empty(),
        Some(Value::Array(items)) => items.is_empty(),
        _ => false,
    };
    if empty {
        remove(value, path);
    }
}

/// Whether one path is the other or lies under it.
pub(crate) fn overlaps(a: &[String], b: &[String]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// `.spec.size`, `.status.conditions[type="Ready"].message`: a path as the apiserver prints it
/// in conflicts.
pub(crate) fn dotted(path: &[String]) -> String {
    path.iter()
        .map(|segment| {
            if let Some(value) = segment_value(segment) {
                return format!("[={value}]");
            }
            match segment_keys(segment).filter(|_| is_item(segment)) {
                Some(keys) => {
                    let named: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    format!("[{}]", named.join(","))
                }
                None => format!(".{segment}"),
            }
        })
        .collect()
}

/// FieldsV1 of `fields`: `{"f:spec": {"f:size": {}}}`, list items as `k:{...}` with `.`, a
/// set's items as `v:...`.
pub(crate) fn to_fields_v1(fields: &Fields) -> Value {
    let mut root = Value::Object(Map::new());
    for path in fields {
        let mut at = &mut root;
        for segment in path {
            let name = if is_item(segment) {
                segment.clone()
            } else {
                format!("f:{segment}")
            };
            if !at.is_object() {
                *at = Value::Object(Map::new());
            }
            let Value::Object(map) = at else {
                unreachable!("made an object above")
            };
            at = map.entry(name).or_insert_with(|| Value::Object(Map::new()));
            if segment.starts_with("k:")
                && let Value::Object(item) = at
            {
                item.entry(".").or_insert_with(|| Value::Object(Map::new()));
            }
        }
    }
    root
}

/// The paths of a FieldsV1 value; an entry keyed by list index (`i:`) makes its list a leaf,
/// as this model keeps such lists atomic.
pub(crate) fn from_fields_v1(value: &Value) -> Fields {
    let mut out = Fields::new();
    walk_v1(value, &mut Vec::new(), &mut out);
    out
}

fn walk_v1(value: &Value, prefix: &mut Path, out: &mut Fields) {
    let children: Vec<(&String, &Value)> = value
        .as_object()
        .map(|m| m.iter().filter(|(k, _)| k.as_str() != ".").collect())
        .unwrap_or_default();
    let named: Vec<(String, &Value)> = children
        .iter()
        .filter_map(|(k, v)| {
            if let Some(field) = k.strip_prefix("f:") {
                Some((field.to_owned(), *v))
            } else if is_item(k) {
                Some(((*k).clone(), *v))
            } else {
                None
            }
        })
        .collect();
    if children.is_empty() || named.len() < children.len() {
        if !prefix.is_empty() {
            out.insert(prefix.clone());
        }
        return;
    }
    for (key, child) in named {
        prefix.push(key);
        walk_v1(child, prefix, out);
        prefix.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(s: &str) -> Path {
        s.split('.').map(str::to_owned).collect()
    }

    fn conditions_shape() -> Shape {
        let mut shape = Shape::default();
        shape
            .maps
            .insert(p("status.conditions"), vec!["type".to_owned()]);
        shape
    }

    fn item(path: &str, key: &str, rest: &str) -> Path {
        let mut out = p(path);
        out.push(format!("k:{{\"type\":\"{key}\"}}"));
        if !rest.is_empty() {
            out.extend(p(rest));
        }
        out
    }

    #[test]
    fn leaves_skip_bookkeeping_and_keep_lists_whole() {
        let obj = json!({"apiVersion": "v1", "kind": "X",
            "metadata": {"name": "a", "labels": {"x": "1"}, "resourceVersion": "3"},
            "spec": {"items": [1, 2], "empty": {}, "n": {"m": 1}}});
        let got: Vec<Path> = leaves(&obj, &Shape::default()).into_iter().collect();
        assert_eq!(
            got,
            vec![
                p("metadata.labels.x"),
                p("spec.empty"),
                p("spec.items"),
                p("spec.n.m")
            ]
        );
    }

    #[test]
    fn a_list_map_has_a_path_per_item_field() {
        let obj = json!({"status": {"conditions": [
            {"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}});
        let got = leaves(&obj, &conditions_shape());
        let want: Fields = [
            item("status.conditions", "Ready", "status"),
            item("status.conditions", "Ready", "type"),
            item("status.conditions", "Synced", "status"),
            item("status.conditions", "Synced", "type"),
        ]
        .into();
        assert_eq!(got, want);
        assert_eq!(
            get(&obj, &item("status.conditions", "Synced", "status")),
            Some(&json!("False"))
        );
        assert_eq!(
            dotted(&item("status.conditions", "Ready", "status")),
            ".status.conditions[type=\"Ready\"].status"
        );
    }

    #[test]
    fn set_and_remove_address_list_map_items() {
        let mut obj = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        set(
            &mut obj,
            &item("status.conditions", "Synced", "status"),
            json!("False"),
        );
        assert_eq!(
            obj["status"]["conditions"],
            json!([{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}])
        );
        remove(&mut obj, &item("status.conditions", "Ready", "type"));
        remove(&mut obj, &item("status.conditions", "Ready", "status"));
        assert_eq!(
            obj["status"]["conditions"],
            json!([{"type": "Synced", "status": "False"}])
        );
    }

    #[test]
    fn changed_names_set_changed_and_removed_leaves() {
        let old = json!({"spec": {"a": 1, "b": 2, "c": {"d": 1}}});
        let new = json!({"spec": {"a": 1, "b": 3, "e": {"f": 1}}});
        let got: Vec<Path> = changed(&old, &new, &Shape::default()).into_iter().collect();
        assert_eq!(got, vec![p("spec.b"), p("spec.c"), p("spec.e.f")]);
        let old = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        let new = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False"}, {"type": "Synced", "status": "True"}]}});
        let got = changed(&old, &new, &conditions_shape());
        let want: Fields = [
            item("status.conditions", "Ready", "status"),
            item("status.conditions", "Synced", "status"),
            item("status.conditions", "Synced", "type"),
        ]
        .into();
        assert_eq!(got, want);
    }

    #[test]
    fn fields_v1_round_trips_and_value_keys_make_a_leaf() {
        let fields: Fields = [p("spec.size"), item("status.conditions", "Ready", "status")].into();
        let v1 = to_fields_v1(&fields);
        assert_eq!(
            v1,
            json!({"f:spec": {"f:size": {}},
                   "f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}}}}})
        );
        assert_eq!(from_fields_v1(&v1), fields);
        let valued = json!({"f:metadata": {"f:finalizers": {".": {}, "v:\"a\"": {}}}});
        assert_eq!(from_fields_v1(&valued), [finalizer("a")].into());
        let indexed = json!({"f:spec": {"f:ports": {"i:0": {}}}});
        assert_eq!(from_fields_v1(&indexed), [p("spec.ports")].into());
    }

    fn finalizer(name: &str) -> Path {
        let mut path = p("metadata.finalizers");
        path.push(format!("v:\"{name}\""));
        path
    }

    #[test]
    fn finalizers_and_set_lists_have_a_path_per_item() {
        let schema: JSONSchemaProps = serde_json::from_value(json!({
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {
                "tags": {"type": "array", "x-kubernetes-list-type": "set",
                         "items": {"type": "string"}},
                "ports": {"type": "array", "items": {"type": "integer"}}}}}}))
        .expect("a schema");
        let shape = Shape::of(Some(&schema));
        let obj = json!({"metadata": {"finalizers": ["a", "b"]},
                         "spec": {"tags": ["x"], "ports": [1, 2]}});
        let mut tag = p("spec.tags");
        tag.push("v:\"x\"".to_owned());
        let want: Fields = [finalizer("a"), finalizer("b"), tag.clone(), p("spec.ports")].into();
        assert_eq!(leaves(&obj, &shape), want);
        assert_eq!(dotted(&finalizer("a")), ".metadata.finalizers[=\"a\"]");
        assert_eq!(get(&obj, &tag), Some(&json!("x")));
        // FieldsV1 as the apiserver writes it for a set's items
        assert_eq!(
            to_fields_v1(&[finalizer("a")].into()),
            json!({"f:metadata": {"f:finalizers": {"v:\"a\"": {}}}})
        );

        let mut merged = obj.clone();
        set(&mut merged, &finalizer("c"), json!("c"));
        set(&mut merged, &finalizer("a"), json!("a"));
        assert_eq!(merged["metadata"]["finalizers"], json!(["a", "b", "c"]));
        remove(&mut merged, &finalizer("b"));
        assert_eq!(merged["metadata"]["finalizers"], json!(["a", "c"]));
        remove(&mut merged, &finalizer("a"));
        remove(&mut merged, &finalizer("c"));
        assert_eq!(merged["metadata"].get("finalizers"), None);

        let grown = json!({"metadata": {"finalizers": ["a", "b", "c"]},
                           "spec": {"tags": ["x"], "ports": [1, 2]}});
        assert_eq!(changed(&obj, &grown, &shape), [finalizer("c")].into());
        // a list of objects in a set (not a valid schema) stays atomic
        let odd = json!({"metadata": {"finalizers": [{"a": 1}]}});
        assert_eq!(leaves(&odd, &shape), [p("metadata.finalizers")].into());
    }

    #[test]
    fn remove_prunes_emptied_parents() {
        let mut obj = json!({"spec": {"a": {"b": 1}, "c": 2}});
        remove(&mut obj, &p("spec.a.b"));
        assert_eq!(obj, json!({"spec": {"c": 2}}));
        set(&mut obj, &p("status.x.y"), json!(1));
        assert_eq!(obj["status"]["x"]["y"], 1);
        assert_eq!(dotted(&p("spec.c")), ".spec.c");
    }
}
