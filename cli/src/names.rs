//! Names: Kubernetes validation rules (DNS-1123/DNS-1035), Rust identifier rules, case
//! conversion and the English pluraliser that matches kubebuilder's (flect) for common words.

use heck::ToSnakeCase;

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

/// The Rust module name for a group, version or project name: `-` and `.` become `_`.
pub fn module_name(s: &str) -> String {
    s.replace(['-', '.'], "_")
}

/// The Rust module (and file stem) for a kind: `FrigateShip` → `frigate_ship`.
pub fn kind_module(kind: &str) -> String {
    kind.to_snake_case()
}

/// The English plural of `word`, lower-cased, following kubebuilder's flect for common words:
/// `-s/-x/-z/-ch/-sh` take `es`, consonant + `y` takes `ies`, known irregulars and uncountables
/// are looked up.
pub fn pluralize(word: &str) -> String {
    let w = word.to_ascii_lowercase();
    const IRREGULAR: &[(&str, &str)] = &[
        ("human", "humans"),
        ("german", "germans"),
        ("person", "people"),
        ("man", "men"),
        ("woman", "women"),
        ("child", "children"),
        ("mouse", "mice"),
        ("goose", "geese"),
        ("tooth", "teeth"),
        ("foot", "feet"),
        ("ox", "oxen"),
        ("leaf", "leaves"),
        ("knife", "knives"),
        ("life", "lives"),
        ("wife", "wives"),
        ("half", "halves"),
        ("wolf", "wolves"),
        ("shelf", "shelves"),
        ("index", "indices"),
        ("matrix", "matrices"),
        ("vertex", "vertices"),
        ("criterion", "criteria"),
        ("datum", "data"),
        ("medium", "media"),
        ("quiz", "quizzes"),
        ("analysis", "analyses"),
        ("basis", "bases"),
        ("crisis", "crises"),
        ("thesis", "theses"),
        ("cactus", "cacti"),
        ("focus", "foci"),
        ("fungus", "fungi"),
        ("nucleus", "nuclei"),
        ("radius", "radii"),
        ("alumnus", "alumni"),
        ("syllabus", "syllabi"),
        ("potato", "potatoes"),
        ("tomato", "tomatoes"),
        ("hero", "heroes"),
        ("echo", "echoes"),
        ("veto", "vetoes"),
    ];
    const UNCOUNTABLE: &[&str] = &[
        "sheep",
        "fish",
        "deer",
        "series",
        "species",
        "news",
        "information",
        "equipment",
        "money",
        "rice",
        "moose",
        "salmon",
        "trout",
        "swine",
        "bison",
        "metadata",
        "data",
        "media",
        "people",
        "men",
        "women",
        "children",
        "feedback",
        "software",
        "hardware",
    ];
    if UNCOUNTABLE
        .iter()
        .any(|u| w.ends_with(u) && is_word_suffix(&w, u))
    {
        return w;
    }
    for (singular, plural) in IRREGULAR {
        if w.ends_with(singular) && is_word_suffix(&w, singular) {
            return format!("{}{}", &w[..w.len() - singular.len()], plural);
        }
    }
    if w.ends_with("s")
        || w.ends_with('x')
        || w.ends_with('z')
        || w.ends_with("ch")
        || w.ends_with("sh")
    {
        return format!("{w}es");
    }
    if let Some(stem) = w.strip_suffix('y')
        && stem.ends_with(|c: char| c.is_ascii_alphabetic() && !"aeiou".contains(c))
    {
        return format!("{stem}ies");
    }
    format!("{w}s")
}

/// `suffix` ends `word` and is either all of it or long enough to be a word of its own, so
/// `Box` does not become `Boxen` while `Fireman` becomes `Firemen`.
fn is_word_suffix(word: &str, suffix: &str) -> bool {
    word.len() == suffix.len() || suffix.len() >= 3
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
    fn plurals_match_kubebuilder() {
        for (kind, plural) in [
            ("Captain", "captains"),
            ("TestQuota", "testquotas"),
            ("Bus", "buses"),
            ("Box", "boxes"),
            ("Quiz", "quizzes"),
            ("Match", "matches"),
            ("Mesh", "meshes"),
            ("Policy", "policies"),
            ("Gateway", "gateways"),
            ("Ingress", "ingresses"),
            ("Status", "statuses"),
            ("Person", "people"),
            ("Child", "children"),
            ("Sheep", "sheep"),
            ("Memcached", "memcacheds"),
            ("CronJob", "cronjobs"),
            ("Frigate", "frigates"),
            ("Human", "humans"),
            ("Fireman", "firemen"),
            ("Leaf", "leaves"),
            ("DNS", "dnses"),
            ("Index", "indices"),
            ("Key", "keys"),
        ] {
            assert_eq!(pluralize(kind), plural, "{kind}");
        }
    }

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
    fn modules() {
        assert_eq!(kind_module("FrigateShip"), "frigate_ship");
        assert_eq!(kind_module("AWSCluster"), "aws_cluster");
        assert_eq!(module_name("sea-creatures"), "sea_creatures");
        assert_eq!(module_name("foo.policy"), "foo_policy");
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
