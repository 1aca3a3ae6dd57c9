//! Shared helpers for operator-gen integration tests: paths, YAML comparison.

pub mod crd_round_trip;
pub mod k8s_types;

use std::path::PathBuf;

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `../shared/conformance/` beside the checkout: controller-gen's and kubebuilder's frozen
/// goldens. `None` when it is absent (outside CI the comparison is skipped, saying so; in CI
/// its absence fails).
#[track_caller]
pub fn conformance() -> Option<PathBuf> {
    let dir = workspace().join("../shared/conformance");
    if dir.is_dir() {
        return Some(dir);
    }
    tools::skip_or_fail(
        &format!(
            "{} is absent: the frozen controller-gen goldens were not compared",
            dir.display()
        ),
        "place the shared conformance goldens (`shared/conformance/`) beside the checkout",
    );
    None
}

/// The generator annotations, whose values name the tool and its version.
pub const VERSION_ANNOTATIONS: &[&str] = &[
    "controller-gen.kubebuilder.io/version",
    "operator-gen.io/version",
];

/// Parses a YAML stream into its documents, with the generator annotation (its key and value
/// name the tool) removed: the one normalisation before comparing with controller-gen's output.
pub fn normalized_documents(text: &str) -> Vec<serde_json::Value> {
    let mut docs: Vec<serde_json::Value> = match serde_saphyr::from_multiple(text) {
        Ok(d) => d,
        Err(e) => panic!("YAML does not parse: {e}\n{text}"),
    };
    docs.iter_mut().for_each(remove_generator_annotation);
    docs
}

/// Removes the generator annotation (and `annotations` when nothing else is left in it).
pub fn remove_generator_annotation(doc: &mut serde_json::Value) {
    if let Some(ann) = doc
        .pointer_mut("/metadata/annotations")
        .and_then(|a| a.as_object_mut())
    {
        for key in VERSION_ANNOTATIONS {
            ann.remove(*key);
        }
        if ann.is_empty()
            && let Some(md) = doc.pointer_mut("/metadata").and_then(|m| m.as_object_mut())
        {
            md.remove("annotations");
        }
    }
}

/// The first differing path between two JSON values, for readable failures.
pub fn first_difference(
    a: &serde_json::Value,
    b: &serde_json::Value,
    path: &str,
) -> Option<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            // each key once: visiting shared keys twice doubles the work at every level
            for key in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                match (x.get(key), y.get(key)) {
                    (Some(p), Some(q)) => {
                        if let Some(d) = first_difference(p, q, &format!("{path}/{key}")) {
                            return Some(d);
                        }
                    }
                    (p, q) => return Some(format!("{path}/{key}: {p:?} != {q:?}")),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} items != {} items", x.len(), y.len()));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}/{i}")))
        }
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => None,
        _ if a == b => None,
        _ => Some(format!("{path}: {a} != {b}")),
    }
}

pub mod audit;
pub mod cli;
pub mod faults;
pub mod fuzz;
pub mod integrity;
pub mod load;
pub mod older;
pub mod operator;
pub mod standby;
pub mod takeover;
pub mod tools;
