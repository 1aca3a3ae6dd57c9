//! Where a project's per-kind files live: the directories and file names `create api` and
//! `create webhook` write, which later commands find again.

use super::Project;
use super::names;

/// A version's directory under `src/api/` (and `src/webhook/`): `v1`, or `crew/v1` in a
/// multigroup project.
pub fn version_dir(project: &Project, group: &str, version: &str) -> String {
    let version_mod = names::module_name(version);
    if project.multigroup {
        format!("{}/{version_mod}", names::module_name(group))
    } else {
        version_mod
    }
}

/// The Rust path of a version's module under the crate (`crate::api::v1`, or
/// `crate::api::crew::v1` in a multigroup project).
pub fn version_module_path(project: &Project, group: &str, version: &str) -> String {
    format!(
        "crate::api::{}",
        version_dir(project, group, version).replace('/', "::")
    )
}

/// The types file of a version of a kind.
pub fn types_file(project: &Project, group: &str, version: &str, kind: &str) -> String {
    format!(
        "src/api/{}/{}.rs",
        version_dir(project, group, version),
        names::kind_module(kind)
    )
}

/// The prefix of a kind's file names under config/: `crew_captain` in a multigroup project, else
/// `captain`.
pub fn config_prefix(multigroup: bool, group: &str, kind: &str) -> String {
    let kind_lower = names::lower(kind);
    if multigroup {
        format!("{}_{kind_lower}", names::module_name(group))
    } else {
        kind_lower
    }
}

/// The prefix of a kind's role names: `crew-captain` in a multigroup project, else `captain`.
pub fn role_prefix(multigroup: bool, group: &str, kind: &str) -> String {
    let kind_lower = names::lower(kind);
    if multigroup {
        format!("{}-{kind_lower}", group.replace('.', "-"))
    } else {
        kind_lower
    }
}
