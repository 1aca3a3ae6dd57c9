//! The marker grammar: controller-gen's catalog, the parser for `+name:args` doc-comment lines,
//! and the table that maps the Rust attribute form (`#[k8s(min_length = 4)]`) onto it.

use serde_json::{Map, Value};

/// Where a marker may stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A module (`//!` lines) or anywhere: package-level markers such as rbac and webhook.
    Package,
    /// The spec struct of a custom resource, or any named type.
    Type,
    Field,
}

/// The shape of a marker's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// No value; `=false` turns it off.
    Flag,
    Bool,
    Int,
    Float,
    Str,
    /// `a;b;c` or `{a,b,c}`.
    List,
    /// controller-gen's "any" literal: objects, lists, numbers, bools, strings.
    Any,
    /// A JSON document (`+default=`).
    Json,
    /// Named arguments `k=v,k2=v2` with the given keys and shapes.
    Args(&'static [(&'static str, Arg)]),
    /// Accepted and without effect on manifests (deepcopy, apply configurations, scaffold markers).
    Ignored,
}

pub struct Spec {
    pub name: &'static str,
    pub targets: &'static [Target],
    pub arg: Arg,
}

const P: &[Target] = &[Target::Package];
const T: &[Target] = &[Target::Type];
const F: &[Target] = &[Target::Field];
const TF: &[Target] = &[Target::Type, Target::Field];
const PTF: &[Target] = &[Target::Package, Target::Type, Target::Field];

const RBAC: &[(&str, Arg)] = &[
    ("groups", Arg::List),
    ("resources", Arg::List),
    ("resourceNames", Arg::List),
    ("verbs", Arg::List),
    ("urls", Arg::List),
    ("namespace", Arg::Str),
    ("roleName", Arg::Str),
];
const WEBHOOK: &[(&str, Arg)] = &[
    ("mutating", Arg::Bool),
    ("failurePolicy", Arg::Str),
    ("matchPolicy", Arg::Str),
    ("sideEffects", Arg::Str),
    ("timeoutSeconds", Arg::Int),
    ("groups", Arg::List),
    ("resources", Arg::List),
    ("verbs", Arg::List),
    ("versions", Arg::List),
    ("name", Arg::Str),
    ("path", Arg::Str),
    ("url", Arg::Str),
    ("serviceName", Arg::Str),
    ("serviceNamespace", Arg::Str),
    ("servicePort", Arg::Int),
    ("admissionReviewVersions", Arg::List),
    ("reinvocationPolicy", Arg::Str),
    ("webhookVersions", Arg::List),
    ("patch", Arg::Str),
];
const XVALIDATION: &[(&str, Arg)] = &[
    ("rule", Arg::Str),
    ("message", Arg::Str),
    ("messageExpression", Arg::Str),
    ("reason", Arg::Str),
    ("fieldPath", Arg::Str),
    ("optionalOldSelf", Arg::Bool),
];

/// Validation markers that also exist as `kubebuilder:validation:items:<Name>`.
pub const VALIDATIONS: &[(&str, Arg)] = &[
    ("Minimum", Arg::Float),
    ("Maximum", Arg::Float),
    ("ExclusiveMinimum", Arg::Bool),
    ("ExclusiveMaximum", Arg::Bool),
    ("MultipleOf", Arg::Float),
    ("MinLength", Arg::Int),
    ("MaxLength", Arg::Int),
    ("Pattern", Arg::Str),
    ("Enum", Arg::List),
    ("Format", Arg::Str),
    ("MinItems", Arg::Int),
    ("MaxItems", Arg::Int),
    ("UniqueItems", Arg::Bool),
    ("MinProperties", Arg::Int),
    ("MaxProperties", Arg::Int),
    ("Type", Arg::Str),
    ("XValidation", Arg::Args(XVALIDATION)),
    ("XEmbeddedResource", Arg::Flag),
    ("XIntOrString", Arg::Flag),
    ("XPreserveUnknownFields", Arg::Flag),
    ("Nullable", Arg::Flag),
];

macro_rules! spec {
    ($name:expr, $targets:expr, $arg:expr) => {
        Spec {
            name: $name,
            targets: $targets,
            arg: $arg,
        }
    };
}

/// Every marker that is not a `kubebuilder:validation:` one (those come from [`VALIDATIONS`]).
pub const CATALOG: &[Spec] = &[
    spec!("groupName", P, Arg::Str),
    spec!("versionName", P, Arg::Str),
    spec!("kubebuilder:skip", P, Arg::Flag),
    spec!("kubebuilder:object:generate", PTF, Arg::Ignored),
    spec!("kubebuilder:object:root", T, Arg::Flag),
    spec!("kubebuilder:ac:generate", PTF, Arg::Ignored),
    spec!("kubebuilder:ac:output:package", P, Arg::Ignored),
    spec!("k8s:deepcopy-gen", PTF, Arg::Ignored),
    spec!("k8s:deepcopy-gen:interfaces", T, Arg::Ignored),
    spec!("k8s:openapi-gen", PTF, Arg::Ignored),
    spec!("kubebuilder:rbac", PTF, Arg::Args(RBAC)),
    spec!("kubebuilder:webhook", PTF, Arg::Args(WEBHOOK)),
    spec!(
        "kubebuilder:webhookconfiguration",
        PTF,
        Arg::Args(&[("mutating", Arg::Bool), ("name", Arg::Str)])
    ),
    spec!(
        "kubebuilder:resource",
        T,
        Arg::Args(&[
            ("path", Arg::Str),
            ("scope", Arg::Str),
            ("shortName", Arg::List),
            ("categories", Arg::List),
            ("singular", Arg::Str),
        ])
    ),
    spec!("kubebuilder:subresource:status", T, Arg::Flag),
    spec!(
        "kubebuilder:subresource:scale",
        T,
        Arg::Args(&[
            ("specpath", Arg::Str),
            ("statuspath", Arg::Str),
            ("selectorpath", Arg::Str)
        ])
    ),
    spec!(
        "kubebuilder:printcolumn",
        T,
        Arg::Args(&[
            ("name", Arg::Str),
            ("type", Arg::Str),
            ("JSONPath", Arg::Str),
            ("description", Arg::Str),
            ("format", Arg::Str),
            ("priority", Arg::Int),
        ])
    ),
    spec!("kubebuilder:storageversion", T, Arg::Flag),
    spec!(
        "kubebuilder:deprecatedversion",
        T,
        Arg::Args(&[("warning", Arg::Str)])
    ),
    spec!("kubebuilder:skipversion", T, Arg::Flag),
    spec!("kubebuilder:unservedversion", T, Arg::Flag),
    spec!(
        "kubebuilder:selectablefield",
        T,
        Arg::Args(&[("JSONPath", Arg::Str)])
    ),
    spec!(
        "kubebuilder:metadata",
        T,
        Arg::Args(&[("annotations", Arg::List), ("labels", Arg::List)])
    ),
    spec!(
        "kubebuilder:externalDocs",
        TF,
        Arg::Args(&[("url", Arg::Str), ("description", Arg::Str)])
    ),
    spec!("kubebuilder:validation:Required", PTF, Arg::Flag),
    spec!("kubebuilder:validation:Optional", PTF, Arg::Flag),
    spec!("kubebuilder:validation:Schemaless", F, Arg::Flag),
    spec!("kubebuilder:validation:EmbeddedResource", F, Arg::Flag),
    spec!("kubebuilder:validation:AtMostOneOf", T, Arg::List),
    spec!("kubebuilder:validation:ExactlyOneOf", T, Arg::List),
    spec!("kubebuilder:validation:AtLeastOneOf", T, Arg::List),
    spec!("kubebuilder:pruning:PreserveUnknownFields", TF, Arg::Flag),
    spec!("kubebuilder:default", TF, Arg::Any),
    spec!("default", TF, Arg::Json),
    spec!("kubebuilder:example", TF, Arg::Any),
    spec!("kubebuilder:title", TF, Arg::Any),
    spec!("optional", F, Arg::Flag),
    spec!("required", F, Arg::Flag),
    spec!("k8s:optional", F, Arg::Flag),
    spec!("k8s:required", F, Arg::Flag),
    spec!("nullable", F, Arg::Flag),
    spec!("listType", TF, Arg::Str),
    spec!("listMapKey", TF, Arg::Str),
    spec!("k8s:listType", TF, Arg::Str),
    spec!("k8s:listMapKey", TF, Arg::Str),
    spec!("mapType", TF, Arg::Str),
    spec!("structType", TF, Arg::Str),
    spec!("k8s:enum", T, Arg::Flag),
    spec!("k8s:immutable", F, Arg::Flag),
    spec!("genclient", T, Arg::Flag),
    spec!("genclient:nonNamespaced", T, Arg::Flag),
    spec!("genclient:noStatus", T, Arg::Flag),
    spec!("genclient:noVerbs", T, Arg::Flag),
    spec!("genclient:readonly", T, Arg::Flag),
    spec!("genclient:onlyVerbs", T, Arg::List),
    spec!("genclient:skipVerbs", T, Arg::List),
];

/// The value shape and allowed targets of a canonical marker name.
pub fn lookup(name: &str) -> Option<(Arg, &'static [Target])> {
    if let Some(s) = CATALOG.iter().find(|s| s.name == name) {
        return Some((s.arg, s.targets));
    }
    let rest = name.strip_prefix("kubebuilder:validation:")?;
    let rest = rest.strip_prefix("items:").unwrap_or(rest);
    VALIDATIONS
        .iter()
        .find(|(n, _)| *n == rest)
        .map(|(_, a)| (*a, TF))
}

/// Markers that may be given more than once, each occurrence adding to the result.
pub fn repeatable(name: &str) -> bool {
    let short = name
        .strip_prefix("kubebuilder:validation:items:")
        .or_else(|| name.strip_prefix("kubebuilder:validation:"))
        .unwrap_or(name);
    matches!(
        short,
        "XValidation"
            | "AtMostOneOf"
            | "ExactlyOneOf"
            | "AtLeastOneOf"
            | "listMapKey"
            | "k8s:listMapKey"
            | "kubebuilder:printcolumn"
            | "kubebuilder:selectablefield"
            | "kubebuilder:metadata"
            | "kubebuilder:rbac"
            | "kubebuilder:webhook"
            | "kubebuilder:webhookconfiguration"
    )
}

/// Scaffold markers of kubebuilder and operator-gen: accepted anywhere, no effect.
fn is_scaffold(name: &str) -> bool {
    name.starts_with("kubebuilder:scaffold:") || name.starts_with("operator-gen:scaffold:")
}

fn all_names() -> Vec<String> {
    let mut names: Vec<String> = CATALOG.iter().map(|s| s.name.to_string()).collect();
    for (v, _) in VALIDATIONS {
        names.push(format!("kubebuilder:validation:{v}"));
        names.push(format!("kubebuilder:validation:items:{v}"));
    }
    names
}

/// The closest known marker name, when one is close enough to be a likely typo.
pub fn suggest(name: &str) -> Option<String> {
    // past 256 characters no marker name can score 0.85 against it; comparing costs
    // |name| x |candidate| per candidate, which a long garbled line would pay for nothing
    if name.len() > 256 {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    let mut best: Option<(f64, String)> = None;
    for candidate in all_names() {
        let score = strsim::jaro_winkler(&lower, &candidate.to_ascii_lowercase());
        let exact_ci = candidate.eq_ignore_ascii_case(name);
        let score = if exact_ci { 2.0 } else { score };
        if best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, candidate));
        }
    }
    // a bare last segment (`validation:nullable` for `nullable`) is also a likely slip
    if let Some(last) = lower.rsplit(':').next()
        && let Some(c) = all_names()
            .into_iter()
            .find(|c| c.eq_ignore_ascii_case(last))
    {
        return Some(c);
    }
    best.filter(|(s, _)| *s >= 0.85).map(|(_, n)| n)
}

/// Why a marker line was refused.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerError {
    pub message: String,
}

fn err<T>(message: impl Into<String>) -> Result<T, MarkerError> {
    Err(MarkerError {
        message: message.into(),
    })
}

/// Parses one doc-comment line that starts with `+` (the `+` included). `Ok(None)` means a
/// scaffold marker or an accepted marker without effect on manifests.
pub fn parse_line(line: &str) -> Result<Option<(String, Value)>, MarkerError> {
    let body = line.trim().trim_start_matches('+');
    if body.is_empty() {
        return err("empty marker `+`: write a marker name after `+`, or drop the line");
    }
    if is_scaffold(body) {
        return Ok(None);
    }
    // the name is the longest known prefix that ends at a `:` or `=` before the first `=`
    let head_end = body.find('=').unwrap_or(body.len());
    let mut found: Option<(String, Arg)> = None;
    for (i, c) in body[..head_end]
        .char_indices()
        .chain(std::iter::once((head_end, '=')))
    {
        if (c == ':' || i == head_end)
            && let Some((arg, _)) = lookup(&body[..i])
        {
            found = Some((body[..i].to_string(), arg));
        }
    }
    let Some((name, arg)) = found else {
        let shown = &body[..head_end];
        return match suggest(shown) {
            Some(s) => err(format!("unknown marker `+{shown}`: did you mean `+{s}`?")),
            None => err(format!(
                "unknown marker `+{shown}`: see the marker reference in the operator-gen README"
            )),
        };
    };
    let rest = &body[name.len()..];
    if arg == Arg::Ignored {
        return Ok(None);
    }
    let value = parse_value(&name, arg, rest)?;
    Ok(Some((name, value)))
}

fn parse_value(name: &str, arg: Arg, rest: &str) -> Result<Value, MarkerError> {
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
                .ok_or_else(|| MarkerError {
                    message: format!("marker `+{name}` needs a value: write `+{name}=<value>`"),
                })?;
            parse_single(name, single, v, true)
        }
    }
}

fn parse_single(name: &str, arg: Arg, raw: &str, whole: bool) -> Result<Value, MarkerError> {
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
        Arg::Args(_) | Arg::Ignored => err(format!("marker `+{name}` cannot take a single value")),
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

fn unquote_whole(raw: &str, whole: bool) -> Result<String, MarkerError> {
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
fn read_quoted(raw: &str, q: char) -> Result<(String, usize), MarkerError> {
    let mut out = String::new();
    let mut iter = raw.char_indices().skip(1);
    while let Some((i, c)) = iter.next() {
        if c == q {
            return Ok((out, i + c.len_utf8()));
        }
        if c == '\\' && q == '"' {
            match iter.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, other)) => out.push(other),
                None => break,
            }
        } else {
            out.push(c);
        }
    }
    err(format!(
        "unterminated string starting with {q}: close it with {q}"
    ))
}

/// Splits `a;b;c` or `{a,b,c}` into items, honouring quotes.
fn split_list(raw: &str) -> Result<Vec<String>, MarkerError> {
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
fn parse_args(name: &str, keys: &[(&str, Arg)], raw: &str) -> Result<Value, MarkerError> {
    let mut map = Map::new();
    let mut rest = raw.trim();
    while !rest.is_empty() {
        let eq = rest.find('=').unwrap_or(rest.len());
        let comma = rest.find(',').unwrap_or(rest.len());
        let key = rest[..eq.min(comma)].trim();
        let Some((_, arg)) = keys.iter().find(|(k, _)| *k == key) else {
            let known: Vec<&str> = keys.iter().map(|(k, _)| *k).collect();
            let close = known
                .iter()
                .map(|k| {
                    (
                        strsim::jaro_winkler(&k.to_ascii_lowercase(), &key.to_ascii_lowercase()),
                        *k,
                    )
                })
                .fold(None::<(f64, &str)>, |b, c| {
                    if b.is_none_or(|b| c.0 > b.0) {
                        Some(c)
                    } else {
                        b
                    }
                });
            return match close {
                Some((s, k)) if s >= 0.8 => err(format!(
                    "marker `+{name}` has no argument `{key}`: did you mean `{k}`?"
                )),
                _ => err(format!(
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
fn take_arg_value(raw: &str) -> Result<(String, usize), MarkerError> {
    let mut used = 0;
    loop {
        let rest = &raw[used..];
        match rest.chars().next() {
            Some(q @ ('"' | '\'' | '`')) => used += read_quoted(rest, q)?.1,
            Some('{') => {
                used += matching_brace(rest).ok_or_else(|| MarkerError {
                    message: "unbalanced `{` in marker value: close it with `}`".into(),
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
pub fn parse_any(raw: &str) -> Result<Value, MarkerError> {
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

fn split_top(s: &str, sep: char) -> Result<Vec<String>, MarkerError> {
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

/// The Rust attribute form: `#[k8s(min_length = 4)]` key → canonical marker name.
pub fn attribute_name(key: &str) -> Option<String> {
    let fixed = match key {
        "optional" => "optional",
        "required" => "required",
        "nullable" => "nullable",
        "default" => "kubebuilder:default",
        "example" => "kubebuilder:example",
        "title" => "kubebuilder:title",
        "list_type" => "listType",
        "list_map_key" => "listMapKey",
        "map_type" => "mapType",
        "struct_type" => "structType",
        "immutable" => "k8s:immutable",
        "enum_type" => "k8s:enum",
        "preserve_unknown_fields" => "kubebuilder:pruning:PreserveUnknownFields",
        "schemaless" => "kubebuilder:validation:Schemaless",
        "embedded_resource" => "kubebuilder:validation:EmbeddedResource",
        "at_most_one_of" => "kubebuilder:validation:AtMostOneOf",
        "exactly_one_of" => "kubebuilder:validation:ExactlyOneOf",
        "at_least_one_of" => "kubebuilder:validation:AtLeastOneOf",
        "external_docs" => "kubebuilder:externalDocs",
        "resource" => "kubebuilder:resource",
        "subresource_status" => "kubebuilder:subresource:status",
        "scale" => "kubebuilder:subresource:scale",
        "printcolumn" => "kubebuilder:printcolumn",
        "storage_version" => "kubebuilder:storageversion",
        "deprecated_version" => "kubebuilder:deprecatedversion",
        "skip_version" => "kubebuilder:skipversion",
        "unserved_version" => "kubebuilder:unservedversion",
        "selectable_field" => "kubebuilder:selectablefield",
        "metadata" => "kubebuilder:metadata",
        "rbac" => "kubebuilder:rbac",
        "webhook" => "kubebuilder:webhook",
        "genclient" => "genclient",
        "non_namespaced" => "genclient:nonNamespaced",
        "no_status" => "genclient:noStatus",
        "no_verbs" => "genclient:noVerbs",
        "readonly" => "genclient:readonly",
        "only_verbs" => "genclient:onlyVerbs",
        "skip_verbs" => "genclient:skipVerbs",
        _ => "",
    };
    if !fixed.is_empty() {
        return Some(fixed.to_string());
    }
    let (items, key) = match key.strip_prefix("items_") {
        Some(k) => (true, k),
        None => (false, key),
    };
    let pascal = heck::ToUpperCamelCase::to_upper_camel_case(key);
    let pascal = match pascal.as_str() {
        "Validation" | "XValidation" => "XValidation".to_string(),
        "EnumValues" => "Enum".to_string(),
        "IntOrString" => "XIntOrString".to_string(),
        other => other.to_string(),
    };
    VALIDATIONS
        .iter()
        .find(|(n, _)| *n == pascal)
        .map(|(n, _)| {
            if items {
                format!("kubebuilder:validation:items:{n}")
            } else {
                format!("kubebuilder:validation:{n}")
            }
        })
}

/// Argument names of the attribute form are snake_case; marker arguments are controller-gen's.
pub fn attribute_arg_name(marker: &str, key: &str) -> String {
    let Some((Arg::Args(keys), _)) = lookup(marker) else {
        return key.to_string();
    };
    let flat = key.replace('_', "").to_ascii_lowercase();
    keys.iter()
        .find(|(k, _)| k.to_ascii_lowercase() == flat)
        .map(|(k, _)| k.to_string())
        .unwrap_or_else(|| key.to_string())
}

/// Checks an attribute-form value against the marker's shape and normalises it.
pub fn check_value(name: &str, value: Value) -> Result<Value, MarkerError> {
    let Some((arg, _)) = lookup(name) else {
        return err(format!("unknown marker `{name}`"));
    };
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

fn check_value_shape(arg: Arg, v: &Value, name: &str, key: &str) -> Result<(), MarkerError> {
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
        Arg::Ignored => "nothing",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(line: &str) -> (String, Value) {
        parse_line(line).expect("parses").expect("has effect")
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
        assert_eq!(
            parse_line("+kubebuilder:object:generate=true").expect("ok"),
            None
        );
    }

    #[test]
    fn attribute_names_map_to_markers() {
        assert_eq!(
            attribute_name("min_length").as_deref(),
            Some("kubebuilder:validation:MinLength")
        );
        assert_eq!(
            attribute_name("items_minimum").as_deref(),
            Some("kubebuilder:validation:items:Minimum")
        );
        assert_eq!(
            attribute_name("x_validation").as_deref(),
            Some("kubebuilder:validation:XValidation")
        );
        assert_eq!(attribute_name("list_type").as_deref(), Some("listType"));
        assert_eq!(attribute_name("bogus"), None);
        assert_eq!(
            attribute_arg_name("kubebuilder:printcolumn", "json_path"),
            "JSONPath"
        );
    }
}
