//! Schemas of types the generator knows by name: Kubernetes' own (Time, Quantity, Condition, ...)
//! and time types of the Rust ecosystem, as controller-gen emits them for their Go twins.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps as Props;

const QUANTITY_PATTERN: &str = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

fn int_or_string() -> Props {
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
        other => {
            return Err(format!(
                "the schema of `{other}` is not built in yet: use serde_json::Value (preserve unknown fields) or define the type in this crate"
            ));
        }
    })
}
