//! One Helm template per object of the rendered manifests: the object serialized as YAML with
//! holes where a value comes from `values.yaml` or the release (namespace, labels, image,
//! replicas, args, ports, resources, security contexts), and a condition around the file.

use serde_json::{Map, Value};

/// The label kustomize's scaffold puts on objects, which Helm's own labels replace.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";

/// A value standing in for a Helm expression while the object is serialized.
#[derive(Debug, Clone)]
pub enum Hole {
    /// The value becomes this template text on the key's line.
    Inline(String),
    /// The value becomes `toYaml` of this values path on the following lines.
    Block(String),
    /// The value becomes these lines (a sequence with template actions), at the key's indentation.
    Lines(Vec<String>),
    /// The labels: the chart's labels helper, then these literal labels.
    Labels(Map<String, Value>),
}

/// Holes are numbered strings no manifest holds.
const HOLE_PREFIX: &str = "__operator_gen_helm_hole_";
const HOLE_SUFFIX: &str = "__";

/// An object being turned into a template.
#[derive(Debug)]
pub struct Template {
    /// The object, holes in place.
    pub object: Value,
    holes: Vec<Hole>,
}

impl Template {
    /// Start from a copy of `object` with every `{{` and `}}` in its strings escaped for Helm.
    pub fn new(object: &Value) -> Template {
        let mut object = object.clone();
        escape_actions(&mut object);
        Template {
            object,
            holes: Vec::new(),
        }
    }

    /// Put `hole` where `pointer` (a JSON pointer) is; `false` when there is no such value.
    pub fn hole(&mut self, pointer: &str, hole: Hole) -> bool {
        let index = self.holes.len();
        match self.object.pointer_mut(pointer) {
            Some(slot) => {
                *slot = Value::String(format!("{HOLE_PREFIX}{index}{HOLE_SUFFIX}"));
                self.holes.push(hole);
                true
            }
            None => false,
        }
    }

    /// Replace every string equal to `namespace` with the release namespace and, outside
    /// `skip` pointers, every occurrence inside a longer string (`svc.<ns>.svc`, `<ns>/cert`).
    pub fn release_namespace(&mut self, namespace: &str, skip: &[&str]) {
        let mut exact = Vec::new();
        collect_namespace(&mut self.object, namespace, "", skip, &mut exact);
        for pointer in exact {
            self.hole(
                &pointer,
                Hole::Inline("{{ .Release.Namespace }}".to_owned()),
            );
        }
    }

    /// The template text: `condition` (a Helm expression) wraps the whole file when given.
    pub fn render(&self, header: &str, condition: Option<&str>, labels_helper: &str) -> String {
        let doc = operator_gen_codegen::yaml::document(&self.object);
        let body = doc.strip_prefix("---\n").unwrap_or(&doc);
        let mut out = String::from(header);
        if let Some(c) = condition {
            out.push_str(&format!("{{{{- if {c} }}}}\n"));
        }
        for line in body.lines() {
            match self.find_hole(line) {
                Some((start, end, hole)) => fill(&mut out, line, start, end, hole, labels_helper),
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        if condition.is_some() {
            out.push_str("{{- end }}\n");
        }
        out
    }

    /// The hole on `line`: the byte range of its token (quotes included) and the hole.
    fn find_hole(&self, line: &str) -> Option<(usize, usize, &Hole)> {
        let at = line.find(HOLE_PREFIX)?;
        let rest = &line[at + HOLE_PREFIX.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let index: usize = digits.parse().ok()?;
        let mut end = at + HOLE_PREFIX.len() + digits.len() + HOLE_SUFFIX.len();
        let mut start = at;
        if at > 0 && matches!(line.as_bytes()[at - 1], b'\'' | b'"') {
            start -= 1;
            end += 1;
        }
        Some((start, end.min(line.len()), self.holes.get(index)?))
    }
}

fn fill(out: &mut String, line: &str, start: usize, end: usize, hole: &Hole, labels: &str) {
    let prefix = &line[..start];
    // the column of the key: past the indentation and any `- ` of a sequence item
    let key_col = prefix.len() - prefix.trim_start_matches([' ', '-']).len();
    let key_line = prefix.trim_end();
    match hole {
        Hole::Inline(text) => {
            out.push_str(prefix);
            out.push_str(text);
            out.push_str(&line[end..]);
            out.push('\n');
        }
        Hole::Block(path) => {
            let n = key_col + 2;
            out.push_str(key_line);
            out.push('\n');
            out.push_str(&format!(
                "{}{{{{- toYaml {path} | nindent {n} }}}}\n",
                " ".repeat(n)
            ));
        }
        Hole::Lines(lines) => {
            out.push_str(key_line);
            out.push('\n');
            for l in lines {
                out.push_str(&" ".repeat(key_col));
                out.push_str(l);
                out.push('\n');
            }
        }
        Hole::Labels(literal) => {
            let n = key_col + 2;
            out.push_str(key_line);
            out.push('\n');
            out.push_str(&format!(
                "{}{{{{- include \"{labels}\" . | nindent {n} }}}}\n",
                " ".repeat(n)
            ));
            if !literal.is_empty() {
                let doc = operator_gen_codegen::yaml::document(&Value::Object(literal.clone()));
                for l in doc.strip_prefix("---\n").unwrap_or(&doc).lines() {
                    out.push_str(&" ".repeat(n));
                    out.push_str(l);
                    out.push('\n');
                }
            }
        }
    }
}

/// `{{` and `}}` in a manifest's text are literal, not Helm actions.
fn escape_actions(value: &mut Value) {
    match value {
        Value::String(s) if s.contains("{{") || s.contains("}}") => {
            let mut out = String::with_capacity(s.len() + 16);
            let mut rest = s.as_str();
            while !rest.is_empty() {
                if let Some(r) = rest.strip_prefix("{{") {
                    out.push_str("{{ `{{` }}");
                    rest = r;
                } else if let Some(r) = rest.strip_prefix("}}") {
                    out.push_str("{{ `}}` }}");
                    rest = r;
                } else {
                    let c = rest.chars().next().unwrap_or_default();
                    out.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
            *s = out;
        }
        Value::Array(items) => items.iter_mut().for_each(escape_actions),
        Value::Object(map) => map.values_mut().for_each(escape_actions),
        _ => {}
    }
}

fn collect_namespace(
    value: &mut Value,
    namespace: &str,
    pointer: &str,
    skip: &[&str],
    exact: &mut Vec<String>,
) {
    if skip.contains(&pointer) {
        return;
    }
    match value {
        Value::String(s) if s == namespace => exact.push(pointer.to_owned()),
        Value::String(s) if s.contains(namespace) => {
            *s = s.replace(namespace, "{{ .Release.Namespace }}");
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                collect_namespace(item, namespace, &format!("{pointer}/{i}"), skip, exact);
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                collect_namespace(
                    item,
                    namespace,
                    &format!("{pointer}/{escaped}"),
                    skip,
                    exact,
                );
            }
        }
        _ => {}
    }
}

/// The labels hole for an object: its own labels but kustomize's managed-by, after the chart's.
pub fn labels_hole(template: &mut Template) {
    let own = template
        .object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let literal: Map<String, Value> = own.into_iter().filter(|(k, _)| k != MANAGED_BY).collect();
    if let Some(md) = template
        .object
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
    {
        md.insert("labels".to_owned(), Value::Null);
        template.hole("/metadata/labels", Hole::Labels(literal));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn holes_become_helm_actions() {
        let object = json!({
            "kind": "Deployment",
            "metadata": {"name": "x", "namespace": "p-system", "labels": {"a": "b", MANAGED_BY: "kustomize"}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "m", "args": ["--x"], "resources": {"limits": {}}, "env": [{"value": "{{ not helm }}"}]}]}}}
        });
        let mut t = Template::new(&object);
        t.release_namespace("p-system", &[]);
        labels_hole(&mut t);
        t.hole(
            "/spec/replicas",
            Hole::Inline("{{ .Values.replicas }}".into()),
        );
        t.hole(
            "/spec/template/spec/containers/0/args",
            Hole::Lines(vec!["- --y".into()]),
        );
        t.hole(
            "/spec/template/spec/containers/0/resources",
            Hole::Block(".Values.resources".into()),
        );
        let text = t.render("", Some(".Values.on"), "p.labels");
        assert_eq!(
            text,
            "{{- if .Values.on }}\nkind: Deployment\nmetadata:\n  labels:\n    {{- include \"p.labels\" . | nindent 4 }}\n    a: b\n  name: x\n  namespace: {{ .Release.Namespace }}\nspec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n      containers:\n      - args:\n        - --y\n        env:\n        - value: '{{ `{{` }} not helm {{ `}}` }}'\n        name: m\n        resources:\n          {{- toYaml .Values.resources | nindent 10 }}\n{{- end }}\n"
        );
    }
}
