//! Resource names: the plural and singular forms kubebuilder derives from a kind.

/// The lower-case plural of a kind, following the English rules kubebuilder's pluraliser applies.
pub fn plural(kind: &str) -> String {
    let lower = kind.to_lowercase();
    const IRREGULAR: &[(&str, &str)] = &[
        ("person", "people"),
        ("child", "children"),
        ("man", "men"),
        ("woman", "women"),
        ("mouse", "mice"),
        ("goose", "geese"),
        ("tooth", "teeth"),
        ("foot", "feet"),
        ("ox", "oxen"),
        ("index", "indices"),
        ("matrix", "matrices"),
        ("vertex", "vertices"),
        ("datum", "data"),
        ("criterion", "criteria"),
        ("analysis", "analyses"),
        ("basis", "bases"),
        ("endpoints", "endpoints"),
        ("series", "series"),
        ("species", "species"),
        ("news", "news"),
        ("sheep", "sheep"),
        ("fish", "fish"),
        ("deer", "deer"),
        ("policy", "policies"),
        ("quiz", "quizzes"),
        ("bus", "buses"),
        ("status", "statuses"),
    ];
    for (one, many) in IRREGULAR {
        // short irregulars only as whole words: a Box is not an ox
        if lower == *one || (one.len() >= 5 && lower.ends_with(one)) {
            return format!("{}{many}", &lower[..lower.len() - one.len()]);
        }
    }
    let consonant_before = |suffix_len: usize| {
        lower[..lower.len() - suffix_len]
            .chars()
            .last()
            .is_some_and(|c| !"aeiou".contains(c))
    };
    if lower.ends_with('y') && consonant_before(1) {
        return format!("{}ies", &lower[..lower.len() - 1]);
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|s| lower.ends_with(s))
    {
        return format!("{lower}es");
    }
    if lower.ends_with("fe") {
        return format!("{}ves", &lower[..lower.len() - 2]);
    }
    if lower.ends_with('f')
        && !lower.ends_with("ff")
        && !lower.ends_with("of")
        && !lower.ends_with("ef")
    {
        return format!("{}ves", &lower[..lower.len() - 1]);
    }
    if lower.ends_with('o') && consonant_before(1) && !lower.ends_with("eo") {
        let keep = [
            "photo", "piano", "halo", "memo", "logo", "repo", "zero", "pro", "kilo",
        ];
        if !keep.iter().any(|k| lower.ends_with(k)) {
            return format!("{lower}es");
        }
    }
    format!("{lower}s")
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn plurals_match_kubebuilder() {
        for (kind, want) in [
            ("TestQuota", "testquotas"),
            ("CronJob", "cronjobs"),
            ("Captain", "captains"),
            ("Policy", "policies"),
            ("Box", "boxes"),
            ("Address", "addresses"),
            ("Day", "days"),
            ("Leaf", "leaves"),
            ("Knife", "knives"),
            ("Potato", "potatoes"),
            ("Photo", "photos"),
            ("Admiral", "admirals"),
            ("Endpoints", "endpoints"),
            ("Mesh", "meshes"),
            ("Person", "people"),
            ("Proxy", "proxies"),
            ("Ingress", "ingresses"),
            ("Status", "statuses"),
            ("Database", "databases"),
            ("Repo", "repos"),
            ("Chief", "chiefs"),
        ] {
            assert_eq!(plural(kind), want, "{kind}");
        }
    }
}
