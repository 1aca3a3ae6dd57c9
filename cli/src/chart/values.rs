//! The chart's `values.yaml`: the defaults derived from the rendered manifests, and the
//! three-way merge that keeps what the user changed when the chart is generated again.

use serde_json::{Map, Value};

/// Comments written above each top-level key the generator owns.
const COMMENTS: &[(&str, &str)] = &[
    (
        "manager",
        "The manager Deployment: replicas, image, leader election, resources, and the pod's and\n\
         the container's security context (the restricted Pod Security Standard by default).",
    ),
    (
        "crd",
        "crd.enable installs the CustomResourceDefinitions with the chart.",
    ),
    (
        "metrics",
        "metrics.enable serves /metrics on metrics.port (--metrics-bind-address) behind the\n\
         metrics Service; false passes --metrics-bind-address=0 and leaves the Service out.",
    ),
    (
        "prometheus",
        "prometheus.enable adds the ServiceMonitor of config/prometheus (it needs the Prometheus\n\
         Operator's CRDs in the cluster).",
    ),
    (
        "extraLabels",
        "Labels added to the metadata of every object of the chart.",
    ),
];

/// The outcome of a merge: the values to write and what was kept from the user's file.
#[derive(Debug, Default, PartialEq)]
pub struct Merged {
    /// The merged values.
    pub values: Value,
    /// Paths (`manager.replicas`) whose value the user set and the merge kept.
    pub kept: Vec<String>,
    /// Paths the new defaults added.
    pub added: Vec<String>,
}

/// Merge the user's values with the new defaults, relative to the defaults of the last
/// generation (`base`, `Null` when there was none): a value the user left as generated follows
/// the new default, a value the user changed is kept, a key the user added is kept, a key only
/// the new defaults have is added, and a key the generator dropped goes unless the user changed it.
pub fn merge(base: &Value, user: &Value, new: &Value) -> Merged {
    let mut merged = Merged::default();
    merged.values = merge_at(base, user, new, "", &mut merged);
    merged
}

fn merge_at(base: &Value, user: &Value, new: &Value, path: &str, out: &mut Merged) -> Value {
    match (user, new) {
        (Value::Object(u), Value::Object(n)) => {
            let empty = Map::new();
            let b = base.as_object().unwrap_or(&empty);
            let mut result = Map::new();
            for (key, new_value) in n {
                let sub = join(path, key);
                match u.get(key) {
                    Some(user_value) => {
                        let base_value = b.get(key).unwrap_or(&Value::Null);
                        let v = merge_at(base_value, user_value, new_value, &sub, out);
                        result.insert(key.clone(), v);
                    }
                    None => {
                        out.added.push(sub);
                        result.insert(key.clone(), new_value.clone());
                    }
                }
            }
            for (key, user_value) in u {
                if n.contains_key(key) {
                    continue;
                }
                if b.get(key) == Some(user_value) {
                    // generated before, unchanged by the user, no longer generated
                    continue;
                }
                out.kept.push(join(path, key));
                result.insert(key.clone(), user_value.clone());
            }
            Value::Object(result)
        }
        _ if user == new => new.clone(),
        _ if user == base => new.clone(),
        _ => {
            out.kept.push(path.to_owned());
            user.clone()
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The text of `values.yaml`: a header, then each top-level key with its comment, in the order
/// of `values`.
pub fn render(values: &Value) -> String {
    let mut out = String::from(
        "# Values of the chart operator-gen derived from config/ (edit --plugins helm).\n\
         # Regenerating keeps every value you change here and every key you add; a value you\n\
         # left as generated follows config/.\n",
    );
    let Some(map) = values.as_object() else {
        return out;
    };
    for (key, value) in map {
        out.push('\n');
        if let Some((_, comment)) = COMMENTS.iter().find(|(k, _)| k == key) {
            for line in comment.lines() {
                out.push_str("# ");
                out.push_str(line.trim_start());
                out.push('\n');
            }
        }
        let mut one = Map::new();
        one.insert(key.clone(), value.clone());
        let doc = operator_gen_codegen::yaml::document(&Value::Object(one));
        out.push_str(doc.strip_prefix("---\n").unwrap_or(&doc));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn user_changes_are_kept_and_untouched_defaults_follow() {
        let base = json!({"manager": {"replicas": 1, "image": {"tag": "v1"}}, "old": 1, "gone": 2});
        let user = json!({"manager": {"replicas": 3, "image": {"tag": "v1"}, "mine": true}, "old": 1, "gone": 5});
        let new =
            json!({"manager": {"replicas": 1, "image": {"tag": "v2"}}, "metrics": {"port": 8443}});
        let m = merge(&base, &user, &new);
        assert_eq!(
            m.values,
            json!({"manager": {"replicas": 3, "image": {"tag": "v2"}, "mine": true}, "metrics": {"port": 8443}, "gone": 5})
        );
        assert_eq!(m.kept, ["manager.replicas", "manager.mine", "gone"]);
        assert_eq!(m.added, ["metrics"]);
    }

    #[test]
    fn without_a_base_every_user_value_is_kept() {
        let user = json!({"crd": {"enable": false}});
        let new = json!({"crd": {"enable": true}, "metrics": {"enable": true}});
        let m = merge(&Value::Null, &user, &new);
        assert_eq!(
            m.values,
            json!({"crd": {"enable": false}, "metrics": {"enable": true}})
        );
        assert_eq!(m.kept, ["crd.enable"]);
    }

    #[test]
    fn render_puts_comments_above_known_keys() {
        let text = render(&json!({"crd": {"enable": true}, "mine": 1}));
        assert!(
            text.contains("\n# crd.enable installs the CustomResourceDefinitions with the chart.\ncrd:\n  enable: true\n"),
            "{text}"
        );
        assert!(text.ends_with("\nmine: 1\n"), "{text}");
    }
}
