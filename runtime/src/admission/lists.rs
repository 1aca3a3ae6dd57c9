//! The invariants of `x-kubernetes-list-type`: a `set` holds no value twice, a `map` no two
//! items with the same keys.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::{Map, Value};

use super::errors::{ErrorType, FieldError};
use super::path;
use super::walk::walk;

/// The repeated items of the lists in `v`.
pub(crate) fn check(s: &JSONSchemaProps, v: &Value, at: &str, errs: &mut Vec<FieldError>) {
    walk(s, v, at, None, &mut |s, v, at, _| {
        if let Value::Array(list) = v {
            check_list(s, list, at, errs);
        }
    });
}

fn check_list(s: &JSONSchemaProps, list: &[Value], at: &str, errs: &mut Vec<FieldError>) {
    let keyed = |item: &Value| -> Value {
        let keys = s.x_kubernetes_list_map_keys.iter().flatten();
        let mut sorted: Vec<&String> = keys.collect();
        sorted.sort();
        let map: Map<String, Value> = sorted
            .into_iter()
            .filter_map(|k| item.get(k).map(|v| (k.clone(), v.clone())))
            .collect();
        Value::Object(map)
    };
    let identity: Box<dyn Fn(&Value) -> Value> = match s.x_kubernetes_list_type.as_deref() {
        Some("set") => Box::new(Value::clone),
        Some("map") => Box::new(keyed),
        _ => return,
    };
    let ids: Vec<Value> = list.iter().map(identity).collect();
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            errs.push(FieldError::new(
                ErrorType::Duplicate,
                &path::index(at, i),
                Some(id.clone()),
                String::new(),
            ));
        }
    }
}
