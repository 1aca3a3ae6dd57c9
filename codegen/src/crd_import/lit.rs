//! Marker values written so the marker grammar (`markers::parse_line`) reads back exactly the
//! value given: strings raw-quoted with backticks where they can be, else Go double-quoted.

use serde_json::Value;

/// A string as a marker value: `` `text` `` (raw) when it has no backtick and no control
/// character, else a Go double-quoted literal.
pub fn string(s: &str) -> String {
    if !s.contains('`') && !s.chars().any(char::is_control) {
        return format!("`{s}`");
    }
    go_quoted(s)
}

/// A string as a marker value, bare when it is a plain word (letters, digits, `_.-/:`).
pub fn word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-/:".contains(c))
    {
        return s.to_string();
    }
    string(s)
}

/// A Go double-quoted string literal (`strconv.Quote`'s escapes for what needs one; other
/// characters as they are).
pub fn go_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let n = c as u32;
                if n <= 0xffff {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A number as a marker value: integral values without a fraction.
pub fn number(v: &Value) -> String {
    match v.as_f64() {
        Some(f) if v.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => format!("{}", f as i64),
        _ => v.to_string(),
    }
}

/// One item of an `Enum` list: bare when it is plain text that does not read as JSON, else
/// quoted, holding the JSON text of the value when the text alone would be JSON-decoded into
/// something else (`"1"` stays the string `1`).
pub fn enum_item(v: &Value) -> String {
    match v {
        Value::String(s) => {
            let reads_as_json = serde_json::from_str::<Value>(s).is_ok();
            let plain = !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.-/:".contains(c));
            if reads_as_json {
                string(&v.to_string())
            } else if plain {
                s.clone()
            } else {
                string(s)
            }
        }
        other => string(&other.to_string()),
    }
}

/// controller-gen's "any" literal for `+kubebuilder:example` and `+kubebuilder:title`: strings
/// quoted, objects `{key: value, ...}`, lists `{a, b}`, numbers and booleans bare. `None` for
/// what that literal cannot hold (null, an empty list, which reads back as an empty object).
pub fn any(v: &Value) -> Option<String> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => b.to_string(),
        Value::Number(_) => number(v),
        Value::String(s) => go_quoted(s),
        Value::Array(items) if items.is_empty() => return None,
        Value::Array(items) => {
            let parts: Option<Vec<String>> = items.iter().map(any).collect();
            format!("{{{}}}", parts?.join(", "))
        }
        Value::Object(map) => {
            let mut parts = Vec::new();
            for (k, val) in map {
                if k.contains(['"', ':', ',', '{', '}', '\'', '`']) {
                    return None;
                }
                parts.push(format!("{}: {}", go_quoted(k), any(val)?));
            }
            format!("{{{}}}", parts.join(", "))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::{Kind, parse_line};
    use serde_json::json;

    fn read_back(line: &str) -> Value {
        parse_line(line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message))
            .expect("a marker")
            .value
    }

    #[test]
    fn strings_read_back_as_given() {
        for s in [
            "^[a-z]+$",
            r"^\d+(\.\d+)?$",
            "has `backtick` and \"quotes\"",
            "new\nline\ttab",
            "ünïcode ✓",
            "a,b;c",
            " lead and trail ",
        ] {
            let line = format!("+kubebuilder:validation:Pattern={}", string(s));
            assert_eq!(read_back(&line), json!(s), "{line}");
        }
    }

    #[test]
    fn enum_items_read_back_as_given() {
        let values = [
            json!("Always"),
            json!("1"),
            json!("true"),
            json!("with space"),
            json!("a;b"),
            json!(3),
            json!(""),
            json!("\"quoted\""),
        ];
        let items: Vec<String> = values.iter().map(enum_item).collect();
        let line = format!("+kubebuilder:validation:Enum={}", items.join(";"));
        let m = parse_line(&line).expect("parses").expect("marker");
        assert_eq!(m.kind, Kind::Enum);
        let mut props = Default::default();
        crate::schema::apply_markers(&mut props, &[m]).expect("applies");
        let props: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps = props;
        let got: Vec<Value> = props
            .enum_
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.0)
            .collect();
        assert_eq!(got, values.to_vec(), "{line}");
    }

    #[test]
    fn any_literals_read_back_as_given() {
        for v in [
            json!({"a": 1, "b": "two", "c": {"d": true}}),
            json!(["x", "y"]),
            json!("1970-01-01T00:00:00Z"),
            json!(2.5),
        ] {
            let line = format!("+kubebuilder:example={}", any(&v).expect("expressible"));
            assert_eq!(read_back(&line), v, "{line}");
        }
        assert_eq!(any(&json!([])), None);
    }
}
