//! Objects marked `x-kubernetes-embedded-resource` carry a type: `apiVersion` and `kind`,
//! non-empty strings.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::{Map, Value};

use super::errors::{ErrorType, FieldError};
use super::path;
use super::walk::walk;

/// The embedded resources in `v` without their type.
pub(crate) fn check(s: &JSONSchemaProps, v: &Value, at: &str, errs: &mut Vec<FieldError>) {
    walk(s, v, at, None, &mut |s, v, at, _| {
        if let Value::Object(map) = v
            && s.x_kubernetes_embedded_resource == Some(true)
        {
            check_type(map, at, errs);
        }
    });
}

fn check_type(map: &Map<String, Value>, at: &str, errs: &mut Vec<FieldError>) {
    for field in ["apiVersion", "kind"] {
        let here = path::child(at, field);
        match map.get(field) {
            None => errs.push(FieldError::new(
                ErrorType::Required,
                &here,
                None,
                String::new(),
            )),
            Some(Value::String(s)) if s.is_empty() => errs.push(FieldError::new(
                ErrorType::Invalid,
                &here,
                Some(Value::String(String::new())),
                "must not be empty".into(),
            )),
            Some(Value::String(_)) => {}
            Some(other) => errs.push(FieldError::new(
                ErrorType::Invalid,
                &here,
                Some(other.clone()),
                "must be a string".into(),
            )),
        }
    }
}
