//! `x-kubernetes-validations`: each rule of a schema evaluated with `self` (and `oldSelf` on an
//! update) at every value the schema describes, its refusal worded as the apiserver words it.

use std::collections::HashMap;
use std::sync::Arc;

use cel::Value as Cel;
use cel::objects::OptionalValue;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, ValidationRule,
};
use serde_json::{Value, json};

use super::errors::{ErrorType, FieldError};
use super::library;
use super::path;
use super::structural::{additional, items};
use super::walk::walk;

/// What the rules of the object's schema `s` and of the schemas inside it say of `obj`; `old`
/// is the object it replaces on an update.
pub(crate) fn check(s: &JSONSchemaProps, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    walk(s, obj, "", old, &mut |s, v, at, old| {
        if v.is_null() {
            return;
        }
        let all_of = s.all_of.iter().flatten();
        for schema in std::iter::once(s).chain(all_of) {
            for rule in schema.x_kubernetes_validations.iter().flatten() {
                errs.extend(evaluate(schema, rule, v, at, old));
            }
        }
    });
    errs
}

/// The schema's type as rule errors name it: `object`, `integer`, ...
fn type_name(s: &JSONSchemaProps) -> Value {
    json!(s.type_.clone().unwrap_or_default())
}

/// One rule on one value: the error it raises, if any.
fn evaluate(
    s: &JSONSchemaProps,
    rule: &ValidationRule,
    v: &Value,
    at: &str,
    old: Option<&Value>,
) -> Option<FieldError> {
    let program = match library::compile(&rule.rule) {
        Ok(p) => p,
        Err(e) => {
            let detail = format!("compilation failed: {e}");
            return Some(FieldError::new(
                ErrorType::Invalid,
                at,
                Some(type_name(s)),
                detail,
            ));
        }
    };
    let references = program.references();
    let transition = references.has_variable("oldSelf");
    let optional = rule.optional_old_self == Some(true);
    if transition && old.is_none() && !optional {
        return None;
    }
    let mut ctx = library::context();
    ctx.add_variable_from_value("self", to_cel(Some(s), v));
    let old_value = old.map(|o| to_cel(Some(s), o));
    if optional {
        let wrapped = match old_value {
            Some(o) => OptionalValue::of(o),
            None => OptionalValue::none(),
        };
        ctx.add_variable_from_value("oldSelf", Cel::Opaque(Arc::new(wrapped)));
    } else if let Some(o) = old_value {
        ctx.add_variable_from_value("oldSelf", o);
    }
    let detail = match program.execute(&ctx) {
        Ok(Cel::Bool(true)) => return None,
        Ok(_) => None,
        Err(e) => {
            let detail = evaluation_error(&e, rule);
            return Some(FieldError::new(
                ErrorType::Invalid,
                at,
                Some(type_name(s)),
                detail,
            ));
        }
    };
    // a rule that held on the old value is not held against an unchanged one (ratcheting)
    if !transition && old.is_some_and(|o| o == v) {
        return None;
    }
    let detail = detail
        .or_else(|| message_expression(rule, &ctx))
        .unwrap_or_else(|| match rule.message.as_deref().map(str::trim) {
            Some(m) if !m.is_empty() => m.to_owned(),
            _ => format!("failed rule: {}", rule_text(rule)),
        });
    let here = match rule
        .field_path
        .as_deref()
        .map(|p| p.trim_start_matches('.'))
    {
        Some(p) if !p.is_empty() => path::child(at, p),
        _ => at.to_owned(),
    };
    let scalar = (!v.is_object() && !v.is_array()).then(|| v.clone());
    Some(refusal(rule.reason.as_deref(), &here, scalar, detail))
}

/// A rule that fails to evaluate, as the apiserver (cel-go) words it.
fn evaluation_error(e: &cel::ExecutionError, rule: &ValidationRule) -> String {
    use cel::ExecutionError as E;
    let text = rule_text(rule);
    let error = match e {
        E::NoSuchKey(key) => format!("no such key: {key}"),
        E::DivisionByZero(_) => "division by zero".to_owned(),
        E::RemainderByZero(_) => "modulus by zero".to_owned(),
        E::Overflow(..) => "integer overflow".to_owned(),
        E::IndexOutOfBounds(Cel::Int(i)) => format!("index out of bounds: {i}"),
        E::FunctionError { message, .. } => message.clone(),
        E::NoSuchOverload(_) => {
            return format!(
                "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {text}"
            );
        }
        other => other.to_string(),
    };
    format!("{error} evaluating rule: {text}")
}

fn rule_text(rule: &ValidationRule) -> String {
    match rule.message.as_deref().map(str::trim) {
        Some(m) if !m.is_empty() => m.to_owned(),
        _ => rule.rule.trim().to_owned(),
    }
}

/// The message a rule's `messageExpression` gives: a non-empty string on one line.
fn message_expression(rule: &ValidationRule, ctx: &cel::Context<'_, '_>) -> Option<String> {
    let source = rule.message_expression.as_deref()?;
    let program = library::compile(source).ok()?;
    match program.execute(ctx) {
        Ok(Cel::String(s)) => {
            let s = s.trim();
            (!s.is_empty() && !s.contains('\n')).then(|| s.to_owned())
        }
        _ => None,
    }
}

/// The error a failed rule raises, by its `reason`.
fn refusal(reason: Option<&str>, at: &str, value: Option<Value>, detail: String) -> FieldError {
    match reason {
        Some("FieldValueForbidden") => FieldError::new(ErrorType::Forbidden, at, None, detail),
        Some("FieldValueRequired") => FieldError::new(ErrorType::Required, at, None, detail),
        Some("FieldValueDuplicate") => {
            FieldError::new(ErrorType::Duplicate, at, value, String::new())
        }
        _ => FieldError::new(ErrorType::Invalid, at, value, detail),
    }
}

/// `v` as a CEL value: integers as `int`, and numbers of a `number` schema as `double`, as the
/// apiserver gives them.
fn to_cel(s: Option<&JSONSchemaProps>, v: &Value) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) if s.is_none_or(|s| s.type_.as_deref() != Some("number")) => Cel::Int(i),
            _ => Cel::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(text) => Cel::String(Arc::new(text.clone())),
        Value::Array(list) => {
            let items = s.and_then(items);
            Cel::List(Arc::new(list.iter().map(|i| to_cel(items, i)).collect()))
        }
        Value::Object(map) => {
            let entries: HashMap<String, Cel> = map
                .iter()
                .map(|(k, item)| {
                    let schema = s.and_then(|s| {
                        s.properties
                            .as_ref()
                            .and_then(|p| p.get(k))
                            .or_else(|| additional(s))
                    });
                    (k.clone(), to_cel(schema, item))
                })
                .collect();
            Cel::from(entries)
        }
    }
}
