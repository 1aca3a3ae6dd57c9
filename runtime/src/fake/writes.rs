//! Writes: create, update and delete, as the apiserver checks and stamps them, each change of
//! fields recorded as its manager's.

use serde_json::{Value, json};

use super::failure::{Failure, Result};
use super::fields::{self, Fields};
use super::managed::{Managed, managed_of, take_fields, write_managed};
use super::resource::{Key, ResourceType, Target, served};
use super::select::Selector;
use super::store::{State, namespace_defaults, now};
use super::wire::Query;

/// A write's options from the query.
pub(super) struct Write {
    pub(super) manager: String,
    pub(super) dry_run: bool,
    pub(super) force: bool,
}

impl State {
    pub(super) fn create(
        &mut self,
        target: &Target,
        mut obj: Value,
        write: &Write,
    ) -> Result<Value> {
        let ty = &target.ty;
        if ty.namespaced && target.namespace.is_none() {
            return Err(Failure::no_resource());
        }
        if !obj.is_object() {
            return Err(Failure::bad_request("the body is not a JSON object".into()));
        }
        if !obj["metadata"].is_object() {
            obj["metadata"] = json!({});
        }
        let namespace = target.namespace.clone().unwrap_or_default();
        if let Some(ns) = obj["metadata"]["namespace"].as_str()
            && ty.namespaced
            && !ns.is_empty()
            && ns != namespace
        {
            return Err(Failure::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
                    .into(),
            ));
        }
        let name = self.new_name(ty, &namespace, &mut obj)?;
        let key = (
            ty.store_group.clone(),
            ty.plural.clone(),
            namespace.clone(),
            name.clone(),
        );
        clear_server_fields(ty, &namespace, &mut obj);
        if ty.namespaced {
            let home = (
                String::new(),
                "namespaces".to_owned(),
                String::new(),
                namespace.clone(),
            );
            if !self.objects.contains_key(&home) {
                let namespaces = self
                    .find("", "v1", "namespaces")
                    .unwrap_or_else(|| ty.clone());
                return Err(Failure::not_found(&namespaces, &namespace));
            }
        }
        if ty.group.is_empty() && ty.plural == "namespaces" {
            namespace_defaults(&mut obj, &name);
        }
        obj["apiVersion"] = json!(ty.api_version());
        obj["kind"] = json!(ty.kind);
        // as the apiserver: its schema is checked before the name is looked up in storage
        let mut obj = self.admission(ty, obj, None, true)?;
        if self.objects.contains_key(&key) {
            return Err(Failure::already_exists(ty, &name));
        }
        self.stamp_new(ty, &mut obj);
        let owner = self.owner(ty, &write.manager, "Update", None);
        let mut entries = Vec::new();
        take_fields(
            &mut entries,
            &owner,
            &fields::leaves(&obj, &ty.shape),
            false,
        );
        write_managed(&mut obj, &entries);
        if write.dry_run {
            return Ok(obj);
        }
        Ok(self.commit(ty, key, obj, "ADDED"))
    }

    /// The name of an object being created: its own, or its `generateName` with a suffix no
    /// object of its kind and namespace has (written into the object).
    fn new_name(&mut self, ty: &ResourceType, namespace: &str, obj: &mut Value) -> Result<String> {
        let name = obj["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if !name.is_empty() {
            return Ok(name);
        }
        let prefix = obj["metadata"]["generateName"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if prefix.is_empty() {
            return Err(Failure::invalid(
                ty,
                "",
                "metadata.name: Required value: name or generateName is required",
            ));
        }
        let name = loop {
            let candidate = format!("{prefix}{}", self.suffix());
            let key = (
                ty.store_group.clone(),
                ty.plural.clone(),
                namespace.to_owned(),
                candidate.clone(),
            );
            if !self.objects.contains_key(&key) {
                break candidate;
            }
        };
        obj["metadata"]["name"] = json!(name);
        Ok(name)
    }

    pub(super) fn owner(
        &self,
        ty: &ResourceType,
        manager: &str,
        operation: &str,
        subresource: Option<&str>,
    ) -> Managed {
        Managed {
            manager: manager.to_owned(),
            operation: operation.to_owned(),
            subresource: subresource.map(str::to_owned),
            api_version: ty.api_version(),
            time: now(),
            fields: Fields::new(),
        }
    }

    pub(super) fn update(
        &mut self,
        target: &Target,
        mut obj: Value,
        write: &Write,
    ) -> Result<Value> {
        let ty = &target.ty;
        let live = self.live(target)?;
        let name = target.name();
        if let Some(body_name) = obj["metadata"]["name"].as_str()
            && !body_name.is_empty()
            && body_name != name
        {
            return Err(Failure::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        match obj["metadata"]["resourceVersion"]
            .as_str()
            .filter(|rv| !rv.is_empty())
        {
            None if !ty.unconditional_update => {
                return Err(Failure::invalid(
                    ty,
                    name,
                    "metadata.resourceVersion: Invalid value: 0: must be specified for an update",
                ));
            }
            Some(rv) if Some(rv) != live["metadata"]["resourceVersion"].as_str() => {
                return Err(Failure::stale(ty, name));
            }
            _ => {}
        }
        if !obj["metadata"].is_object() {
            obj["metadata"] = json!({});
        }
        self.write_over(target, &live, obj, write)
    }

    /// Finishes an update or a merge or JSON patch: keeps what the client may not change,
    /// tracks the changed fields as `write.manager`'s, and stores.
    pub(super) fn write_over(
        &mut self,
        target: &Target,
        live: &Value,
        mut obj: Value,
        write: &Write,
    ) -> Result<Value> {
        let ty = &target.ty;
        for server_owned in [
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "generation",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "resourceVersion",
            "managedFields",
        ] {
            match live["metadata"].get(server_owned) {
                Some(v) => obj["metadata"][server_owned] = v.clone(),
                None => {
                    if let Value::Object(meta) = &mut obj["metadata"] {
                        meta.remove(server_owned);
                    }
                }
            }
        }
        obj = scoped(ty, target.status, live, obj);
        let subresource = target.status.then_some("status");
        let owner = self.owner(ty, &write.manager, "Update", subresource);
        let mut entries = managed_of(live);
        take_fields(
            &mut entries,
            &owner,
            &fields::changed(live, &obj, &ty.shape),
            false,
        );
        write_managed(&mut obj, &entries);
        self.store(target, live, obj, write)
    }

    /// The admission chain of a write, as the apiserver runs it: the schema's pruning and
    /// defaults, the mutating webhooks (with `webhooks`), the schema's pruning, defaults and
    /// checks again, and the validating webhooks.
    fn admission(
        &self,
        ty: &ResourceType,
        mut obj: Value,
        old: Option<&Value>,
        webhooks: bool,
    ) -> Result<Value> {
        if !webhooks {
            return admitted(ty, obj, old);
        }
        if let Some(validator) = &ty.admission {
            validator.prepare(&mut obj);
        }
        let obj = admitted(ty, self.hooks.mutate(ty, obj)?, old)?;
        self.hooks.validate(ty, &obj, old)?;
        Ok(obj)
    }

    /// Stores the new version of a live object: the generation bumped on a change of its spec,
    /// nothing written when nothing changed, the object removed when its last finalizer went
    /// during its deletion.
    pub(super) fn store(
        &mut self,
        target: &Target,
        live: &Value,
        mut obj: Value,
        write: &Write,
    ) -> Result<Value> {
        let ty = &target.ty;
        obj["apiVersion"] = json!(ty.api_version());
        obj["kind"] = json!(ty.kind);
        let mut obj = self.admission(ty, obj, Some(live), !target.status)?;
        if without_managed(&obj) == without_managed(live) {
            return Ok(served(ty, live));
        }
        if ty.generation && spec_part(&obj, ty.status) != spec_part(live, ty.status) {
            let generation = live["metadata"]["generation"].as_i64().unwrap_or(0);
            obj["metadata"]["generation"] = json!(generation + 1);
        }
        if write.dry_run {
            return Ok(served(ty, &obj));
        }
        let gone = !obj["metadata"]["deletionTimestamp"].is_null() && !has_finalizers(&obj);
        let kind = if gone { "DELETED" } else { "MODIFIED" };
        let stored = self.commit(ty, target.key(), obj, kind);
        Ok(served(ty, &stored))
    }

    /// Deletes every selected object as [`delete`](Self::delete) does one; answers the list of
    /// them as they were when deleted (or marked).
    pub(super) fn delete_collection(
        &mut self,
        target: &Target,
        query: &Query,
        write: &Write,
    ) -> Result<Value> {
        let selector = Selector::parse(query.get("labelSelector"), query.get("fieldSelector"))
            .map_err(|e| Failure::bad_request(e.to_string()))?;
        let keys: Vec<Key> = self
            .selected(target, &selector)
            .map(|o| {
                (
                    target.ty.store_group.clone(),
                    target.ty.plural.clone(),
                    o["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    o["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                )
            })
            .collect();
        let mut items = Vec::new();
        for (_, _, namespace, name) in keys {
            let one = Target {
                ty: target.ty.clone(),
                namespace: target.ty.namespaced.then_some(namespace),
                name: Some(name),
                status: false,
            };
            let before = self.live(&one)?;
            let after = self.delete(&one, &Value::Null, write)?;
            items.push(if after["kind"] == "Status" {
                served(&target.ty, &before)
            } else {
                after
            });
        }
        Ok(json!({
            "apiVersion": target.ty.api_version(),
            "kind": format!("{}List", target.ty.kind),
            "metadata": { "resourceVersion": self.revision.to_string() },
            "items": items,
        }))
    }

    pub(super) fn delete(
        &mut self,
        target: &Target,
        options: &Value,
        write: &Write,
    ) -> Result<Value> {
        let ty = &target.ty;
        let live = self.live(target)?;
        let name = target.name().to_owned();
        let current = live["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default();
        if let Some(rv) = options["preconditions"]["resourceVersion"].as_str()
            && rv != current
        {
            return Err(Failure::conflict(
                ty,
                &name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {current}"
                ),
            ));
        }
        if let Some(uid) = options["preconditions"]["uid"].as_str()
            && Some(uid) != live["metadata"]["uid"].as_str()
        {
            let actual = live["metadata"]["uid"].as_str().unwrap_or_default();
            return Err(Failure::conflict(
                ty,
                &name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                ),
            ));
        }
        if has_finalizers(&live) {
            if !live["metadata"]["deletionTimestamp"].is_null() {
                return Ok(served(ty, &live));
            }
            let mut obj = live.clone();
            obj["metadata"]["deletionTimestamp"] = now();
            obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            if ty.generation {
                let generation = live["metadata"]["generation"].as_i64().unwrap_or(0);
                obj["metadata"]["generation"] = json!(generation + 1);
            }
            if write.dry_run {
                return Ok(served(ty, &obj));
            }
            let stored = self.commit(ty, target.key(), obj, "MODIFIED");
            return Ok(served(ty, &stored));
        }
        if !write.dry_run {
            self.commit(ty, target.key(), live.clone(), "DELETED");
        }
        let mut details =
            json!({ "name": name, "kind": ty.plural, "uid": live["metadata"]["uid"] });
        if !ty.group.is_empty() {
            details["group"] = json!(ty.group);
        }
        Ok(json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": details,
        }))
    }
}

/// `obj` as its kind's CRD admits it (pruned and defaulted) to replace `old` (`None` on a
/// create), or the apiserver's 422 Invalid; kinds without a CRD admit anything.
pub(super) fn admitted(ty: &ResourceType, obj: Value, old: Option<&Value>) -> Result<Value> {
    let Some(validator) = &ty.admission else {
        return Ok(obj);
    };
    match old {
        None => validator.admit(obj),
        Some(old) => validator.admit_update(obj, old),
    }
    .map_err(|invalid| Failure::refused(&invalid))
}

/// What a write to the object or to its status subresource may change: with a status
/// subresource, the object's writes keep the live status and the status' writes keep all else.
pub(super) fn scoped(ty: &ResourceType, to_status: bool, live: &Value, mut obj: Value) -> Value {
    if to_status {
        let mut kept = live.clone();
        match obj.get("status") {
            Some(status) => kept["status"] = status.clone(),
            None => {
                if let Value::Object(map) = &mut kept {
                    map.remove("status");
                }
            }
        }
        if let Some(managed) = obj["metadata"].get("managedFields") {
            kept["metadata"]["managedFields"] = managed.clone();
        }
        return kept;
    }
    if ty.status
        && let Value::Object(map) = &mut obj
    {
        match live.get("status") {
            Some(status) => {
                map.insert("status".into(), status.clone());
            }
            None => {
                map.remove("status");
            }
        }
    }
    obj
}

/// The object with `metadata` (and `status`, when `without_status`) left out: what a change of
/// bumps `generation`.
pub(super) fn spec_part(obj: &Value, without_status: bool) -> Value {
    let mut v = obj.clone();
    if let Value::Object(map) = &mut v {
        map.remove("metadata");
        if without_status {
            map.remove("status");
        }
    }
    v
}

pub(super) fn without_managed(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Value::Object(meta) = &mut v["metadata"] {
        meta.remove("managedFields");
    }
    v
}

pub(super) fn has_finalizers(obj: &Value) -> bool {
    obj["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty())
}

/// Drops what a client may not set on a new object (the server's metadata; the status, which a
/// status subresource owns) and sets its namespace to the request's.
fn clear_server_fields(ty: &ResourceType, namespace: &str, obj: &mut Value) {
    if let Value::Object(meta) = &mut obj["metadata"] {
        for server_owned in [
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
        ] {
            meta.remove(server_owned);
        }
        if ty.namespaced {
            meta.insert("namespace".into(), json!(namespace));
        } else {
            meta.remove("namespace");
        }
    }
    if ty.status
        && let Value::Object(map) = obj
    {
        map.remove("status");
    }
}
