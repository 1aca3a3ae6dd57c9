//! `create api --from-crd`: an existing CRD's versions as the project's own API types. Each
//! version is planned and staged as `create api` stages a version (the storage version first,
//! so the storage marker is never moved), and its types file is then replaced by the types
//! `operator_gen_codegen::crd_import` writes for it.

use std::path::Path;

use operator_gen_codegen::crd_import::{self, Imported};
use operator_gen_codegen::rustgen::{Docs, RustFile};

use crate::error::{Error, Result};
use crate::project::{Project, boilerplate};
use crate::scaffold::{IfExists, Scaffold};
use crate::scaffolding::api::{self, Request};

/// What `create api --from-crd` asks for.
#[derive(Debug)]
pub struct FromCrd<'a> {
    /// The CRD file as given.
    pub file: &'a Path,
    /// Overwrite existing files.
    pub force: bool,
    /// Someone else's kind: the domain of its API group (`--external`).
    pub external_domain: Option<String>,
}

/// The CRD in `file`, read and parsed: one YAML (or JSON) document.
pub fn read(file: &Path) -> Result<serde_json::Value> {
    let Some(text) = crate::gate::read_text(file)? else {
        return Err(Error::msg(format!(
            "cannot read {}: it does not exist; pass the path of a CRD file to --from-crd",
            file.display()
        )));
    };
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).map_err(|e| {
        Error::msg(format!(
            "{} is not YAML: {}; pass a CRD file such as config/crd/bases/<group>_<plural>.yaml",
            file.display(),
            e.to_string().lines().next().unwrap_or_default()
        ))
    })?;
    let docs: Vec<serde_json::Value> = docs.into_iter().filter(|d| !d.is_null()).collect();
    match <[serde_json::Value; 1]>::try_from(docs) {
        Ok([doc]) => Ok(doc),
        Err(docs) => Err(Error::msg(format!(
            "{} holds {} YAML documents; --from-crd takes a file of one CRD",
            file.display(),
            docs.len()
        ))),
    }
}

/// The CRD imported, or the one-line error naming the file and the JSON path.
pub fn import(file: &Path, crd: &serde_json::Value) -> Result<Imported> {
    crd_import::import(crd).map_err(|e| {
        Error::msg(format!(
            "{}: {} at {}; operator-gen cannot write this CRD's schema (see the book's page on --from-crd)",
            file.display(),
            e.message,
            e.path
        ))
    })
}

/// The group and the domain of someone else's API group: `--group` and the rest when the API
/// group starts with it, else the first label and the rest (`cert-manager.io`: `cert-manager`
/// and `io`).
pub fn external_group(api_group: &str, given: Option<&str>) -> Result<(String, String)> {
    let split = match given {
        Some(g) => api_group
            .strip_prefix(g)
            .and_then(|rest| rest.strip_prefix('.'))
            .map(|domain| (g, domain)),
        None => api_group.split_once('.'),
    };
    match split {
        Some((g, domain)) if !g.is_empty() && !domain.is_empty() => {
            Ok((g.to_string(), domain.to_string()))
        }
        _ => Err(Error::msg(format!(
            "API group {api_group} has no group and domain part (`<group>.<domain>`){}; drop --group or pass the API group's first label",
            given
                .map(|g| format!(" starting with --group {g}"))
                .unwrap_or_default()
        ))),
    }
}

/// The group as `create api` takes it for the API group `api_group` of a project of `domain`:
/// `--group` when it qualifies to that API group, else the part before `.<domain>`.
pub fn group_for(api_group: &str, given: Option<&str>, project: &Project) -> Result<String> {
    if let Some(g) = given {
        if project.qualified_group(g) != api_group {
            return Err(Error::msg(format!(
                "--group {g} makes API group {}, but the CRD's group is {api_group}; drop --group",
                project.qualified_group(g)
            )));
        }
        return Ok(g.to_string());
    }
    match api_group.strip_suffix(&format!(".{}", project.domain)) {
        Some(g) if !g.is_empty() => Ok(g.to_string()),
        _ => {
            let (first, rest) = api_group.split_once('.').unwrap_or((api_group, ""));
            Err(Error::msg(format!(
                "the CRD's group {api_group} is not in the project's domain {}; for a kind of your own start the project with `operator-gen init --domain {rest}` (group {first}), or pass --external for someone else's kind",
                project.domain
            )))
        }
    }
}

/// Stages the import of `imported` (group `group` of `project`) in `s`: every version as
/// `create api` scaffolds one, with its types file replaced by the imported types.
pub fn stage(
    s: &mut Scaffold,
    req: &FromCrd,
    imported: &Imported,
    group: &str,
    project: &mut Project,
) -> Result<()> {
    let header = boilerplate::read(s.root())?;
    let file_name = req
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // the stored version first: the others then join a kind whose storage marker is set
    let mut order: Vec<&crd_import::Version> = imported.versions.iter().collect();
    order.sort_by_key(|v| !v.storage);
    for v in order {
        let request = Request {
            group: group.to_string(),
            version: v.name.clone(),
            kind: imported.kind.clone(),
            plural: Some(imported.plural.clone()),
            namespaced: Some(imported.namespaced),
            resource: Some(true),
            controller: Some(false),
            storage: false,
            force: req.force,
            image: None,
            external_domain: req.external_domain.clone(),
        };
        let plan = api::plan(&request, project, &|flag, _| flag.unwrap_or(true))?;
        let Some(types_file) = api::stage_into(s, &plan, project, req.force)? else {
            continue;
        };
        let mut inner_doc = Docs::prose(&format!(
            "The {} API ({}/{}), imported from {file_name} by `operator-gen create api --from-crd`.",
            imported.kind, imported.group, v.name
        ));
        if req.external_domain.is_some() {
            // someone else's kind: no CRD; the controller may read it
            inner_doc.prose.push(
                "Someone else's kind (`--external`): `manifests` writes no CRD for it.".to_string(),
            );
            inner_doc.markers = vec![
                "+kubebuilder:skip".to_string(),
                format!(
                    "+kubebuilder:rbac:groups={},resources={},verbs=get;list;watch",
                    imported.group, imported.plural
                ),
            ];
        }
        let file = RustFile {
            header: header.clone(),
            inner_doc,
            uses: v.uses.clone(),
            items: v.items.to_vec(),
        };
        s.file(&types_file, file.render(), IfExists::Overwrite)?;
    }
    Ok(())
}
