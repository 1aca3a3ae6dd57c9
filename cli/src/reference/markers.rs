//! The marker reference: every marker of codegen's registry, with both spellings, where it may
//! stand, its arguments, its effect, an example, what controller-gen does with it, and what the
//! apiserver test proves of it; refused markers with their reason.

use operator_gen_codegen::markers::docs::{self, ControllerGen};
use operator_gen_codegen::markers::registry::{ABSENT, Case, Proof};
use operator_gen_codegen::markers::{Arg, Def, Effect, REGISTRY, Target, parse_line};
use serde_json::Value;

use super::page::{cell, generated_note};

/// The page's groups of markers, in page order: the emitter a marker feeds (as
/// [`Effect::emitter`] names it), the section's title and what the group has in common.
const GROUPS: &[(&str, &str, &str)] = &[
    (
        "scan",
        "Modules",
        "These stand in a module's `//!` lines and tell `operator-gen manifests` about the kinds the module defines.",
    ),
    (
        "crd",
        "The CRD object",
        "These stand on the spec struct of a kind (the struct that derives `CustomResource`) and shape the CRD outside its schema: names, scope, versions, subresources and printer columns.",
    ),
    (
        "schema",
        "The schema",
        "These shape the OpenAPI schema of the CRD, which the apiserver enforces. On a field they apply to that field; on a type they apply wherever the type is used.",
    ),
    (
        "rbac",
        "RBAC",
        "This one writes the manager's role. It usually stands in the `//!` lines of the controller's module.",
    ),
    (
        "webhook",
        "Webhooks",
        "These write the webhook configurations of `config/webhook/manifests.yaml`. `operator-gen create webhook` writes them for you, in the `//!` lines of the webhook's module.",
    ),
    (
        "client",
        "The typed client",
        "These stand on the spec struct of a kind and trim the typed client the derive writes for it (`Kind::client`). They are code-generator's markers, read the same way.",
    ),
    (
        "none",
        "Markers refused in Rust",
        "These markers mean something to a Go generator but have no counterpart in Rust. operator-gen refuses them with an error that says why and what to do instead, rather than ignoring them.",
    ),
];

/// The id of a marker's section: its name in lower case with `:` as `-`.
pub fn anchor(def: &Def) -> String {
    def.name.replace(':', "-").to_ascii_lowercase()
}

fn link(def: &Def) -> String {
    format!("[`+{}`](#{})", def.name, anchor(def))
}

/// The marker reference page, `docs/src/reference/markers.md`.
pub fn markers_page() -> String {
    let mut out = String::from("# Markers\n\n");
    out.push_str(&generated_note(
        "the marker registry (`codegen/src/markers/registry.rs` and `docs.rs` beside it)",
    ));
    out.push_str(INTRO);
    out.push_str("\n## Markers by where they stand\n\n");
    for (target, title) in [
        (Target::Package, "On a module"),
        (Target::Type, "On a type"),
        (Target::Field, "On a field"),
    ] {
        out.push_str(&format!("### {title}\n\n"));
        for (emitter, group, _) in GROUPS {
            let links: Vec<String> = REGISTRY
                .iter()
                .filter(|d| d.effect.emitter() == *emitter && d.targets.contains(&target))
                .filter(|d| !refused(d))
                .map(link)
                .collect();
            if !links.is_empty() {
                out.push_str(&format!("- {group}: {}\n", links.join(", ")));
            }
        }
        out.push('\n');
    }
    out.push_str("### Refused {#refused}\n\n| Marker | Why |\n|---|---|\n");
    for def in REGISTRY.iter().filter(|d| refused(d)) {
        if let Effect::None(reason) = def.effect {
            out.push_str(&format!(
                "| {} | {} |\n",
                link(def),
                cell(&full_stop(reason))
            ));
        }
    }
    for (emitter, title, about) in GROUPS {
        out.push_str(&format!("\n## {title}\n\n{about}\n"));
        for def in REGISTRY.iter().filter(|d| d.effect.emitter() == *emitter) {
            out.push('\n');
            section(def, &mut out);
        }
    }
    out
}

const INTRO: &str = "
Markers are how a Rust type tells `operator-gen manifests` (and the derives) what its CRD, its
schema, its RBAC rules and its webhooks look like. Each marker has two spellings:

- a **doc-comment line** in controller-gen's own spelling, such as
  `/// +kubebuilder:validation:MinLength=2` on a field, or `//! +kubebuilder:rbac:...` at the top
  of a module;
- an **attribute**, a key of `#[k8s(...)]` in snake_case, such as `#[k8s(min_length = 2)]`.
  Markers that take named arguments are written `#[k8s(key(name = value, ...))]`. A few markers
  have no attribute key and are written as doc-comment lines only.

A marker stands on a **module** (a `//!` line of the module's file, or, as in Go, a line of the
doc comment of a function or another item of the module that is not a type), on a **type** (a
line of the doc comment of a struct or enum, or its `#[k8s(...)]`; for a kind, its spec struct)
or on a **field**. A marker in a place it cannot stand, an unknown marker or a malformed value is
an error that names the file and line and, when a known marker is close, suggests it. Markers
that have no meaning in Rust are refused with the reason, listed [below](#refused).

The values are written as controller-gen writes them: `true`/`false`, numbers, strings (quoted
with `\"`, `'` or backticks when they hold a comma or a `;`), lists as `a;b;c`, and named
arguments as `name=value,name=value`. In the attribute form they are Rust literals: `\"text\"`,
`3`, `true`, and lists as `[\"a\", \"b\"]`.

Many validation markers also have a form for the items of a list:
`+kubebuilder:validation:items:MaxLength=3` or `#[k8s(items_max_length = 3)]` limits each item
of the list it stands on.

A type's markers apply wherever the type is used, and also where a struct flattens it with
`#[serde(flatten)]`, one level deep or more (the test below checks up to three), as controller-gen carries the markers of an
embedded Go struct (`json:\",inline\"`): the flattening struct's CEL rules come first, then
each flattened struct's, the last flattened first; a validation that two of them set to
different values (`MinProperties`, say) is kept as `allOf` of both; preserve-unknown-fields,
embedded-resource and the map type carry over; the description, title, example and external
docs stay the flattening struct's own. `tests/tests/manifests/differential_controller_gen.rs`
compares this with controller-gen's output for Go twins (`hack/twins/handwritten/`).

A kind's `metadata` has no field in Rust to carry markers: `#[k8s(required_metadata)]` on the
spec struct is Go's `+required` on the kind's `metav1.ObjectMeta`, and makes the root require
`metadata` (`required: [metadata, spec]`), as the same differential test checks. No other
marker stands on `metadata`: controller-gen v0.21.0 writes the root's `metadata` as
`type: object` whatever markers its field carries, a CEL rule included, which the same test
checks (the Go twin's `metadata` carries `+kubebuilder:validation:XValidation`). A rule about
the name goes on the root object instead, as in Go on the kind's type: the marker lines of
`#[k8s(doc = \"...\")]`, the root's doc comment, are the root object's schema markers, such as
`+kubebuilder:validation:XValidation:rule=\"self.metadata.name.size() <= 63\"` on a line of its
own. The differential test compares such a rule with controller-gen's, and
`tests/tests/apiserver/apiserver.rs` checks that the apiserver refuses a name the rule refuses.
A marker there that does not change a schema (`+kubebuilder:subresource:status`, say) is an
error: kind markers go on the spec struct's doc comment.

Every marker that changes the schema is proven against a real kube-apiserver by the test
`tests/tests/apiserver/apiserver_markers.rs`; each section below says what that test checks.
";

fn refused(def: &Def) -> bool {
    matches!(def.effect, Effect::None(_))
}

/// `text` ending with a full stop.
fn full_stop(text: &str) -> String {
    if text.ends_with('.') {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

/// The section of one marker: its heading and summary, then its list of facts, its argument
/// table, its example and what the apiserver test checks of it.
fn section(def: &Def, out: &mut String) {
    let doc = docs::doc(def.kind);
    out.push_str(&format!("### `+{}` {{#{}}}\n\n", def.name, anchor(def)));
    out.push_str(doc.summary);
    out.push_str("\n\n");
    out.push_str(&format!(
        "- **Doc comment:** `{}`\n",
        doc_form(def.name, def.arg)
    ));
    if let Effect::None(reason) = def.effect {
        out.push_str(&format!(
            "- **In operator-gen:** refused: {}\n",
            full_stop(reason)
        ));
    } else {
        attribute_item(def, out);
        items_item(def, out);
    }
    out.push_str(&format!("- **Stands on:** {}\n", targets(def)));
    value_and_effect_items(def, out);
    let cg = match doc.controller_gen {
        ControllerGen::Same => "The same.".to_string(),
        ControllerGen::Differs(text) | ControllerGen::NotRead(text) => text.to_string(),
    };
    out.push_str(&format!("- **controller-gen:** {cg}\n"));
    arguments_table(def, out);
    example(def, out);
    proofs(def, out);
}

/// The **Attribute** item of a marker that is not refused: the shape of its `#[k8s(...)]` form
/// and the other spellings of its key, or that it has none.
fn attribute_item(def: &Def, out: &mut String) {
    let Some(key) = def.keys.first() else {
        out.push_str("- **Attribute:** none; write the doc-comment line.\n");
        return;
    };
    let form = attribute_shape(key, def.arg);
    let aliases: Vec<String> = def.keys[1..].iter().map(|k| format!("`{k}`")).collect();
    let also = if aliases.is_empty() {
        String::new()
    } else {
        format!(" (the key may also be spelled {})", aliases.join(", "))
    };
    let place = if def.targets.contains(&Target::Package) {
        " on a type or a field; in a module, write the doc-comment line"
    } else {
        ""
    };
    out.push_str(&format!("- **Attribute:** `{form}`{also}{place}\n"));
}

/// The **For list items** item of a marker that has an `items:` form.
fn items_item(def: &Def, out: &mut String) {
    if !def.items {
        return;
    }
    let items_name = def.name.replacen(
        "kubebuilder:validation:",
        "kubebuilder:validation:items:",
        1,
    );
    let attribute = match def.keys.first() {
        Some(key) => format!(
            " or `{}`",
            attribute_shape(&format!("items_{key}"), def.arg)
        ),
        None => String::new(),
    };
    out.push_str(&format!(
        "- **For list items:** `{}`{attribute} applies it to each item of the list it stands on\n",
        doc_form(&items_name, def.arg),
    ));
}

/// The **Value** item, and for a marker that is not refused the **Repeatable** and **Effect**
/// items.
fn value_and_effect_items(def: &Def, out: &mut String) {
    let mut value = describe(def.arg);
    if matches!(def.arg, Arg::Any) && !refused(def) && !def.keys.is_empty() {
        value.push_str(" (the attribute form takes literals and lists of them)");
    }
    out.push_str(&format!("- **Value:** {value}\n"));
    if refused(def) {
        return;
    }
    out.push_str(&format!(
        "- **Repeatable:** {}\n",
        if def.repeatable {
            "yes, each occurrence adds to the result"
        } else {
            "no, give it once"
        }
    ));
    out.push_str(&format!("- **Effect:** {}\n", effect(def)));
}

/// The table of a marker's named arguments, with their attribute spellings.
fn arguments_table(def: &Def, out: &mut String) {
    let Arg::Args(args) = def.arg else {
        return;
    };
    out.push_str("\n| Argument | Attribute spelling | Value |\n|---|---|---|\n");
    for (name, arg) in args {
        out.push_str(&format!(
            "| `{name}` | `{}` | {} |\n",
            snake(name),
            describe(*arg)
        ));
    }
}

/// The example of a marker as doc-comment lines and, for a marker that is not refused and whose
/// lines all have one, as an attribute.
fn example(def: &Def, out: &mut String) {
    let Some(lines) = docs::example(def.kind) else {
        return;
    };
    let prefix = if def.targets.contains(&Target::Package) {
        "//!"
    } else {
        "///"
    };
    out.push_str("\nExample:\n\n```rust\n");
    for line in lines.split('\n') {
        out.push_str(&format!("{prefix} {line}\n"));
    }
    out.push_str("```\n");
    if !refused(def)
        && let Some(attrs) = lines
            .split('\n')
            .map(attribute_form)
            .collect::<Option<Vec<String>>>()
    {
        out.push_str("\nThe same as an attribute:\n\n```rust\n");
        out.push_str(&format!("#[k8s({})]\n", attrs.join(", ")));
        out.push_str("```\n");
    }
}

/// What the apiserver test checks of a marker, one item a proof.
fn proofs(def: &Def, out: &mut String) {
    if def.proofs.is_empty() {
        return;
    }
    out.push_str("\nChecked on a real kube-apiserver:\n\n");
    for p in def.proofs {
        out.push_str(&format!("- {}\n", proof(p)));
    }
}

fn targets(def: &Def) -> String {
    let names: Vec<&str> = def
        .targets
        .iter()
        .map(|t| match t {
            Target::Package => "a module (`//!` lines)",
            Target::Type => "a type",
            Target::Field => "a field",
        })
        .collect();
    match names.as_slice() {
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
        [] => String::new(),
    }
}

fn effect(def: &Def) -> String {
    match def.effect {
        Effect::Schema(_) => "changes the OpenAPI schema of what it stands on.".to_string(),
        Effect::Field(how) => format!("changes the schema: {how}."),
        Effect::Crd(what) => format!("changes the CRD outside its schema: {what}."),
        Effect::Rbac => "adds a rule to the generated role (`config/rbac/role.yaml`).".to_string(),
        Effect::Webhook => {
            "adds to the webhook configurations (`config/webhook/manifests.yaml`).".to_string()
        }
        Effect::Client(what) => format!("changes the typed client the derive writes: {what}."),
        Effect::Scan(what) => format!("read by the source scan: {what}."),
        Effect::None(reason) => full_stop(reason),
    }
}

/// How the doc-comment form of the marker `name` is written, value included:
/// `+name=<integer>`.
fn doc_form(name: &str, arg: Arg) -> String {
    match arg {
        Arg::Args(_) => format!("+{name}:<argument>=<value>,..."),
        other => format!("+{name}{}", value_shape(other)),
    }
}

fn value_placeholder(arg: Arg) -> &'static str {
    match arg {
        Arg::Flag | Arg::Bool => "<bool>",
        Arg::Int => "<integer>",
        Arg::Float => "<number>",
        Arg::Str => "<string>",
        Arg::List => "<a;b;...>",
        Arg::Any => "<value>",
        Arg::Json => "<JSON>",
        Arg::Args(_) => "<arguments>",
    }
}

/// The value part of a single-value marker's doc-comment form.
fn value_shape(arg: Arg) -> String {
    match arg {
        Arg::Flag => String::new(),
        other => format!("={}", value_placeholder(other)),
    }
}

/// The value of the attribute form, as a Rust literal's shape.
fn literal_shape(arg: Arg) -> &'static str {
    match arg {
        Arg::Flag | Arg::Bool => "<bool>",
        Arg::Int => "<integer>",
        Arg::Float => "<number>",
        Arg::Str => "\"<string>\"",
        Arg::List => "[\"a\", \"b\", ...]",
        Arg::Any | Arg::Json => "<literal>",
        Arg::Args(_) => "(...)",
    }
}

/// The shape of the attribute form of the key `key`: `#[k8s(min_length = <integer>)]`.
fn attribute_shape(key: &str, arg: Arg) -> String {
    match arg {
        Arg::Flag => format!("#[k8s({key})]"),
        Arg::Args(_) => format!("#[k8s({key}(argument = value, ...))]"),
        other => format!("#[k8s({key} = {})]", literal_shape(other)),
    }
}

fn describe(arg: Arg) -> String {
    match arg {
        Arg::Flag => "none; `=false` turns it off".to_string(),
        Arg::Bool => "`true` or `false`".to_string(),
        Arg::Int => "an integer".to_string(),
        Arg::Float => "a number".to_string(),
        Arg::Str => "a string".to_string(),
        Arg::List => "a list of strings, `a;b;c`".to_string(),
        Arg::Any => {
            "any value: a bool, a number, a string, a list `{a,b}` or an object `{key: value}`"
                .to_string()
        }
        Arg::Json => "a JSON value".to_string(),
        Arg::Args(_) => "named arguments, listed in the table below".to_string(),
    }
}

/// The snake_case spelling of a marker argument in the attribute form (`JSONPath` is
/// `json_path`, `type` is `type_`), which `#[k8s(...)]` reads back to the marker's argument.
fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase() || (prev.is_ascii_uppercase() && next_lower) {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    if out == "type" {
        out.push('_');
    }
    out
}

/// The attribute form of one doc-comment marker line, `min_length = 2` for
/// `+kubebuilder:validation:MinLength=2` (what goes inside `#[k8s(...)]`); `None` when the line
/// does not parse, or its marker has no attribute key, or its value has no literal form (an
/// object).
pub fn attribute_form(line: &str) -> Option<String> {
    let marker = parse_line(line).ok()??;
    let def = marker.def();
    let key = def.keys.first()?;
    let key = if marker.items {
        format!("items_{key}")
    } else {
        key.to_string()
    };
    match (def.arg, &marker.value) {
        (Arg::Flag, Value::Bool(true)) => Some(key),
        (Arg::Args(_), Value::Object(map)) => {
            let args = map
                .iter()
                .map(|(k, v)| Some(format!("{} = {}", snake(k), literal(v)?)))
                .collect::<Option<Vec<String>>>()?;
            Some(format!("{key}({})", args.join(", ")))
        }
        (_, v) => Some(format!("{key} = {}", literal(v)?)),
    }
}

/// A JSON value as a Rust literal of the attribute form.
fn literal(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(format!("{s:?}")),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Array(items) => {
            let items = items.iter().map(literal).collect::<Option<Vec<_>>>()?;
            Some(format!("[{}]", items.join(", ")))
        }
        Value::Null | Value::Object(_) => None,
    }
}

/// What the apiserver test checks for one proof, in a sentence.
fn proof(p: &Proof) -> String {
    let lines: Vec<String> = p
        .lines
        .split('\n')
        .map(|l| format!("`{}`", l.replace("{field}", "replicas")))
        .collect();
    let on = format!("with {}", lines.join(" and "));
    let ty = p.ty;
    let place = if ty.starts_with("struct ") || ty.starts_with("enum ") {
        format!("on a type `{ty}`")
    } else {
        format!("on a field of type `{ty}`")
    };
    let shown = |json: &str| {
        if json == ABSENT {
            "an object without the field".to_string()
        } else {
            format!("`{json}`")
        }
    };
    let what = match p.case {
        Case::Rejects { ok, bad, says } => format!(
            "{} is accepted; {} is refused with “{says}”",
            shown(ok),
            shown(bad)
        ),
        Case::RejectsUpdate { ok, bad, says } => format!(
            "an object created with {} cannot be updated to {}: the update is refused with “{says}”",
            shown(ok),
            shown(bad)
        ),
        Case::Stores { given, stored } => {
            let stored = if stored == ABSENT {
                "without the field".to_string()
            } else {
                format!("as `{stored}`")
            };
            format!("{} is stored {stored}", shown(given))
        }
        Case::Merges {
            first,
            second,
            stored,
        } => format!(
            "`{first}` applied by one field manager, then `{second}` by another, leaves `{stored}`"
        ),
        Case::Kept => "the CRD the apiserver stores keeps the schema as generated".to_string(),
        Case::RefusesCrd { says } => format!("the apiserver refuses the CRD with “{says}”"),
        Case::Column { given, cell } => {
            format!("an object whose field holds `{given}` shows `{cell}` in the column")
        }
        Case::Scale { given, set } => format!(
            "the scale subresource reads `{given}` from the field, and setting the scale to `{set}` writes `{set}` back to it"
        ),
        Case::StatusIgnored => "a status sent with a create is not stored".to_string(),
    };
    let on_root = matches!(
        p.case,
        Case::Column { .. } | Case::Scale { .. } | Case::StatusIgnored
    );
    if on_root {
        format!("{on} on the spec struct, and a field of type `{ty}`: {what}.")
    } else {
        format!("{on} {place}: {what}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_names_read_back_to_the_marker_arguments() {
        assert_eq!(snake("JSONPath"), "json_path");
        assert_eq!(snake("shortName"), "short_name");
        assert_eq!(
            snake("admissionReviewVersions"),
            "admission_review_versions"
        );
        assert_eq!(snake("type"), "type_");
        assert_eq!(snake("specpath"), "specpath");
        for def in REGISTRY {
            if let Arg::Args(args) = def.arg {
                for (name, _) in args {
                    let back = operator_gen_codegen::markers::attribute_arg_name(
                        def,
                        snake(name).trim_end_matches('_'),
                    );
                    assert_eq!(back, *name, "`{}`'s argument", def.name);
                }
            }
        }
    }

    #[test]
    fn section_ids_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for def in REGISTRY {
            assert!(
                seen.insert(anchor(def)),
                "two sections are `{}`",
                anchor(def)
            );
        }
        assert!(!seen.contains("refused"));
    }

    /// Every attribute form the page shows lowers, as the derive and the scan lower it, to the
    /// markers its doc-comment lines give.
    #[test]
    fn attribute_examples_lower_to_the_markers_of_their_lines() {
        use operator_gen_codegen::ir::Body;
        use operator_gen_codegen::lower;
        use operator_gen_codegen::markers::Kind;
        let lowered = |attrs: &str, on_field: bool| -> Vec<(Kind, bool, Value)> {
            let src = if on_field {
                format!("struct T {{\n{attrs}\nf: i32 }}")
            } else {
                format!("{attrs}\nstruct T {{ f: i32 }}")
            };
            let input: syn::DeriveInput =
                syn::parse_str(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
            let mut errors = lower::Errors::default();
            let Some(def) = lower::type_def(&input, &mut errors) else {
                panic!("{src}: {errors:?}");
            };
            let markers = match (on_field, def.body) {
                (true, Body::Struct(fields)) => fields[0].markers.clone(),
                _ => def.markers,
            };
            markers
                .into_iter()
                .map(|m| (m.kind, m.items, m.value))
                .collect()
        };
        let mut compared = Vec::new();
        for def in REGISTRY.iter().filter(|d| !refused(d)) {
            let Some(lines) = docs::example(def.kind) else {
                continue;
            };
            let Some(attrs) = lines
                .split('\n')
                .map(attribute_form)
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            let on_field = def.targets.contains(&Target::Field);
            let doc: String = lines.split('\n').map(|l| format!("/// {l}\n")).collect();
            let attr = format!("#[k8s({})]", attrs.join(", "));
            assert_eq!(
                lowered(&attr, on_field),
                lowered(&doc, on_field),
                "`{}`: {attr} against {lines}",
                def.name
            );
            compared.push(def.kind);
        }
        for kind in [
            Kind::Rbac,
            Kind::Webhook,
            Kind::PrintColumn,
            Kind::SubresourceScale,
            Kind::XValidation,
            Kind::Minimum,
            Kind::ExclusiveMinimum,
            Kind::Enum,
            Kind::Optional,
        ] {
            assert!(compared.contains(&kind), "{kind:?} was not compared");
        }
    }

    #[test]
    fn attribute_forms_of_examples() {
        assert_eq!(
            attribute_form("+kubebuilder:validation:MinLength=2").as_deref(),
            Some("min_length = 2")
        );
        assert_eq!(
            attribute_form("+kubebuilder:validation:items:MaxLength=3").as_deref(),
            Some("items_max_length = 3")
        );
        assert_eq!(
            attribute_form(
                "+kubebuilder:printcolumn:name=\"Size\",type=integer,JSONPath=\".spec.size\""
            )
            .as_deref(),
            Some("printcolumn(name = \"Size\", type_ = \"integer\", json_path = \".spec.size\")")
        );
        assert_eq!(attribute_form("+k8s:listType=map"), None);
        assert_eq!(attribute_form("+kubebuilder:default={a: 1}"), None);
    }
}
