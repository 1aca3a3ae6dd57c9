//! The schema checks of kube-openapi's validator as the apiserver runs them on a custom
//! resource: type, format, string, number, list and object constraints, enum and the `allOf`,
//! `anyOf`, `oneOf` and `not` combinations; on an update, a value equal to the old one is not
//! checked again (the apiserver's ratcheting).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::{Value, json};

use super::errors::{ErrorType, FieldError, go_quote, number};
use super::formats;
use super::path;

/// The JSON type of a value as the validator names it.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The types a schema allows: `integer,string` for int-or-string.
fn types(s: &JSONSchemaProps) -> Vec<&str> {
    if s.x_kubernetes_int_or_string == Some(true) {
        vec!["integer", "string"]
    } else {
        s.type_.as_deref().into_iter().collect()
    }
}

/// The schema of a list's items.
pub(crate) fn items(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(items)) => Some(items),
        _ => None,
    }
}

/// The schema of an object's other keys (`additionalProperties`).
pub(crate) fn additional(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match &s.additional_properties {
        Some(JSONSchemaPropsOrBool::Schema(schema)) => Some(schema),
        _ => None,
    }
}

/// The old value correlated with the item `new` of a list, by the keys of a list-map.
pub(crate) fn old_item<'a>(
    s: &JSONSchemaProps,
    new: &Value,
    old: Option<&'a Value>,
) -> Option<&'a Value> {
    let keys = s.x_kubernetes_list_map_keys.as_ref()?;
    if s.x_kubernetes_list_type.as_deref() != Some("map") {
        return None;
    }
    old?.as_array()?
        .iter()
        .find(|o| keys.iter().all(|k| o.get(k) == new.get(k)))
}

/// The old value of an object's key, unless the object is atomic.
pub(crate) fn old_key<'a>(
    s: &JSONSchemaProps,
    key: &str,
    old: Option<&'a Value>,
) -> Option<&'a Value> {
    if s.x_kubernetes_map_type.as_deref() == Some("atomic") {
        return None;
    }
    old?.get(key)
}

/// Checks `v` against `s` at `at`; `old` is the value it replaces on an update.
pub(crate) fn check(
    s: &JSONSchemaProps,
    v: &Value,
    at: &str,
    old: Option<&Value>,
    errs: &mut Vec<FieldError>,
) {
    if old.is_some_and(|o| o == v) {
        return;
    }
    let allowed = types(s);
    let got = json_type(v);
    if v.is_null() {
        if !allowed.is_empty() && s.nullable != Some(true) {
            type_error(errs, at, &allowed.join(","), "null");
        }
        check_enum(s, v, at, errs);
        return;
    }
    let float_int = got == "number" && v.as_f64().is_some_and(|f| f.fract() == 0.0);
    let fits = allowed.contains(&got)
        || (float_int && allowed.contains(&"integer"))
        || (got == "integer" && allowed.contains(&"number"));
    if !allowed.is_empty() && !fits {
        type_error(errs, at, &allowed.join(","), got);
    }
    combinations(s, v, at, old, errs);
    match v {
        Value::String(text) => check_string(s, text, at, v, errs),
        Value::Number(_) => check_number(s, v, at, errs),
        Value::Array(list) => check_list(s, list, at, old, errs),
        _ => {}
    }
    check_enum(s, v, at, errs);
    if let Value::Object(map) = v {
        check_object(s, map, at, old, errs);
    }
}

/// A value of the wrong type: the message shows the type it has.
fn type_error(errs: &mut Vec<FieldError>, at: &str, want: &str, got: &str) {
    errs.push(FieldError::new(
        ErrorType::TypeInvalid,
        at,
        Some(json!(got)),
        format!("{at} in body must be of type {want}: {}", go_quote(got)),
    ));
}

fn invalid(errs: &mut Vec<FieldError>, at: &str, value: Value, detail: String) {
    errs.push(FieldError::new(ErrorType::Invalid, at, Some(value), detail));
}

/// A combination that does not hold: an error of the root (`<nil>`), naming the path.
fn combination_error(errs: &mut Vec<FieldError>, at: &str, what: &str) {
    let detail = format!("{} must {what}", go_quote(at));
    errs.push(FieldError::new(
        ErrorType::Invalid,
        "",
        Some(json!("")),
        detail,
    ));
}

/// The errors of each of `subs` on `v`.
fn each(subs: &[JSONSchemaProps], v: &Value, at: &str) -> Vec<Vec<FieldError>> {
    subs.iter()
        .map(|sub| {
            let mut e = Vec::new();
            check(sub, v, at, None, &mut e);
            e
        })
        .collect()
}

/// `anyOf`, `oneOf`, `allOf` and `not`, each schema checked at the same place, in
/// kube-openapi's order and words; a failing `anyOf` or `oneOf` adds the errors of its first
/// failing schema.
fn combinations(
    s: &JSONSchemaProps,
    v: &Value,
    at: &str,
    old: Option<&Value>,
    errs: &mut Vec<FieldError>,
) {
    if let Some(any) = &s.any_of {
        let all = each(any, v, at);
        if !all.iter().any(Vec::is_empty) {
            combination_error(errs, at, "validate at least one schema (anyOf)");
            errs.extend(all.into_iter().next().unwrap_or_default());
        }
    }
    if let Some(one) = &s.one_of {
        let all = each(one, v, at);
        let passing = all.iter().filter(|e| e.is_empty()).count();
        if passing != 1 {
            let found = match passing {
                0 => "Found none valid".to_owned(),
                n => format!("Found {n} valid alternatives"),
            };
            let what = format!("validate one and only one schema (oneOf). {found}");
            combination_error(errs, at, &what);
            if passing == 0 {
                errs.extend(all.into_iter().next().unwrap_or_default());
            }
        }
    }
    if let Some(all_of) = &s.all_of {
        let mut failed = 0;
        for sub in all_of {
            let mut e = Vec::new();
            check(sub, v, at, old, &mut e);
            failed += usize::from(!e.is_empty());
            errs.extend(e);
        }
        if failed > 0 {
            let none = if failed == all_of.len() {
                ". None validated"
            } else {
                ""
            };
            combination_error(errs, at, &format!("validate all the schemas (allOf){none}"));
        }
    }
    if let Some(not) = &s.not
        && each(std::slice::from_ref(not), v, at)[0].is_empty()
    {
        combination_error(errs, at, "not validate the schema (not)");
    }
}

fn check_string(s: &JSONSchemaProps, text: &str, at: &str, v: &Value, errs: &mut Vec<FieldError>) {
    let chars = text.chars().count() as i64;
    if let Some(max) = s.max_length
        && chars > max
    {
        errs.push(FieldError::new(
            ErrorType::TooLong,
            at,
            None,
            format!(
                "may not be more than {max} {}",
                if max == 1 { "byte" } else { "bytes" }
            ),
        ));
    }
    if let Some(min) = s.min_length
        && chars < min
    {
        invalid(
            errs,
            at,
            v.clone(),
            format!("{at} in body should be at least {min} chars long"),
        );
    }
    if let Some(pattern) = &s.pattern
        && formats::regex(pattern).is_some_and(|r| !r.is_match(text))
    {
        invalid(
            errs,
            at,
            v.clone(),
            format!("{at} in body should match '{pattern}'"),
        );
    }
    if let Some(format) = &s.format
        && matches!(s.type_.as_deref(), None | Some("string"))
        && formats::checked(format)
        && !formats::valid(format, text)
    {
        errs.push(FieldError::new(
            ErrorType::TypeInvalid,
            at,
            Some(v.clone()),
            format!("{at} in body must be of type {format}: {}", go_quote(text)),
        ));
    }
}

/// A bound as Go's `%v` prints a float64.
fn bound(f: f64) -> String {
    serde_json::Number::from_f64(f).map_or_else(|| f.to_string(), |n| number(&n))
}

/// The type and format a number does not fit, as kube-openapi's range check names them: a
/// fraction or an int32 or int64 overflow for an `integer`, a float32 overflow for a `float`.
fn out_of_range(s: &JSONSchemaProps, v: &Value, x: f64) -> Option<String> {
    let format = s.format.as_deref().unwrap_or_default();
    let (ty, fits) = match s.type_.as_deref() {
        Some("integer") => {
            let integral = !(v.as_i64().is_none() && v.as_u64().is_none() && x.fract() != 0.0);
            let fits = match format {
                "int32" => x >= f64::from(i32::MIN) && x <= f64::from(i32::MAX),
                _ => v.as_i64().is_some() || (v.is_f64() && x.abs() < 9.2e18),
            };
            ("integer", integral && fits)
        }
        Some("number") if format == "float" => ("number", x.abs() <= f64::from(f32::MAX)),
        _ => return None,
    };
    let format = match (ty, format) {
        ("integer", "int32" | "int64") | ("number", "float" | "double") => format,
        _ => "",
    };
    (!fits).then(|| {
        if format.is_empty() {
            format!("{ty} (default format)")
        } else {
            format!("{ty} with format {format}")
        }
    })
}

fn check_number(s: &JSONSchemaProps, v: &Value, at: &str, errs: &mut Vec<FieldError>) {
    let x = v.as_f64().unwrap_or_default();
    if let Some(kind) = out_of_range(s, v, x) {
        let detail = format!("Checked value must be of type {kind} in {at}");
        errs.push(FieldError::new(
            ErrorType::Invalid,
            "",
            Some(json!("")),
            detail,
        ));
    }
    // kube-openapi compares an integral value of a schema that is not `integer` with its
    // bounds and factor truncated to integers
    let truncated = (v.is_i64() || v.is_u64()) && s.type_.as_deref() != Some("integer");
    let limit = |f: f64| if truncated { f.trunc() } else { f };
    if let Some(m) = s.multiple_of.map(limit) {
        if m <= 0.0 {
            let detail = format!(
                "factor MultipleOf declared for {at} must be positive: {}",
                bound(m)
            );
            invalid(errs, at, json!(m as i64), detail);
        } else if (x / m).fract().abs() > f64::EPSILON {
            let detail = format!("{at} in body should be a multiple of {}", bound(m));
            invalid(errs, at, v.clone(), detail);
        }
    }
    let bounds = [
        (s.minimum, s.exclusive_minimum, false),
        (s.maximum, s.exclusive_maximum, true),
    ];
    for (limit_value, exclusive, upper) in bounds {
        if let Some(bound) = limit_value.map(limit) {
            check_bound(errs, at, v, x, bound, exclusive == Some(true), upper);
        }
    }
}

/// `x` (the number `v`) against a `minimum`, or a `maximum` when `upper`.
fn check_bound(
    errs: &mut Vec<FieldError>,
    at: &str,
    v: &Value,
    x: f64,
    bound: f64,
    exclusive: bool,
    upper: bool,
) {
    let beyond = if upper { x > bound } else { x < bound };
    if !(beyond || exclusive && x == bound) {
        return;
    }
    let how = match (upper, exclusive) {
        (false, true) => "greater than",
        (false, false) => "greater than or equal to",
        (true, true) => "less than",
        (true, false) => "less than or equal to",
    };
    let detail = format!("{at} in body should be {how} {}", self::bound(bound));
    invalid(errs, at, v.clone(), detail);
}

fn check_list(
    s: &JSONSchemaProps,
    list: &[Value],
    at: &str,
    old: Option<&Value>,
    errs: &mut Vec<FieldError>,
) {
    if let Some(items) = items(s) {
        for (i, item) in list.iter().enumerate() {
            let old = old_item(s, item, old);
            check(items, item, &path::index(at, i), old, errs);
        }
    }
    let n = list.len() as i64;
    check_count(errs, at, n, (s.min_items, s.max_items), "items");
    if s.unique_items == Some(true) && list.iter().enumerate().any(|(i, a)| list[..i].contains(a)) {
        invalid(
            errs,
            at,
            Value::Array(list.to_vec()),
            format!("{at} in body shouldn't contain duplicates"),
        );
    }
}

/// A list's items or an object's properties against their `min*` and `max*` bounds.
fn check_count(
    errs: &mut Vec<FieldError>,
    at: &str,
    n: i64,
    (min, max): (Option<i64>, Option<i64>),
    what: &str,
) {
    if let Some(min) = min
        && n < min
    {
        let detail = format!("{at} in body should have at least {min} {what}");
        invalid(errs, at, json!(n), detail);
    }
    if let Some(max) = max
        && n > max
    {
        let noun = if max == 1 { "item" } else { "items" };
        let detail = format!("must have at most {max} {noun}");
        errs.push(FieldError::new(
            ErrorType::TooMany,
            at,
            Some(json!(n)),
            detail,
        ));
    }
}

fn check_enum(s: &JSONSchemaProps, v: &Value, at: &str, errs: &mut Vec<FieldError>) {
    let Some(allowed) = &s.enum_ else {
        return;
    };
    if allowed.iter().any(|a| &a.0 == v) {
        return;
    }
    let mut names: Vec<String> = allowed
        .iter()
        .map(|a| match &a.0 {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    names.sort();
    let quoted: Vec<String> = names.iter().map(|n| go_quote(n)).collect();
    errs.push(FieldError::new(
        ErrorType::NotSupported,
        at,
        Some(v.clone()),
        format!("supported values: {}", quoted.join(", ")),
    ));
}

fn check_object(
    s: &JSONSchemaProps,
    map: &serde_json::Map<String, Value>,
    at: &str,
    old: Option<&Value>,
    errs: &mut Vec<FieldError>,
) {
    let n = map.len() as i64;
    check_count(
        errs,
        at,
        n,
        (s.min_properties, s.max_properties),
        "properties",
    );
    let properties = s.properties.as_ref();
    if let Some(other) = additional(s) {
        for (key, value) in map {
            if !properties.is_some_and(|p| p.contains_key(key)) {
                let old = old_key(s, key, old);
                check(other, value, &path::child(at, key), old, errs);
            }
        }
    }
    for (name, schema) in properties.into_iter().flatten() {
        if let Some(value) = map.get(name) {
            check(
                schema,
                value,
                &path::child(at, name),
                old_key(s, name, old),
                errs,
            );
        }
    }
    for name in s.required.iter().flatten() {
        if !map.contains_key(name) {
            errs.push(FieldError::new(
                ErrorType::Required,
                &path::child(at, name),
                None,
                String::new(),
            ));
        }
    }
}
