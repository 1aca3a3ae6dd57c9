//! The checks on the names commands take (project name, domain, group, version, kind) and the
//! resolution of built-in groups: each failure one line naming the problem and the fix.

use super::names;
use crate::core_types::{CoreType, core_types};
use crate::error::{Error, Result};

/// Crate names cargo refuses besides keywords.
pub const RESERVED_CRATES: &[&str] = &[
    "test",
    "core",
    "std",
    "alloc",
    "proc-macro",
    "proc_macro",
    "build",
    "deps",
    "examples",
    "incremental",
];

/// Names YAML reads as a boolean or null: a project name or domain written unquoted into the
/// manifests must stay a string.
pub const YAML_WORDS: &[&str] = &["y", "n", "yes", "no", "on", "off", "true", "false", "null"];

/// Checks `name` as a project name; the error names the problem, and the caller adds the fix.
pub fn check_project_name(name: &str) -> Result<()> {
    if !names::is_dns1123_label(name) {
        return Err(Error::msg(format!(
            "project name {name:?} is invalid: it must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending alphanumeric)"
        )));
    }
    let crate_name = names::module_name(name);
    if names::is_rust_keyword(&crate_name) || RESERVED_CRATES.contains(&name) {
        return Err(Error::msg(format!(
            "project name {name:?} cannot name a rust crate (it is a keyword or reserved by cargo)"
        )));
    }
    if !crate_name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(Error::msg(format!(
            "project name {name:?} must start with a letter to name a rust crate"
        )));
    }
    if YAML_WORDS.contains(&name) {
        return Err(Error::msg(format!(
            "project name {name:?} reads as a boolean or null in YAML manifests"
        )));
    }
    Ok(())
}

/// Checks `domain` as the project's domain; the error names the problem, and the caller adds
/// the fix.
pub fn check_domain(domain: &str) -> Result<()> {
    if !names::is_dns1123_subdomain(domain) {
        return Err(Error::msg(format!(
            "domain {domain:?} is invalid: it must be a DNS-1123 subdomain (lower-case labels separated by dots)"
        )));
    }
    if YAML_WORDS.contains(&domain) {
        return Err(Error::msg(format!(
            "domain {domain:?} reads as a boolean or null in YAML manifests"
        )));
    }
    Ok(())
}

/// Checks a version as `--version` gives it: a DNS-1123 label that names a Rust module.
pub fn validate_version(version: &str) -> Result<()> {
    if !names::is_dns1123_label(version) {
        return Err(Error::msg(format!(
            "version {version:?} is invalid: it must be a DNS-1123 label (lower-case letters, digits and '-'); pass e.g. --version v1"
        )));
    }
    let module = names::module_name(version);
    if !version.starts_with(|c: char| c.is_ascii_lowercase()) || names::is_rust_keyword(&module) {
        return Err(Error::msg(format!(
            "version {version:?} cannot name a rust module (it must start with a letter and not be a keyword); pass e.g. --version v1"
        )));
    }
    Ok(())
}

/// Checks a kind as `--kind` gives it: an upper-case ASCII name that shadows no Rust or
/// generated name.
pub fn validate_kind(kind: &str) -> Result<()> {
    if !kind.starts_with(|c: char| c.is_ascii_uppercase()) {
        return Err(Error::msg(format!(
            "invalid kind {kind:?}: must start with an uppercase character; pass e.g. --kind Captain"
        )));
    }
    if !names::is_dns1035_label(&kind.to_ascii_lowercase()) || kind.contains('-') {
        return Err(Error::msg(format!(
            "invalid kind {kind:?}: use only ASCII letters and digits (its lower-case form must be a DNS-1035 label); pass e.g. --kind Captain"
        )));
    }
    if names::RESERVED_KINDS.contains(&kind) || names::is_rust_keyword(kind) {
        return Err(Error::msg(format!(
            "invalid kind {kind:?}: it would shadow a rust prelude or generated name; pick another kind"
        )));
    }
    let module = names::kind_module(kind);
    if names::is_rust_keyword(&module) || module == "mod" {
        return Err(Error::msg(format!(
            "invalid kind {kind:?}: its module name `{module}` is a rust keyword; pick another kind"
        )));
    }
    Ok(())
}

/// Checks a group as `--group` gives it, for a project of `domain`: `<group>.<domain>` (the
/// project's qualified group) a DNS-1123 subdomain, and a Rust module name in a `multigroup`
/// project.
pub fn validate_group(group: &str, qualified: &str, domain: &str, multigroup: bool) -> Result<()> {
    let full = qualified;
    if !names::is_dns1123_subdomain(full) {
        return Err(Error::msg(format!(
            "either group {group:?} or domain {domain:?} is invalid: {full:?} must be a DNS-1123 subdomain; pass e.g. --group crew"
        )));
    }
    let module = names::module_name(group);
    if multigroup
        && (!group.starts_with(|c: char| c.is_ascii_lowercase()) || names::is_rust_keyword(&module))
    {
        return Err(Error::msg(format!(
            "group {group:?} cannot name a rust module (it must start with a letter and not be a keyword); pass another --group"
        )));
    }
    Ok(())
}

/// The type names a kind puts in its version module: the root type the derive generates, the
/// scaffolded spec and status, the derive's client, listers and informer, and `<Kind>List`, the
/// name a list of it conventionally takes.
pub fn kind_names(kind: &str) -> Vec<String> {
    [
        "",
        "Spec",
        "Status",
        "List",
        "Client",
        "Lister",
        "NamespaceLister",
        "Informer",
    ]
    .iter()
    .map(|suffix| format!("{kind}{suffix}"))
    .collect()
}

/// Resolve a built-in group (`apps`, `core`, `networking`, `rbac.authorization` ...).
pub fn find_core(group: &str, version: &str, kind: &str) -> Result<Option<CoreType>> {
    let all = core_types();
    let in_group: Vec<&CoreType> = all
        .iter()
        .filter(|c| {
            c.module == group
                || c.group == group
                || (group == "core" && c.group.is_empty())
                || c.group.strip_suffix(".k8s.io") == Some(group)
        })
        .collect();
    if in_group.is_empty() {
        return Ok(None);
    }
    let in_version: Vec<&&CoreType> = in_group.iter().filter(|c| c.version == version).collect();
    if in_version.is_empty() {
        let mut versions: Vec<&str> = in_group.iter().map(|c| c.version).collect();
        versions.sort_unstable();
        versions.dedup();
        return Err(Error::msg(format!(
            "built-in group {group:?} has no version {version:?}; pass --version with one of {}",
            versions.join(", ")
        )));
    }
    match in_version.iter().find(|c| c.kind == kind) {
        Some(c) => Ok(Some(***c)),
        None => {
            let hint = match names::did_you_mean(kind, in_version.iter().map(|c| c.kind)) {
                Some(k) => format!("did you mean --kind {k}?"),
                None => format!(
                    "see `kubectl api-resources --api-group={}`",
                    in_version[0].group
                ),
            };
            Err(Error::msg(format!(
                "built-in group {group:?} version {version:?} has no kind {kind:?}; {hint}"
            )))
        }
    }
}
