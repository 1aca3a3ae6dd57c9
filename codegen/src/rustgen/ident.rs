//! Rust names for wire names: a field's identifier and the `rename` it needs, a type's name.
//! Pure functions over strings.

use heck::{ToLowerCamelCase, ToSnakeCase, ToUpperCamelCase};

/// Words Rust reserves; a field so named is written as a raw identifier (`r#type`).
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
    "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
    "static", "struct", "trait", "true", "try", "type", "typeof", "union", "unsafe", "unsized",
    "use", "virtual", "where", "while", "yield",
];

/// Keywords that cannot be raw identifiers; a field so named gets a trailing `_`.
const NOT_RAW: &[&str] = &["crate", "self", "Self", "super", "_"];

/// A field's identifier and, when serde would not derive its wire name from that identifier
/// under the container's `rename_all = "camelCase"` (or none, with `camel = false`), the
/// `rename` it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldName {
    /// The identifier as written in source (`r#type` for a keyword).
    pub ident: String,
    /// The wire name to put in `#[serde(rename = "...")]`, when one is needed.
    pub rename: Option<String>,
}

/// The identifier of a field whose JSON name is `json`, in a struct with
/// `#[serde(rename_all = "camelCase")]` when `camel` is set. A rename is given whenever the
/// identifier's camelCase form differs from `json` by serde's rule or by heck's (which the
/// schema emitter uses), so both read the same wire name.
pub fn field_name(json: &str, camel: bool) -> FieldName {
    let ident = snake_ident(json);
    let bare = ident.trim_start_matches("r#");
    let derived_ok = if camel {
        serde_camel(bare) == json && bare.to_lower_camel_case() == json
    } else {
        bare == json
    };
    FieldName {
        ident,
        rename: (!derived_ok).then(|| json.to_string()),
    }
}

/// A snake_case identifier for any text: letters and digits kept, everything else a word
/// break, a leading digit prefixed with `_`, a keyword made raw (or suffixed with `_`).
pub fn snake_ident(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let mut s = cleaned.to_snake_case();
    if s.is_empty() {
        s = "field".to_string();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    escape_keyword(s)
}

/// A PascalCase type name for any text (`spec.template` → `SpecTemplate`), a leading digit
/// prefixed with `T`.
pub fn type_ident(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let mut s = cleaned.to_upper_camel_case();
    if s.is_empty() {
        s = "Type".to_string();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'T');
    }
    if NOT_RAW.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// `ident` as written in source: raw when it is a keyword, `_`-suffixed when it cannot be raw.
pub fn escape_keyword(ident: String) -> String {
    if NOT_RAW.contains(&ident.as_str()) {
        format!("{ident}_")
    } else if KEYWORDS.contains(&ident.as_str()) {
        format!("r#{ident}")
    } else {
        ident
    }
}

/// serde's `rename_all = "camelCase"` of a field identifier.
fn serde_camel(field: &str) -> String {
    let mut pascal = String::new();
    let mut capitalize = true;
    for ch in field.chars() {
        if ch == '_' {
            capitalize = true;
        } else if capitalize {
            pascal.push(ch.to_ascii_uppercase());
            capitalize = false;
        } else {
            pascal.push(ch);
        }
    }
    let mut chars = pascal.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => pascal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_round_trip_through_camel_case() {
        let plain = field_name("minReadySeconds", true);
        assert_eq!(plain.ident, "min_ready_seconds");
        assert_eq!(plain.rename, None);
        let kw = field_name("type", true);
        assert_eq!(kw.ident, "r#type");
        assert_eq!(kw.rename, None);
        let upper = field_name("URL", true);
        assert_eq!(upper.ident, "url");
        assert_eq!(upper.rename.as_deref(), Some("URL"));
        let dashed = field_name("x-kubernetes-thing", true);
        assert_eq!(dashed.ident, "x_kubernetes_thing");
        assert_eq!(dashed.rename.as_deref(), Some("x-kubernetes-thing"));
        let digit = field_name("3d", true);
        assert_eq!(digit.ident, "_3d");
        assert_eq!(
            digit.rename, None,
            "serde and heck both drop the leading `_`"
        );
        assert_eq!(field_name("self", false).ident, "self_");
        assert_eq!(field_name("ipv6Address", true).rename, None);
    }

    #[test]
    fn type_idents_are_pascal_case() {
        assert_eq!(type_ident("spec.template"), "SpecTemplate");
        assert_eq!(type_ident("tls"), "Tls");
        assert_eq!(type_ident("9lives"), "T9lives");
        assert_eq!(type_ident("Self"), "Self_");
    }
}
