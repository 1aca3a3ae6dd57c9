//! Name checks: Kubernetes validation rules (DNS-1123/DNS-1035), Rust identifier rules and
//! did-you-mean suggestions. The names themselves (plural, singular, modules, files) come from
//! the generator's naming module, re-exported here.

pub use operator_gen_codegen::names::{crd_file_name, kind_module, lower, module_name, plural};

/// Rust keywords (strict, reserved and 2024-edition), which cannot name a module or type.
pub const RUST_KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Type names a kind must not take: the Rust prelude and the names a generated types or
/// controller file brings into scope.
pub const RESERVED_KINDS: &[&str] = &[
    // std prelude
    "Box",
    "Clone",
    "Copy",
    "Default",
    "Drop",
    "Eq",
    "Err",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "Into",
    "Iterator",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "Unpin",
    "Vec",
    "Debug",
    "Hash",
    // names generated files import
    "Action",
    "Api",
    "Arc",
    "Client",
    "HashMap",
    "Manager",
    "Metrics",
    "Mutex",
    "PoisonError",
    "Condition",
    "Context",
    "Controller",
    "CustomResource",
    "Deserialize",
    "Duration",
    "Error",
    "Event",
    "EventType",
    "Future",
    "ListParams",
    "ObjectMeta",
    "Patch",
    "PatchParams",
    "Recorder",
    "Reporter",
    "Resource",
    "ResourceExt",
    "Schema",
    "Serialize",
    "StreamExt",
    "Time",
    "Timestamp",
];

/// `s` is a DNS-1123 label: at most 63 of `[a-z0-9-]`, starting and ending alphanumeric.
pub fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// `s` is a DNS-1123 subdomain: at most 253 characters of dot-separated DNS-1123 labels.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// `s` is a DNS-1035 label: a DNS-1123 label that starts with a letter.
pub fn is_dns1035_label(s: &str) -> bool {
    is_dns1123_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase())
}

/// `s` is a Rust keyword.
pub fn is_rust_keyword(s: &str) -> bool {
    RUST_KEYWORDS.contains(&s)
}

/// The closest of `candidates` to `input`, when close enough to suggest.
pub fn did_you_mean<'a>(
    input: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::jaro(&input.to_ascii_lowercase(), &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_rules() {
        assert!(is_dns1123_label("my-project"));
        assert!(is_dns1123_label("1abc"));
        assert!(!is_dns1123_label("My"));
        assert!(!is_dns1123_label("-a"));
        assert!(!is_dns1123_label("a-"));
        assert!(!is_dns1123_label(&"a".repeat(64)));
        assert!(is_dns1123_subdomain("crew.my.domain"));
        assert!(is_dns1123_subdomain("sea-creatures.my.domain"));
        assert!(!is_dns1123_subdomain("crew..domain"));
        assert!(!is_dns1123_subdomain("Crew.domain"));
        assert!(is_dns1035_label("captain"));
        assert!(!is_dns1035_label("1captain"));
        assert!(!is_dns1035_label("cap_tain"));
    }

    #[test]
    fn keywords() {
        assert!(is_rust_keyword("type"));
        assert!(!is_rust_keyword("captain"));
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            did_you_mean("Deploymnet", ["Deployment", "DaemonSet"]),
            Some("Deployment")
        );
        assert_eq!(did_you_mean("Zebra", ["Deployment"]), None);
    }
}
