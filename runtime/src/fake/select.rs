//! Label and field selectors as the apiserver parses them from `labelSelector` and
//! `fieldSelector`: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)` for labels;
//! `=`, `==` and `!=` on `metadata.name` and `metadata.namespace` for fields.

use serde_json::Value;

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// Why a selector does not parse: the apiserver's BadRequest message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SelectorError {
    #[error("unable to parse requirement: invalid label selector: {0:?}")]
    Label(String),
    #[error("invalid selector: '{0}'; can't understand '{0}'")]
    Field(String),
    #[error("field label not supported: {0}")]
    FieldLabel(String),
}

/// A parsed label or field selector; the empty selector selects everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Selector {
    labels: Vec<Requirement>,
    fields: Vec<Requirement>,
}

/// Splits at commas outside parentheses.
fn terms(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(text[start..].trim());
    out.retain(|t| !t.is_empty());
    out
}

fn set_values(rest: &str) -> Option<Vec<String>> {
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

fn label_requirement(term: &str) -> Result<Requirement, SelectorError> {
    if let Some((key, value)) = term.split_once("!=") {
        return Ok(Requirement::NotEquals(
            key.trim().into(),
            value.trim().into(),
        ));
    }
    if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok(Requirement::Equals(key.trim().into(), value.trim().into()));
    }
    if let Some(key) = term.strip_prefix('!') {
        return Ok(Requirement::NotExists(key.trim().into()));
    }
    let mut words = term.splitn(2, char::is_whitespace);
    let key = words.next().unwrap_or_default().trim().to_owned();
    let rest = words.next().unwrap_or_default().trim();
    if rest.is_empty() {
        return Ok(Requirement::Exists(key));
    }
    if let Some(values) = rest.strip_prefix("notin").and_then(set_values) {
        return Ok(Requirement::NotIn(key, values));
    }
    if let Some(values) = rest.strip_prefix("in").and_then(set_values) {
        return Ok(Requirement::In(key, values));
    }
    Err(SelectorError::Label(term.to_owned()))
}

/// The fields a field selector may name, as the apiserver allows them for every resource.
const SELECTABLE_FIELDS: &[&str] = &["metadata.name", "metadata.namespace"];

fn field_requirement(term: &str) -> Result<Requirement, SelectorError> {
    let (key, value, negated) = if let Some((k, v)) = term.split_once("!=") {
        (k, v, true)
    } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
        (k, v, false)
    } else {
        return Err(SelectorError::Field(term.to_owned()));
    };
    let key = key.trim();
    if !SELECTABLE_FIELDS.contains(&key) {
        return Err(SelectorError::FieldLabel(key.to_owned()));
    }
    let (key, value) = (key.to_owned(), value.trim().to_owned());
    Ok(if negated {
        Requirement::NotEquals(key, value)
    } else {
        Requirement::Equals(key, value)
    })
}

impl Selector {
    /// Parses the query's `labelSelector` and `fieldSelector`.
    pub(crate) fn parse(labels: Option<&str>, fields: Option<&str>) -> Result<Self, SelectorError> {
        Ok(Selector {
            labels: terms(labels.unwrap_or_default())
                .into_iter()
                .map(label_requirement)
                .collect::<Result<_, _>>()?,
            fields: terms(fields.unwrap_or_default())
                .into_iter()
                .map(field_requirement)
                .collect::<Result<_, _>>()?,
        })
    }

    /// Whether `object` (JSON) is selected.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let label = |key: &str| {
            object["metadata"]["labels"]
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let field = |key: &str| {
            let name = key.strip_prefix("metadata.").unwrap_or(key);
            Some(
                object["metadata"][name]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        };
        self.labels.iter().all(|r| holds(r, &label)) && self.fields.iter().all(|r| holds(r, &field))
    }
}

fn holds(req: &Requirement, lookup: &dyn Fn(&str) -> Option<String>) -> bool {
    match req {
        Requirement::Equals(k, v) => lookup(k).as_deref() == Some(v),
        Requirement::NotEquals(k, v) => lookup(k).as_deref() != Some(v),
        Requirement::In(k, vs) => lookup(k).is_some_and(|x| vs.contains(&x)),
        Requirement::NotIn(k, vs) => lookup(k).is_none_or(|x| !vs.contains(&x)),
        Requirement::Exists(k) => lookup(k).is_some(),
        Requirement::NotExists(k) => lookup(k).is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(name: &str, labels: Value) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn label_selectors_of_every_operator() {
        let a = obj("a", json!({"app": "web", "tier": "front"}));
        let b = obj("b", json!({"app": "db"}));
        let pick = |s: &str| {
            let sel = Selector::parse(Some(s), None).expect(s);
            (sel.matches(&a), sel.matches(&b))
        };
        assert_eq!(pick("app=web"), (true, false));
        assert_eq!(pick("app==db"), (false, true));
        assert_eq!(pick("app!=web"), (false, true));
        assert_eq!(pick("tier"), (true, false));
        assert_eq!(pick("!tier"), (false, true));
        assert_eq!(pick("app in (web, cache)"), (true, false));
        assert_eq!(pick("app notin (web)"), (false, true));
        assert_eq!(pick("app in (web,db),tier"), (true, false));
        assert_eq!(pick(""), (true, true));
    }

    #[test]
    fn field_selectors_on_name_and_namespace_only() {
        let a = obj("a", json!({}));
        let sel =
            Selector::parse(None, Some("metadata.name=a,metadata.namespace==ns")).expect("ok");
        assert!(sel.matches(&a));
        let sel = Selector::parse(None, Some("metadata.name!=a")).expect("ok");
        assert!(!sel.matches(&a));
        assert_eq!(
            Selector::parse(None, Some("spec.size=1")).map_err(|e| e.to_string()),
            Err("field label not supported: spec.size".to_owned())
        );
    }
}
