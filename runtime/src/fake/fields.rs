//! Field paths of JSON objects: which leaves an object sets, which changed between two versions,
//! and the `metadata.managedFields` entries (FieldsV1) that record who owns them.
//!
//! A path is the list of object keys from the root; a list, a scalar and an empty object are
//! leaves (lists are atomic: no per-item ownership).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// A field's keys from the root, `["spec", "size"]`.
pub(crate) type Path = Vec<String>;

/// The set of paths a manager owns.
pub(crate) type Fields = BTreeSet<Path>;

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
pub(crate) fn leaves(value: &Value) -> Fields {
    let mut out = Fields::new();
    collect(value, &mut Vec::new(), &mut out);
    out.retain(|p| !untracked(p));
    out
}

fn collect(value: &Value, prefix: &mut Path, out: &mut Fields) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                prefix.push(key.clone());
                collect(child, prefix, out);
                prefix.pop();
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
pub(crate) fn changed(old: &Value, new: &Value) -> Fields {
    let mut out = Fields::new();
    diff(Some(old), Some(new), &mut Vec::new(), &mut out);
    out.retain(|p| !untracked(p));
    out
}

fn diff(old: Option<&Value>, new: Option<&Value>, prefix: &mut Path, out: &mut Fields) {
    match (old, new) {
        (Some(Value::Object(a)), Some(Value::Object(b))) if !a.is_empty() && !b.is_empty() => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                prefix.push(key.clone());
                diff(a.get(key), b.get(key), prefix, out);
                prefix.pop();
            }
        }
        (a, b) if a == b => {}
        (_, Some(b)) if b.is_object() && !b.as_object().is_some_and(Map::is_empty) => {
            collect(b, prefix, out);
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
    path.iter().try_fold(value, |v, key| v.get(key))
}

/// Sets `path` to `new`, making the objects on the way.
pub(crate) fn set(value: &mut Value, path: &[String], new: Value) {
    let Some((last, parents)) = path.split_last() else {
        *value = new;
        return;
    };
    let mut at = value;
    for key in parents {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let Value::Object(map) = at else { return };
        at = map
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !at.is_object() {
        *at = Value::Object(Map::new());
    }
    if let Value::Object(map) = at {
        map.insert(last.clone(), new);
    }
}

/// Removes `path`, and the objects it leaves empty on the way up.
pub(crate) fn remove(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    if let Some(Value::Object(map)) = get_mut(value, parents) {
        map.remove(last);
        if map.is_empty() && !parents.is_empty() {
            remove(value, parents);
        }
    }
}

fn get_mut<'a>(value: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |v, key| v.get_mut(key))
}

/// Whether one path is the other or lies under it.
pub(crate) fn overlaps(a: &[String], b: &[String]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// `.spec.size`, as the apiserver prints a path in conflicts.
pub(crate) fn dotted(path: &[String]) -> String {
    path.iter().map(|k| format!(".{k}")).collect()
}

/// FieldsV1 of `fields`: `{"f:spec": {"f:size": {}}}`.
pub(crate) fn to_fields_v1(fields: &Fields) -> Value {
    let mut root = Value::Object(Map::new());
    for path in fields {
        let keys: Path = path.iter().map(|k| format!("f:{k}")).collect();
        set(&mut root, &keys, Value::Object(Map::new()));
    }
    root
}

/// The paths of a FieldsV1 value; an entry keyed by list item (`k:`, `v:`, `i:`) makes its list a
/// leaf, as this model keeps lists atomic.
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
    let named: Vec<_> = children
        .iter()
        .filter_map(|(k, v)| k.strip_prefix("f:").map(|k| (k, *v)))
        .collect();
    if children.is_empty() || named.len() < children.len() {
        if !prefix.is_empty() {
            out.insert(prefix.clone());
        }
        return;
    }
    for (key, child) in named {
        prefix.push(key.to_owned());
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

    #[test]
    fn leaves_skip_bookkeeping_and_keep_lists_whole() {
        let obj = json!({"apiVersion": "v1", "kind": "X",
            "metadata": {"name": "a", "labels": {"x": "1"}, "resourceVersion": "3"},
            "spec": {"items": [1, 2], "empty": {}, "n": {"m": 1}}});
        let got: Vec<Path> = leaves(&obj).into_iter().collect();
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
    fn changed_names_set_changed_and_removed_leaves() {
        let old = json!({"spec": {"a": 1, "b": 2, "c": {"d": 1}}});
        let new = json!({"spec": {"a": 1, "b": 3, "e": {"f": 1}}});
        let got: Vec<Path> = changed(&old, &new).into_iter().collect();
        assert_eq!(got, vec![p("spec.b"), p("spec.c"), p("spec.e.f")]);
    }

    #[test]
    fn fields_v1_round_trips_and_list_keys_make_a_leaf() {
        let fields: Fields = [p("spec.size"), p("status.conditions")].into();
        let v1 = to_fields_v1(&fields);
        assert_eq!(
            v1,
            json!({"f:spec": {"f:size": {}}, "f:status": {"f:conditions": {}}})
        );
        assert_eq!(from_fields_v1(&v1), fields);
        let keyed = json!({"f:status": {"f:conditions": {".": {}, "k:{\"type\":\"Ready\"}": {}}}});
        assert_eq!(from_fields_v1(&keyed), [p("status.conditions")].into());
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
