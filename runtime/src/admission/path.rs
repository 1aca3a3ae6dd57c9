//! Field paths as the apiserver prints them: `spec.items[0].name`, `spec.labels[app]`.

/// The field `name` of the object at `at`.
pub(crate) fn child(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_owned()
    } else {
        format!("{at}.{name}")
    }
}

/// The item `i` of the list at `at`.
pub(crate) fn index(at: &str, i: usize) -> String {
    format!("{at}[{i}]")
}

/// The key `key` of the map at `at`.
pub(crate) fn key(at: &str, key: &str) -> String {
    format!("{at}[{key}]")
}
