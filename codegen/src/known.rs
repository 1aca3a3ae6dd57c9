//! Schemas of types the generator knows by name: Kubernetes' own (Time, Quantity, Condition, ...)
//! and time types of the Rust ecosystem, as controller-gen emits them for their Go twins.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps as Props;

const QUANTITY_PATTERN: &str = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

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

fn from_json(text: &str, name: &str) -> Result<Props, String> {
    serde_json::from_str(text).map_err(|e| format!("built-in schema of {name} does not parse: {e}"))
}

/// The schema of a known type, by the last segment of its path.
pub fn schema(name: &str) -> Result<Props, String> {
    let string_format = |f: &str| Props {
        type_: Some("string".into()),
        format: Some(f.into()),
        ..Default::default()
    };
    Ok(match name {
        "Time" | "MicroTime" | "Timestamp" | "DateTime" | "Zoned" => string_format("date-time"),
        // jiff writes durations as ISO 8601 strings ("PT1H30M"), as metav1.Duration is a string
        "SignedDuration" | "Span" => Props {
            type_: Some("string".into()),
            ..Default::default()
        },
        "Quantity" => Props {
            pattern: Some(QUANTITY_PATTERN.into()),
            ..int_or_string()
        },
        "IntOrString" => int_or_string(),
        "ObjectMeta" => Props {
            type_: Some("object".into()),
            ..Default::default()
        },
        "RawExtension" => Props {
            type_: Some("object".into()),
            x_kubernetes_preserve_unknown_fields: Some(true),
            ..Default::default()
        },
        "Condition" => from_json(include_str!("known/condition.json"), name)?,
        other if k8s_table()?.contains_key(other) => {
            let expanded = expand(&serde_json::json!({ "$known": other }))?;
            serde_json::from_value(expanded)
                .map_err(|e| format!("built-in schema of {other} does not fit: {e}"))?
        }
        other => {
            return Err(format!(
                "the schema of `{other}` is not built in yet: use serde_json::Value (preserve unknown fields) or define the type in this crate"
            ));
        }
    })
}

/// Kubernetes types as controller-gen emits them for k8s.io/api v0.36, stored once each with
/// nested known types as `{"$known": Name}` references (regenerate with hack/known-types.py).
fn k8s_table() -> Result<&'static serde_json::Map<String, serde_json::Value>, String> {
    static TABLE: std::sync::OnceLock<Result<serde_json::Map<String, serde_json::Value>, String>> =
        std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            serde_json::from_str(include_str!("known/k8s.json"))
                .map_err(|e| format!("built-in Kubernetes schemas do not parse: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Replaces `$known` references with the referenced schema; a description at the reference wins.
fn expand(node: &serde_json::Value) -> Result<serde_json::Value, String> {
    use serde_json::Value;
    Ok(match node {
        Value::Object(map) => {
            if let Some(Value::String(name)) = map.get("$known") {
                let target = k8s_table()?
                    .get(name)
                    .ok_or_else(|| format!("built-in schema {name} is missing"))?;
                let mut expanded = expand(target)?;
                if let (Some(d), Some(o)) = (map.get("description"), expanded.as_object_mut()) {
                    o.insert("description".into(), d.clone());
                }
                expanded
            } else {
                Value::Object(
                    map.iter()
                        .map(|(k, v)| Ok((k.clone(), expand(v)?)))
                        .collect::<Result<_, String>>()?,
                )
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(expand).collect::<Result<_, _>>()?),
        other => other.clone(),
    })
}

/// Names of the Kubernetes types with a built-in schema.
#[cfg(test)]
pub fn k8s_type_names() -> Vec<String> {
    k8s_table()
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_type_expands_to_a_schema() {
        let names = k8s_type_names();
        assert!(names.len() >= 20, "{names:?}");
        for name in names {
            let props = schema(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(props.type_.is_some(), "{name} has no type");
        }
        let pod = schema("PodTemplateSpec").expect("PodTemplateSpec");
        let spec = &pod.properties.as_ref().expect("properties")["spec"];
        let containers = &spec.properties.as_ref().expect("pod spec properties")["containers"];
        assert_eq!(containers.x_kubernetes_list_type.as_deref(), Some("map"));
        assert!(schema("NoSuchType").is_err());
    }
}

#[cfg(test)]
mod table_tests {
    /// Every name lowering treats as known has a schema, and every built-in schema is reachable.
    #[test]
    fn lowering_and_table_agree() {
        for name in crate::lower::KNOWN_TYPES {
            assert!(
                super::schema(name).is_ok(),
                "{name} is known to lowering but has no schema"
            );
        }
        for name in super::k8s_type_names() {
            assert!(
                crate::lower::KNOWN_TYPES.contains(&name.as_str()),
                "{name} is unreachable"
            );
        }
    }
}
