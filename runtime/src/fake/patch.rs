//! Patches: merge and JSON patches, and server-side apply with its field ownership and conflicts.

use std::collections::BTreeMap;

use hyper::StatusCode;
use serde_json::{Value, json};

use super::failure::{Failure, Result};
use super::fields::{self, Fields, Path};
use super::managed::{Managed, managed_of, take_fields, write_managed};
use super::resource::{ResourceType, Target};
use super::store::State;
use super::writes::Write;

impl State {
    pub(super) fn patch(
        &mut self,
        target: &Target,
        content_type: &str,
        patch: Value,
        write: &Write,
    ) -> Result<(StatusCode, Value)> {
        let ty = &target.ty;
        let name = target.name().to_owned();
        let media = content_type.split(';').next().unwrap_or_default().trim();
        if media == "application/apply-patch+yaml" {
            return self.apply(target, patch, write);
        }
        let live = self.live(target)?;
        let mut patched = live.clone();
        match media {
            "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
                json_patch::merge(&mut patched, &patch);
            }
            "application/json-patch+json" => {
                let ops: json_patch::Patch = serde_json::from_value(patch).map_err(|e| {
                    Failure::bad_request(format!("the JSON patch is malformed: {e}"))
                })?;
                for op in &ops.0 {
                    // as the apiserver's JSON patch does: `test` of an absent field against
                    // null holds
                    if let json_patch::PatchOperation::Test(test) = op
                        && test.value.is_null()
                        && patched.pointer(test.path.as_str()).is_none()
                    {
                        continue;
                    }
                    json_patch::patch(&mut patched, std::slice::from_ref(op)).map_err(|e| {
                        Failure::invalid(ty, &name, &format!("the JSON patch failed: {e}"))
                    })?;
                }
            }
            other => {
                return Err(Failure::new(
                    415,
                    "UnsupportedMediaType",
                    format!(
                        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (not {other:?})"
                    ),
                ));
            }
        }
        if !patched["metadata"].is_object() {
            patched["metadata"] = json!({});
        }
        if let Some(rv) = patched["metadata"]["resourceVersion"].as_str()
            && Some(rv) != live["metadata"]["resourceVersion"].as_str()
        {
            return Err(Failure::stale(ty, &name));
        }
        self.write_over(target, &live, patched, write)
            .map(|o| (StatusCode::OK, o))
    }

    /// Server-side apply: `applied` names the fields `write.manager` sets; it creates the object
    /// when there is none.
    pub(super) fn apply(
        &mut self,
        target: &Target,
        applied: Value,
        write: &Write,
    ) -> Result<(StatusCode, Value)> {
        let ty = &target.ty;
        let name = target.name().to_owned();
        if !applied.is_object() {
            return Err(Failure::bad_request(
                "the applied configuration is not an object".into(),
            ));
        }
        let wanted: Fields = fields::leaves(&applied, &ty.shape)
            .into_iter()
            .filter(|p| {
                let under_status = p.first().is_some_and(|k| k == "status");
                if target.status {
                    under_status
                } else {
                    !(ty.status && under_status)
                }
            })
            .collect();
        let subresource = target.status.then_some("status");
        let owner = self.owner(ty, &write.manager, "Apply", subresource);
        let live = match self.live(target) {
            Ok(live) => live,
            Err(missing) if missing.code == 404 && !target.status => {
                uid_precondition(ty, &name, &applied, None)?;
                return self.apply_create(target, &applied, &wanted, &owner, write);
            }
            Err(other) => return Err(other),
        };
        uid_precondition(ty, &name, &applied, Some(&live))?;
        let mut entries = managed_of(&live);
        let conflicts = conflicts(&entries, &owner, &wanted, &live, &applied);
        if !conflicts.is_empty() && !write.force {
            return Err(apply_conflict(ty, &name, &conflicts));
        }
        let before: Fields = entries
            .iter()
            .find(|e| e.same_owner(&owner.manager, "Apply", subresource))
            .map(|e| e.fields.clone())
            .unwrap_or_default();
        let mut obj = live.clone();
        for dropped in before.difference(&wanted) {
            let shared = entries.iter().any(|e| {
                !e.same_owner(&owner.manager, "Apply", subresource)
                    && e.fields.iter().any(|p| fields::overlaps(p, dropped))
            });
            if !shared {
                fields::remove(&mut obj, dropped);
            }
        }
        for path in &wanted {
            if let Some(v) = fields::get(&applied, path) {
                fields::set(&mut obj, path, v.clone());
            }
        }
        // forced or not, what this manager now sets is its own; co-owned equal values stay shared
        let taken: Fields = conflicts.values().flatten().cloned().collect();
        for entry in entries.iter_mut() {
            if !entry.same_owner(&owner.manager, "Apply", subresource) {
                entry.fields.retain(|p| !taken.contains(p));
            }
        }
        match entries
            .iter_mut()
            .find(|e| e.same_owner(&owner.manager, "Apply", subresource))
        {
            Some(entry) => {
                entry.fields = wanted.clone();
                entry.time = owner.time.clone();
            }
            None => {
                let mut entry = owner.clone();
                entry.fields = wanted.clone();
                entries.push(entry);
            }
        }
        entries.retain(|e| !e.fields.is_empty());
        write_managed(&mut obj, &entries);
        self.store(target, &live, obj, write)
            .map(|o| (StatusCode::OK, o))
    }

    /// An apply of an object that does not exist: creates it with the `wanted` fields of
    /// `applied`, all owned by `owner`.
    fn apply_create(
        &mut self,
        target: &Target,
        applied: &Value,
        wanted: &Fields,
        owner: &Managed,
        write: &Write,
    ) -> Result<(StatusCode, Value)> {
        let mut obj = json!({ "metadata": {} });
        for path in wanted {
            if let Some(v) = fields::get(applied, path) {
                fields::set(&mut obj, path, v.clone());
            }
        }
        obj["metadata"]["name"] = json!(target.name());
        let checked = Write {
            manager: write.manager.clone(),
            dry_run: true,
            force: write.force,
        };
        let mut created = self.create(target, obj, &checked)?;
        let mut entries = Vec::new();
        take_fields(&mut entries, owner, wanted, true);
        write_managed(&mut created, &entries);
        if write.dry_run {
            return Ok((StatusCode::CREATED, created));
        }
        let stored = self.commit(&target.ty, target.key(), created, "ADDED");
        Ok((StatusCode::CREATED, stored))
    }
}

/// A uid in the applied configuration is a precondition: the object must exist (the apiserver's
/// 409 Conflict) and have that uid (its 422: an object's uid cannot change).
fn uid_precondition(
    ty: &ResourceType,
    name: &str,
    applied: &Value,
    live: Option<&Value>,
) -> Result<()> {
    let Some(uid) = applied["metadata"]["uid"]
        .as_str()
        .filter(|u| !u.is_empty())
    else {
        return Ok(());
    };
    match live.map(|live| live["metadata"]["uid"].as_str().unwrap_or_default()) {
        None => {
            let why = format!(
                "uid mismatch: the provided object specified uid {uid}, and no existing object was found"
            );
            Err(Failure::conflict(ty, name, &why))
        }
        Some(have) if have != uid => {
            let why = format!("metadata.uid: Invalid value: \"{uid}\": field is immutable");
            Err(Failure::invalid(ty, name, &why))
        }
        Some(_) => Ok(()),
    }
}

/// The fields of `wanted` that other managers' `entries` own with a value other than the one
/// `applied` gives, by the label the conflict message names each manager with.
fn conflicts(
    entries: &[Managed],
    owner: &Managed,
    wanted: &Fields,
    live: &Value,
    applied: &Value,
) -> BTreeMap<String, Vec<Path>> {
    let mut conflicts: BTreeMap<String, Vec<Path>> = BTreeMap::new();
    for entry in entries {
        if entry.same_owner(&owner.manager, "Apply", owner.subresource.as_deref()) {
            continue;
        }
        for owned in &entry.fields {
            let clash = wanted.iter().any(|want| {
                fields::overlaps(owned, want) && {
                    let at = if owned.len() >= want.len() {
                        owned
                    } else {
                        want
                    };
                    fields::get(live, at) != fields::get(applied, at)
                }
            });
            if clash {
                let mut label = if entry.operation == "Update" {
                    format!("\"{}\" using {}", entry.manager, entry.api_version)
                } else {
                    format!("\"{}\"", entry.manager)
                };
                if let Some(sub) = &entry.subresource {
                    label.push_str(&format!(" with subresource \"{sub}\""));
                }
                conflicts.entry(label).or_default().push(owned.clone());
            }
        }
    }
    conflicts
}

pub(super) fn apply_conflict(
    ty: &ResourceType,
    name: &str,
    conflicts: &BTreeMap<String, Vec<Path>>,
) -> Failure {
    let count: usize = conflicts.values().map(Vec::len).sum();
    let mut message = format!(
        "Apply failed with {count} conflict{}: ",
        if count == 1 { "" } else { "s" }
    );
    let mut causes = Vec::new();
    let groups: Vec<String> = conflicts
        .iter()
        .map(|(manager, paths)| {
            for p in paths {
                causes.push(json!({
                    "reason": "FieldManagerConflict",
                    "message": format!("conflict with {manager}"),
                    "field": fields::dotted(p),
                }));
            }
            if paths.len() == 1 {
                format!("conflict with {manager}: {}", fields::dotted(&paths[0]))
            } else {
                let list: Vec<String> = paths
                    .iter()
                    .map(|p| format!("- {}", fields::dotted(p)))
                    .collect();
                format!("conflicts with {manager}:\n{}", list.join("\n"))
            }
        })
        .collect();
    message.push_str(&groups.join("\n"));
    let mut failure = Failure::new(409, "Conflict", message).details(ty, name);
    if let Some(details) = &mut failure.details {
        details["causes"] = Value::Array(causes);
    }
    failure
}
