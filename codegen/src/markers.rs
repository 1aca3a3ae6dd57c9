//! The marker grammar: the parser for `+name:args` doc-comment lines and for the values of the
//! Rust attribute form (`#[k8s(min_length = 4)]`), both checked against the [`registry`].

pub mod docs;
/// Test support: the proof fixture is for the registry's tests and the apiserver test, not for
/// operators, so it is built only for tests and with the `fixture` feature.
#[cfg(any(test, feature = "fixture"))]
pub mod fixture;
pub mod registry;

use crate::diag::{Diagnostic, Loc};
pub use registry::{Arg, Def, Effect, Kind, REGISTRY, Target};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One marker: its registry entry, whether it is the `items:` form, and its value. Single-value
/// markers hold the value itself; markers with named arguments hold an object.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(try_from = "RawMarker", into = "RawMarker")]
pub struct Marker {
    pub kind: Kind,
    /// `kubebuilder:validation:items:<Name>`: applies to the items of a list.
    pub items: bool,
    pub value: serde_json::Value,
    pub loc: Option<Loc>,
}

/// A marker as the IR records it: by its controller-gen name.
#[derive(Serialize, Deserialize)]
struct RawMarker {
    name: String,
    #[serde(default)]
    value: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    loc: Option<Loc>,
}

impl From<Marker> for RawMarker {
    fn from(m: Marker) -> RawMarker {
        RawMarker {
            name: m.name(),
            value: m.value,
            loc: m.loc,
        }
    }
}

impl TryFrom<RawMarker> for Marker {
    type Error = Diagnostic;
    fn try_from(raw: RawMarker) -> Result<Marker, Diagnostic> {
        let (def, items) = registry::by_name(&raw.name)
            .ok_or_else(|| Diagnostic::new(format!("unknown marker `{}`", raw.name)))?;
        Ok(Marker {
            kind: def.kind,
            items,
            value: raw.value,
            loc: raw.loc,
        })
    }
}

impl Marker {
    /// Whether this is a `kind` marker on the item itself (not an `items:` one on its elements).
    pub fn names(&self, kind: Kind) -> bool {
        self.kind == kind && !self.items
    }

    pub fn new(kind: Kind, value: serde_json::Value) -> Marker {
        Marker {
            kind,
            items: false,
            value,
            loc: None,
        }
    }
    /// The controller-gen name, `items:` form included.
    pub fn name(&self) -> String {
        let name = self.kind.name();
        if self.items {
            name.replacen(
                "kubebuilder:validation:",
                "kubebuilder:validation:items:",
                1,
            )
        } else {
            name.to_string()
        }
    }
    /// The registry entry.
    pub fn def(&self) -> &'static Def {
        self.kind.def()
    }
    /// A named argument of a marker with arguments.
    pub fn arg(&self, key: &str) -> Option<&serde_json::Value> {
        self.value.as_object().and_then(|o| o.get(key))
    }
    pub fn arg_str(&self, key: &str) -> Option<&str> {
        self.arg(key).and_then(|v| v.as_str())
    }
    /// A named list argument; a single value counts as a one-item list.
    pub fn arg_list(&self, key: &str) -> Vec<String> {
        match self.arg(key) {
            Some(serde_json::Value::Array(items)) => items.iter().map(value_to_string).collect(),
            Some(v) => vec![value_to_string(v)],
            None => Vec::new(),
        }
    }
}

pub fn value_to_string(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Markers of a given kind, in source order.
pub fn markers_named(markers: &[Marker], kind: Kind) -> impl Iterator<Item = &Marker> + '_ {
    markers.iter().filter(move |m| m.names(kind))
}

/// Whether a flag marker is given and not turned off with `=false`.
pub fn has_marker(markers: &[Marker], kind: Kind) -> bool {
    markers_named(markers, kind).any(|m| m.value != serde_json::Value::Bool(false))
}

/// The last marker of a given kind.
pub fn marker(markers: &[Marker], kind: Kind) -> Option<&Marker> {
    markers_named(markers, kind).last()
}

/// The registry entry of a canonical marker name and whether it is its `items:` form.
pub fn lookup(name: &str) -> Option<(&'static Def, bool)> {
    registry::by_name(name)
}

/// Scaffold markers of kubebuilder and operator-gen: accepted anywhere, they mark where later
/// commands insert code.
fn is_scaffold(name: &str) -> bool {
    name.starts_with("kubebuilder:scaffold:") || name.starts_with("operator-gen:scaffold:")
}

/// The closest of `candidates` to `given`, when one is close enough to be a likely typo: an
/// equal name up to case first, then a bare last `:` segment (`validation:nullable` for
/// `nullable`), then the best Jaro-Winkler score of at least `threshold`.
pub fn closest(
    given: &str,
    candidates: impl Iterator<Item = String>,
    threshold: f64,
) -> Option<String> {
    // past 256 characters no name can score high against it; comparing costs
    // |given| x |candidate| per candidate, which a long garbled line would pay for nothing
    if given.len() > 256 {
        return None;
    }
    let lower = given.to_ascii_lowercase();
    let last = lower.rsplit(':').next().unwrap_or_default().to_string();
    let mut best: Option<(f64, String)> = None;
    let mut bare: Option<String> = None;
    for candidate in candidates {
        if bare.is_none() && candidate.eq_ignore_ascii_case(&last) {
            bare = Some(candidate.clone());
        }
        let score = if candidate.eq_ignore_ascii_case(given) {
            2.0
        } else {
            strsim::jaro_winkler(&lower, &candidate.to_ascii_lowercase())
        };
        if best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, candidate));
        }
    }
    if let Some(b) = bare {
        return Some(b);
    }
    best.filter(|(s, _)| *s >= threshold).map(|(_, n)| n)
}

/// The closest known marker name, when one is close enough to be a likely typo.
pub fn suggest(name: &str) -> Option<String> {
    closest(name, registry::all_names(), 0.85)
}

fn err<T>(message: impl Into<String>) -> Result<T, Diagnostic> {
    Err(Diagnostic::new(message))
}

/// Parses one doc-comment line that starts with `+` (the `+` included). `Ok(None)` means a
/// scaffold marker. A marker without effect in Rust is refused with the registry's reason.
pub fn parse_line(line: &str) -> Result<Option<Marker>, Diagnostic> {
    let body = line.trim().trim_start_matches('+');
    if body.is_empty() {
        return err("empty marker `+`: write a marker name after `+`, or drop the line");
    }
    if is_scaffold(body) {
        return Ok(None);
    }
    // the name is the longest known prefix that ends at a `:` or `=` before the first `=`
    let head_end = body.find('=').unwrap_or(body.len());
    let mut found: Option<(usize, &'static Def, bool)> = None;
    for (i, c) in body[..head_end]
        .char_indices()
        .chain(std::iter::once((head_end, '=')))
    {
        if (c == ':' || i == head_end)
            && let Some((def, items)) = lookup(&body[..i])
        {
            found = Some((i, def, items));
        }
    }
    let Some((end, def, items)) = found else {
        let shown = &body[..head_end];
        return match suggest(shown) {
            Some(s) => err(format!("unknown marker `+{shown}`: did you mean `+{s}`?")),
            None => err(format!(
                "unknown marker `+{shown}`: see the marker reference, https://github.com/operator-gen/operator-gen/blob/main/docs/src/reference/markers.md"
            )),
        };
    };
    let name = &body[..end];
    if let Effect::None(reason) = def.effect {
        return err(format!("marker `+{name}` has no effect in Rust: {reason}"));
    }
    let value = parse_value(name, def.arg, &body[end..])?;
    Ok(Some(Marker {
        kind: def.kind,
        items,
        value,
        loc: None,
    }))
}

fn parse_value(name: &str, arg: Arg, rest: &str) -> Result<Value, Diagnostic> {
    match arg {
        Arg::Flag => match rest {
            "" => Ok(Value::Bool(true)),
            "=true" => Ok(Value::Bool(true)),
            "=false" => Ok(Value::Bool(false)),
            _ => err(format!("marker `+{name}` takes no value: write `+{name}`")),
        },
        Arg::Args(keys) => {
            let rest = match rest.strip_prefix(':') {
                Some(r) => r,
                None if rest.is_empty() => "",
                None => {
                    return err(format!(
                        "marker `+{name}` takes named arguments: write `+{name}:key=value,...`"
                    ));
                }
            };
            parse_args(name, keys, rest)
        }
        single => {
            let v = rest
                .strip_prefix(":=")
                .or_else(|| rest.strip_prefix('='))
                .ok_or_else(|| {
                    Diagnostic::new(format!(
                        "marker `+{name}` needs a value: write `+{name}=<value>`"
                    ))
                })?;
            parse_single(name, single, v, true)
        }
    }
}

fn parse_single(name: &str, arg: Arg, raw: &str, whole: bool) -> Result<Value, Diagnostic> {
    let raw_t = raw.trim();
    match arg {
        Arg::Bool | Arg::Flag => match raw_t {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => err(format!("marker `+{name}` expects true or false, found `{raw_t}`")),
        },
        Arg::Int => raw_t
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| err(format!("marker `+{name}` expects an integer, found `{raw_t}`"))),
        Arg::Float => {
            let f: f64 = raw_t
                .parse()
                .or_else(|_| err(format!("marker `+{name}` expects a number, found `{raw_t}`")))?;
            Ok(number(f))
        }
        Arg::Str => Ok(Value::String(unquote_whole(raw_t, whole)?)),
        Arg::List => Ok(Value::Array(split_list(raw_t)?.into_iter().map(Value::String).collect())),
        Arg::Any => parse_any(raw_t),
        Arg::Json => serde_json::from_str(raw_t).or_else(|_| {
            if raw_t.starts_with("ref(") {
                Ok(Value::Null)
            } else {
                err(format!("marker `+{name}` expects a JSON value, found `{raw_t}`: quote strings as \"text\""))
            }
        }),
        Arg::Args(_) => err(format!("marker `+{name}` cannot take a single value")),
    }
}

/// A JSON number, integral values as integers so they print as `1`, not `1.0`.
pub fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

fn unquote_whole(raw: &str, whole: bool) -> Result<String, Diagnostic> {
    match raw.chars().next() {
        Some(q @ ('"' | '\'' | '`')) => {
            let (s, used) = read_quoted(raw, q)?;
            if whole && raw[used..].trim() != "" {
                return err(format!(
                    "unexpected text after quoted string: `{}`",
                    &raw[used..]
                ));
            }
            Ok(s)
        }
        _ => Ok(raw.to_string()),
    }
}

/// Reads a quoted string starting at byte 0; returns it and the bytes consumed.
fn read_quoted(raw: &str, q: char) -> Result<(String, usize), Diagnostic> {
    if q == '"' {
        // the offset into the value is no place in the source: the caller locates the marker
        return crate::unquote::double_quoted(raw).map_err(|e| Diagnostic::new(e.message));
    }
    // Backtick and single-quoted strings are raw: backslashes stay.
    let mut out = String::new();
    for (i, c) in raw.char_indices().skip(1) {
        if c == q {
            return Ok((out, i + c.len_utf8()));
        }
        out.push(c);
    }
    err(format!(
        "unterminated string starting with {q}: close it with {q}"
    ))
}

/// Splits `a;b;c` or `{a,b,c}` into items, honouring quotes.
fn split_list(raw: &str) -> Result<Vec<String>, Diagnostic> {
    let (inner, sep) = match raw.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        Some(inner) => (inner, ','),
        None => (raw, ';'),
    };
    let mut items = Vec::new();
    let mut rest = inner.trim();
    if rest.is_empty() {
        return Ok(items);
    }
    loop {
        let (item, used) = match rest.chars().next() {
            Some(q @ ('"' | '\'' | '`')) => read_quoted(rest, q)?,
            _ => {
                let end = rest.find(sep).unwrap_or(rest.len());
                (rest[..end].trim().to_string(), end)
            }
        };
        items.push(item);
        rest = rest[used..].trim_start();
        match rest.strip_prefix(sep) {
            Some(r) => rest = r.trim_start(),
            None if rest.is_empty() => break,
            None => {
                return err(format!(
                    "expected `{sep}` between list items, found `{rest}`"
                ));
            }
        }
    }
    Ok(items)
}

/// Named arguments `k=v,k2="a,b",k3=x;y`.
fn parse_args(name: &str, keys: &[(&str, Arg)], raw: &str) -> Result<Value, Diagnostic> {
    let mut map = Map::new();
    let mut rest = raw.trim();
    while !rest.is_empty() {
        let eq = rest.find('=').unwrap_or(rest.len());
        let comma = rest.find(',').unwrap_or(rest.len());
        let key = rest[..eq.min(comma)].trim();
        let Some((_, arg)) = keys.iter().find(|(k, _)| *k == key) else {
            let known: Vec<&str> = keys.iter().map(|(k, _)| *k).collect();
            return match closest(key, known.iter().map(|k| k.to_string()), 0.8) {
                Some(k) => err(format!(
                    "marker `+{name}` has no argument `{key}`: did you mean `{k}`?"
                )),
                None => err(format!(
                    "marker `+{name}` has no argument `{key}`: it takes {}",
                    known.join(", ")
                )),
            };
        };
        if map.contains_key(key) {
            return err(format!(
                "marker `+{name}` repeats argument `{key}`: give it once"
            ));
        }
        if eq >= comma {
            // a bare key: a flag
            if !matches!(arg, Arg::Bool | Arg::Flag) {
                return err(format!(
                    "argument `{key}` of `+{name}` needs a value: write `{key}=<value>`"
                ));
            }
            map.insert(key.to_string(), Value::Bool(true));
            rest = rest[comma..].trim_start_matches(',').trim_start();
            continue;
        }
        let after = &rest[eq + 1..];
        let (raw_value, used) = take_arg_value(after)?;
        let value = match arg {
            Arg::Str => Value::String(unquote_whole(raw_value.trim(), true)?),
            Arg::List => Value::Array(
                split_list(&raw_value)?
                    .into_iter()
                    .map(Value::String)
                    .collect(),
            ),
            other => parse_single(name, *other, &raw_value, true)?,
        };
        map.insert(key.to_string(), value);
        rest = after[used..].trim_start();
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start();
        } else if !rest.is_empty() {
            return err(format!(
                "expected `,` between arguments of `+{name}`, found `{rest}`"
            ));
        }
    }
    Ok(Value::Object(map))
}

/// One argument value as written: quoted strings, `{...}` lists and bare text up to the next
/// `,`, joined by `;` into lists.
fn take_arg_value(raw: &str) -> Result<(String, usize), Diagnostic> {
    let mut used = 0;
    loop {
        let rest = &raw[used..];
        match rest.chars().next() {
            Some(q @ ('"' | '\'' | '`')) => used += read_quoted(rest, q)?.1,
            Some('{') => {
                used += matching_brace(rest).ok_or_else(|| {
                    Diagnostic::new("unbalanced `{` in marker value: close it with `}`")
                })? + 1
            }
            _ => used += rest.find([',', ';']).unwrap_or(rest.len()),
        }
        if raw[used..].starts_with(';') {
            used += 1;
        } else {
            return Ok((raw[..used].to_string(), used));
        }
    }
}

fn matching_brace(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '{') => depth += 1,
            (None, '}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// controller-gen's "any" literal.
pub fn parse_any(raw: &str) -> Result<Value, Diagnostic> {
    let raw = raw.trim();
    if let Some(inner) = raw.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        let parts = split_top(inner, ',')?;
        if parts.iter().all(|p| p.trim().is_empty()) {
            return Ok(Value::Object(Map::new()));
        }
        let is_object = parts.iter().all(|p| top_colon(p).is_some());
        if is_object {
            let mut map = Map::new();
            for p in parts {
                let c = top_colon(&p).unwrap_or(0);
                let key = p[..c].trim().trim_matches('"').to_string();
                map.insert(key, parse_any(&p[c + 1..])?);
            }
            return Ok(Value::Object(map));
        }
        return parts
            .iter()
            .map(|p| parse_any(p))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if let Some(q @ ('"' | '\'' | '`')) = raw.chars().next() {
        let (s, used) = read_quoted(raw, q)?;
        if raw[used..].trim().is_empty() {
            return Ok(Value::String(s));
        }
    }
    if raw.contains(';') {
        return split_list(raw)
            .map(|items| Value::Array(items.into_iter().map(|i| scalar(&i)).collect()));
    }
    Ok(scalar(raw))
}

fn scalar(raw: &str) -> Value {
    match raw {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => {
            if let Ok(i) = raw.parse::<i64>() {
                Value::from(i)
            } else if let Ok(f) = raw.parse::<f64>() {
                if raw
                    .chars()
                    .all(|c| c.is_ascii_digit() || "+-.eE".contains(c))
                {
                    number(f)
                } else {
                    Value::String(raw.to_string())
                }
            } else {
                Value::String(raw.to_string())
            }
        }
    }
}

fn split_top(s: &str, sep: char) -> Result<Vec<String>, Diagnostic> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut cur = String::new();
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c)
            }
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'' | '`') => {
                quote = Some(c);
                cur.push(c)
            }
            (None, '{') => {
                depth += 1;
                cur.push(c)
            }
            (None, '}') => {
                depth -= 1;
                cur.push(c)
            }
            (None, c) if c == sep && depth == 0 => parts.push(std::mem::take(&mut cur)),
            (None, c) => cur.push(c),
        }
    }
    if quote.is_some() || depth != 0 {
        return err("unbalanced braces or quotes in marker value");
    }
    parts.push(cur);
    Ok(parts)
}

fn top_colon(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '{') => depth += 1,
            (None, '}') => depth -= 1,
            (None, ':') if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// The registry entry an attribute key (`min_length`, `items_maximum`) names, and whether it is
/// the `items_` form.
pub fn attribute_name(key: &str) -> Option<(&'static Def, bool)> {
    registry::by_key(key)
}

/// Argument names of the attribute form are snake_case; marker arguments are controller-gen's.
pub fn attribute_arg_name(def: &Def, key: &str) -> String {
    let Arg::Args(keys) = def.arg else {
        return key.to_string();
    };
    let flat = key.replace('_', "").to_ascii_lowercase();
    keys.iter()
        .find(|(k, _)| k.to_ascii_lowercase() == flat)
        .map(|(k, _)| k.to_string())
        .unwrap_or_else(|| key.to_string())
}

/// Checks an attribute-form value of the marker `name` against its shape and normalises it.
pub fn check_value(name: &str, arg: Arg, value: Value) -> Result<Value, Diagnostic> {
    let ok = match (arg, &value) {
        (Arg::Flag | Arg::Bool, Value::Bool(_)) => true,
        (Arg::Int, Value::Number(n)) => n.is_i64(),
        (Arg::Float, Value::Number(_)) => true,
        (Arg::Str, Value::String(_)) => true,
        (Arg::List, Value::Array(_)) => true,
        (Arg::List, Value::String(s)) => return Ok(Value::Array(vec![Value::String(s.clone())])),
        (Arg::Any | Arg::Json, _) => true,
        (Arg::Args(keys), Value::Object(map)) => {
            for (k, v) in map {
                let Some((_, a)) = keys.iter().find(|(kk, _)| kk == k) else {
                    return err(format!("`{name}` has no argument `{k}`"));
                };
                check_value_shape(*a, v, name, k)?;
            }
            true
        }
        _ => false,
    };
    if ok {
        if let (Arg::Float, Value::Number(n)) = (arg, &value) {
            return Ok(number(n.as_f64().unwrap_or_default()));
        }
        Ok(value)
    } else {
        err(format!("`{name}` expects {}", describe(arg)))
    }
}

fn check_value_shape(arg: Arg, v: &Value, name: &str, key: &str) -> Result<(), Diagnostic> {
    let ok = matches!(
        (arg, v),
        (Arg::Bool | Arg::Flag, Value::Bool(_))
            | (Arg::Int, Value::Number(_))
            | (Arg::Str, Value::String(_))
            | (Arg::List, Value::Array(_))
            | (Arg::List, Value::String(_))
    );
    if ok {
        Ok(())
    } else {
        err(format!(
            "argument `{key}` of `{name}` expects {}",
            describe(arg)
        ))
    }
}

fn describe(arg: Arg) -> &'static str {
    match arg {
        Arg::Flag | Arg::Bool => "a bool",
        Arg::Int => "an integer",
        Arg::Float => "a number",
        Arg::Str => "a string",
        Arg::List => "a list of strings",
        Arg::Any | Arg::Json => "a value",
        Arg::Args(_) => "named arguments",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(line: &str) -> (String, Value) {
        let m = parse_line(line).expect("parses").expect("has effect");
        (m.name(), m.value)
    }

    #[test]
    fn single_values() {
        assert_eq!(
            p("+kubebuilder:validation:Minimum=1"),
            ("kubebuilder:validation:Minimum".into(), json!(1))
        );
        assert_eq!(p("+kubebuilder:validation:MultipleOf=0.5").1, json!(0.5));
        assert_eq!(p("+listType=map"), ("listType".into(), json!("map")));
        assert_eq!(
            p("+kubebuilder:validation:Enum=Allow;Forbid;Replace").1,
            json!(["Allow", "Forbid", "Replace"])
        );
        assert_eq!(
            p("+kubebuilder:validation:items:MaxLength=3").0,
            "kubebuilder:validation:items:MaxLength"
        );
        assert_eq!(p("+optional"), ("optional".into(), json!(true)));
        assert_eq!(
            p("+kubebuilder:validation:Pattern=`^a,b$`").1,
            json!("^a,b$")
        );
        assert_eq!(p("+groupName=").1, json!(""));
    }

    #[test]
    fn any_literals() {
        assert_eq!(parse_any("{a,b}").expect("ok"), json!(["a", "b"]));
        assert_eq!(parse_any("{}").expect("ok"), json!({}));
        assert_eq!(parse_any("forty-two").expect("ok"), json!("forty-two"));
        assert_eq!(
            parse_any("{{nested: {foo: \"baz\", bar: true}},{nested: {bar: false}}}").expect("ok"),
            json!([{"nested": {"foo": "baz", "bar": true}}, {"nested": {"bar": false}}])
        );
        assert_eq!(p("+default=\"forty-two\"").1, json!("forty-two"));
        assert_eq!(p("+kubebuilder:title=\"124\"").1, json!("124"));
    }

    #[test]
    fn named_arguments() {
        let (name, v) =
            p("+kubebuilder:rbac:groups=apps;\"\",resources=deployments,verbs=get;list;watch");
        assert_eq!(name, "kubebuilder:rbac");
        assert_eq!(
            v,
            json!({"groups": ["apps", ""], "resources": ["deployments"], "verbs": ["get", "list", "watch"]})
        );
        let (_, v) = p(
            "+kubebuilder:printcolumn:name=\"Age\",type=\"date\",JSONPath=\".metadata.creationTimestamp\",priority=1",
        );
        assert_eq!(v["JSONPath"], json!(".metadata.creationTimestamp"));
        assert_eq!(v["priority"], json!(1));
        let (_, v) =
            p("+kubebuilder:validation:XValidation:rule=\"self.a, self.b\",message=\"no\"");
        assert_eq!(v["rule"], json!("self.a, self.b"));
        let (_, v) = p("+kubebuilder:metadata:annotations=\"a=b\";\"c=d\"");
        assert_eq!(v["annotations"], json!(["a=b", "c=d"]));
        let (_, v) = p("+kubebuilder:rbac:groups=\"\",resources=me,verbs=list");
        assert_eq!(v["groups"], json!([""]));
        assert_eq!(
            p("+kubebuilder:subresource:status").0,
            "kubebuilder:subresource:status"
        );
        let (name, v) =
            p("+kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas");
        assert_eq!(name, "kubebuilder:subresource:scale");
        assert_eq!(v["specpath"], json!(".spec.replicas"));
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse_line("+kubebuilder:validation:Minimun=1").expect_err("typo");
        assert!(
            e.message
                .contains("did you mean `+kubebuilder:validation:Minimum`"),
            "{}",
            e.message
        );
        let e = parse_line("+kubebuilder:validation:nullable").expect_err("lowercase");
        assert!(
            e.message.contains("did you mean `+nullable`"),
            "{}",
            e.message
        );
        let e = parse_line("+kubebuilder:validation:Minimum=abc").expect_err("bad number");
        assert!(e.message.contains("expects a number"), "{}", e.message);
        let e = parse_line("+kubebuilder:rbac:group=apps,verbs=get").expect_err("bad arg");
        assert!(e.message.contains("did you mean `groups`"), "{}", e.message);
        assert!(parse_line("+kubebuilder:validation:Pattern=\"abc").is_err());
        assert_eq!(
            parse_line("+kubebuilder:scaffold:imports").expect("ok"),
            None
        );
        let e = parse_line("+kubebuilder:object:generate=true").expect_err("no effect");
        assert_eq!(
            e.message,
            "marker `+kubebuilder:object:generate` has no effect in Rust: Rust types derive Clone instead of generated deep copies; drop the marker"
        );
        let e = parse_line("+kubebuilder:object:root=true").expect_err("no effect");
        assert!(
            e.message
                .contains("#[derive(CustomResource)] on the spec struct generates the root type"),
            "{}",
            e.message
        );
    }

    #[test]
    fn attribute_names_map_to_markers() {
        let name = |key: &str| {
            attribute_name(key).map(|(d, items)| {
                Marker {
                    kind: d.kind,
                    items,
                    value: Value::Null,
                    loc: None,
                }
                .name()
            })
        };
        assert_eq!(
            name("min_length").as_deref(),
            Some("kubebuilder:validation:MinLength")
        );
        assert_eq!(
            name("items_minimum").as_deref(),
            Some("kubebuilder:validation:items:Minimum")
        );
        assert_eq!(
            name("x_validation").as_deref(),
            Some("kubebuilder:validation:XValidation")
        );
        assert_eq!(name("list_type").as_deref(), Some("listType"));
        assert_eq!(name("enum_type").as_deref(), Some("k8s:enum"));
        assert_eq!(
            name("non_namespaced").as_deref(),
            Some("genclient:nonNamespaced")
        );
        assert_eq!(name("bogus"), None);
        assert_eq!(
            attribute_arg_name(Kind::PrintColumn.def(), "json_path"),
            "JSONPath"
        );
    }
}
