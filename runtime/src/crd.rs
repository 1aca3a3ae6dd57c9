//! CRDs from the derives' definitions, built as `operator-gen manifests` builds them, and the
//! check that a CRD file on disk is still what the derive builds.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition as Crd;

use crate::schema::Definition;

/// One version of a kind as its derive describes it: the spec's and the status' definitions.
/// `Kind::crd_version()` returns it; [`crd_for_versions`] puts several into one CRD.
pub struct CrdVersion {
    pub spec: Definition,
    pub status: Option<Definition>,
}

/// Generator settings that change schemas (`allow_dangerous_types`, `max_desc_len`), as the
/// `operator-gen manifests` flags set them.
pub use operator_gen_codegen::schema::Settings;

/// Why [`crd_for_versions`] built no CRD, or why [`check_crd_file`] found a file stale. It reads
/// as its message (it dereferences to `str`), as the `String` these functions answered did.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CrdError {
    kind: CrdErrorKind,
    message: String,
}

/// What kind of [`CrdError`] it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CrdErrorKind {
    /// No version was given.
    NoVersions,
    /// Every version is marked `+kubebuilder:skipversion`.
    AllVersionsSkipped,
    /// The schema or CRD emitter refused the kind (a type without a schema, versions that
    /// contradict each other).
    Emitter,
    /// The CRD file differs from the one the derive builds.
    StaleFile,
    /// The derive built a CRD it should not have (an operator-gen bug).
    Internal,
}

impl CrdError {
    fn new(kind: CrdErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// What kind of error it is.
    pub fn kind(&self) -> CrdErrorKind {
        self.kind
    }
}

impl std::ops::Deref for CrdError {
    type Target = str;

    fn deref(&self) -> &str {
        &self.message
    }
}

/// The CRD holding every given version of one kind, built as `operator-gen manifests` builds it
/// (exactly one storage version; versions sorted by name, as controller-gen sorts them).
pub fn crd_for_versions(versions: Vec<CrdVersion>) -> Result<Crd, CrdError> {
    crd_for_versions_with(versions, &Settings::default())
}

/// [`crd_for_versions`] with settings, e.g. `allow_dangerous_types` for float fields (the
/// twin of `operator-gen manifests --allow-dangerous-types`).
pub fn crd_for_versions_with(
    versions: Vec<CrdVersion>,
    settings: &Settings,
) -> Result<Crd, CrdError> {
    use operator_gen_codegen::{crd, schema::Scope};
    let Some(first) = versions.first() else {
        return Err(CrdError::new(
            CrdErrorKind::NoVersions,
            "crd_for_versions needs at least one version: pass `Kind::crd_version()` of each",
        ));
    };
    let name = first.spec.def.name.clone();
    let inputs: Vec<crd::VersionInput> = versions
        .iter()
        .map(|v| crd::VersionInput {
            spec: &v.spec,
            status: v
                .status
                .as_ref()
                .map(|s| Box::new(s.clone()) as Box<dyn Scope>),
        })
        .collect();
    match crd::crd(&inputs, settings) {
        Ok(Some(c)) => Ok(c),
        Ok(None) => Err(CrdError::new(
            CrdErrorKind::AllVersionsSkipped,
            format!("every version of {name} is marked `+kubebuilder:skipversion`: it has no CRD"),
        )),
        Err(e) => Err(CrdError::new(CrdErrorKind::Emitter, e.to_string())),
    }
}

/// Whether `on_disk`, a CRD file `operator-gen manifests` wrote, holds `version` as the derive
/// builds it. For a kind of one version the whole text must be equal, byte for byte. For a kind
/// of several the file's fields other than the versions must be equal, and so must its entry of
/// this version but for `storage`, which the kind's versions decide together.
pub fn check_crd_file(on_disk: &str, version: CrdVersion) -> Result<(), CrdError> {
    let stale = |message: String| CrdError::new(CrdErrorKind::StaleFile, message);
    let expected = crd_yaml(&crd_for_versions(vec![version])?);
    let (head, mine) = split_versions(&expected).ok_or_else(|| {
        CrdError::new(
            CrdErrorKind::Internal,
            "the derive's CRD has no versions (an operator-gen bug)",
        )
    })?;
    let [mine] = mine.as_slice() else {
        return Err(CrdError::new(
            CrdErrorKind::Internal,
            "the derive's CRD has more than one version (an operator-gen bug)",
        ));
    };
    let name = version_name(mine).unwrap_or_default();
    let Some((disk_head, theirs)) = split_versions(on_disk) else {
        return Err(stale("the file has no `versions:` list".into()));
    };
    if theirs.len() < 2 {
        return if on_disk == expected {
            Ok(())
        } else {
            Err(stale("the file differs from the derive's CRD".into()))
        };
    }
    if disk_head != head {
        return Err(stale(
            "the CRD's metadata, names or scope differ from the derive's".into(),
        ));
    }
    let Some(entry) = theirs.iter().find(|v| version_name(v) == Some(name)) else {
        return Err(stale(format!("the file has no version {name}")));
    };
    if without_storage(entry) != without_storage(mine) {
        return Err(stale(format!(
            "its version {name} differs from the derive's"
        )));
    }
    Ok(())
}

/// The text up to and including the CRD's `  versions:` line, and each version's item after it.
/// The emitter sorts keys, so `versions` is the last key of `spec`, itself the last top-level key.
fn split_versions(text: &str) -> Option<(&str, Vec<&str>)> {
    const LIST: &str = "\n  versions:\n";
    let at = text.find(LIST)? + LIST.len();
    let (head, rest) = text.split_at(at);
    let mut items = Vec::new();
    let mut start = 0;
    for (offset, _) in rest.match_indices("\n  - ") {
        items.push(&rest[start..=offset]);
        start = offset + 1;
    }
    items.push(&rest[start..]);
    if !items.iter().all(|i| i.starts_with("  - ")) {
        return None;
    }
    Some((head, items))
}

/// The `name:` of a version's item.
fn version_name(item: &str) -> Option<&str> {
    item.lines().find_map(|l| {
        l.strip_prefix("  - name: ")
            .or_else(|| l.strip_prefix("    name: "))
    })
}

fn without_storage(item: &str) -> Vec<&str> {
    item.lines()
        .filter(|l| !l.starts_with("    storage: "))
        .collect()
}

/// The text of a CRD file, byte for byte what `operator-gen manifests` writes.
pub fn crd_yaml(crd: &Crd) -> String {
    operator_gen_codegen::crd::to_yaml(crd)
}
