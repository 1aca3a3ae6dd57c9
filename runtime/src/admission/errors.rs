//! Field errors and the `Invalid` refusal, worded as the apiserver words them (apimachinery's
//! `field.Error` and `errors.NewInvalid`).

use std::fmt;

use serde_json::{Value, json};

/// What is wrong with a field: the apiserver's `field.ErrorType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// A required field is missing.
    Required,
    /// A value that must be unique is repeated.
    Duplicate,
    /// A value breaks a rule.
    Invalid,
    /// A value is of the wrong type.
    TypeInvalid,
    /// A value is not one of the enumerated ones.
    NotSupported,
    /// A value is not allowed here.
    Forbidden,
    /// A string is too long.
    TooLong,
    /// A list or object has too many items.
    TooMany,
}

impl ErrorType {
    /// The cause's `reason` in a `Status`: `FieldValueInvalid`, ...
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
        }
    }

    /// How a message names it: `Invalid value`, `Required value`, ...
    pub fn label(self) -> &'static str {
        match self {
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
        }
    }
}

/// One thing wrong with an object: a `details.causes` entry of the refusal.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// What is wrong.
    pub kind: ErrorType,
    /// Where: `spec.replicas`, `spec.items[0].name`, `spec.labels[app]`; `<nil>` for the root.
    pub field: String,
    /// The value the message shows, `None` when it leaves it out.
    pub value: Option<Value>,
    /// Why, after the value.
    pub detail: String,
}

impl FieldError {
    pub(crate) fn new(kind: ErrorType, field: &str, value: Option<Value>, detail: String) -> Self {
        FieldError {
            kind,
            field: if field.is_empty() {
                "<nil>".into()
            } else {
                field.into()
            },
            value,
            detail,
        }
    }

    /// The message without the field: `Invalid value: 3: must be even`.
    pub fn body(&self) -> String {
        let mut s = self.kind.label().to_owned();
        let shows_value = !matches!(
            self.kind,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong
        );
        if shows_value && let Some(value) = &self.value {
            s.push_str(": ");
            s.push_str(&go_value(value));
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// A value as Go's `%v`/`%q`/`json.Marshal` print it in a field error.
pub(crate) fn go_value(value: &Value) -> String {
    match value {
        Value::String(s) => go_quote(s),
        Value::Number(n) => number(n),
        Value::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// A number as Go's `%v` prints an int64 or a float64.
pub(crate) fn number(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
        _ => n.to_string(),
    }
}

/// A string as Go's `%q` quotes it (the common escapes).
pub(crate) fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// An object refused: the apiserver's 422 `Invalid` with its causes.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// The kind's group, `webapp.example.com`.
    pub group: String,
    /// The kind, `Guestbook`.
    pub kind: String,
    /// The object's name.
    pub name: String,
    /// What is wrong, in the order found.
    pub causes: Vec<FieldError>,
}

impl Invalid {
    /// `Guestbook.webapp.example.com "x" is invalid: spec.size: Invalid value: ...`; several
    /// causes are listed in brackets, as the apiserver aggregates them.
    pub fn message(&self) -> String {
        let qualified = if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        };
        let mut seen = Vec::new();
        for cause in &self.causes {
            let text = cause.to_string();
            if !seen.contains(&text) {
                seen.push(text);
            }
        }
        let all = match seen.as_slice() {
            [] => return format!("{qualified} {} is invalid", go_quote(&self.name)),
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        format!("{qualified} {} is invalid: {all}", go_quote(&self.name))
    }

    /// The `metav1.Status` the apiserver answers.
    pub fn status(&self) -> Value {
        let causes: Vec<Value> = self
            .causes
            .iter()
            .map(|c| json!({ "reason": c.kind.reason(), "message": c.body(), "field": c.field }))
            .collect();
        let mut details = json!({ "name": self.name, "kind": self.kind, "causes": causes });
        if !self.group.is_empty() {
            details["group"] = json!(self.group);
        }
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.message(), "reason": "Invalid", "details": details, "code": 422,
        })
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Invalid {}
