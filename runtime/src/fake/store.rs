//! The fake's state: the resources it serves, the objects it keeps at their revisions, reads
//! (get, list), and the one place a change is stored and sent to the watches.

use std::collections::BTreeMap;

use futures::channel::mpsc;
use hyper::body::Bytes;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff;
use serde_json::{Value, json};

use super::events::{EVENTS_GROUP, EVENTS_TO_CORE, rename_fields};
use super::failure::{Failure, Result};
use super::hooks::Hooks;
use super::resource::{Key, ResourceType, Target, served};
use super::select::Selector;
use super::watch::{Change, Watch, Watches, line};
use super::wire::{Query, read_continue, write_continue};

/// Everything the fake holds, behind its one lock.
#[derive(Default)]
pub(super) struct State {
    /// The resources served, one per group, version and plural.
    pub(super) types: Vec<ResourceType>,
    /// The objects as stored (an `events.k8s.io` Event as the core Event it is kept as).
    pub(super) objects: BTreeMap<Key, Value>,
    /// The revision of the latest write, which every `resourceVersion` comes from.
    pub(super) revision: u64,
    /// How many uids have been handed out.
    pub(super) uids: u64,
    /// How many generated names have been handed out.
    pub(super) names: u64,
    pub(super) watches: Watches,
    /// The admission webhooks registered with the fake.
    pub(super) hooks: Hooks,
}

/// The time now, as the apiserver writes timestamps.
pub(super) fn now() -> Value {
    serde_json::to_value(Time(jiff::Timestamp::now())).unwrap_or(Value::Null)
}

/// The namespaces a fresh apiserver has.
pub(super) const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-node-lease", "kube-public", "kube-system"];

/// What the apiserver gives a new Namespace: the `kubernetes` finalizer in its spec, phase
/// Active, and the label naming it.
pub(super) fn namespace_defaults(obj: &mut Value, name: &str) {
    if obj["spec"]["finalizers"].is_null() {
        obj["spec"]["finalizers"] = json!(["kubernetes"]);
    }
    obj["status"] = json!({ "phase": "Active" });
    obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
}

/// Characters of generated name suffixes, as the apiserver picks them (no vowels, no look-alikes).
pub(super) const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

impl State {
    pub(super) fn add_type(&mut self, ty: ResourceType) {
        self.types
            .retain(|t| !(t.group == ty.group && t.version == ty.version && t.plural == ty.plural));
        self.types.push(ty);
    }

    pub(super) fn find(&self, group: &str, version: &str, plural: &str) -> Option<ResourceType> {
        self.types
            .iter()
            .find(|t| t.group == group && t.version == version && t.plural == plural)
            .cloned()
    }

    /// Resolves `/api/v1/...` and `/apis/<group>/<version>/...`.
    pub(super) fn route(&self, path: &str) -> Result<Target> {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (group, version, rest) = match segments.as_slice() {
            ["api", version, rest @ ..] => ("", *version, rest),
            ["apis", group, version, rest @ ..] => (*group, *version, rest),
            _ => return Err(Failure::no_resource()),
        };
        let (namespace, rest) = match rest {
            ["namespaces", ns, plural, tail @ ..] if !["status", "finalize"].contains(plural) => {
                (Some((*ns).to_owned()), {
                    let mut r = vec![*plural];
                    r.extend_from_slice(tail);
                    r
                })
            }
            other => (None, other.to_vec()),
        };
        let (plural, name, sub) = match rest.as_slice() {
            [plural] => (*plural, None, None),
            [plural, name] => (*plural, Some((*name).to_owned()), None),
            [plural, name, sub] => (*plural, Some((*name).to_owned()), Some(*sub)),
            _ => return Err(Failure::no_resource()),
        };
        let ty = self
            .find(group, version, plural)
            .ok_or_else(Failure::no_resource)?;
        let status = match sub {
            None => false,
            Some("status") if ty.status => true,
            Some(_) => return Err(Failure::no_resource()),
        };
        if namespace.is_some() && !ty.namespaced {
            return Err(Failure::no_resource());
        }
        Ok(Target {
            ty,
            namespace,
            name,
            status,
        })
    }

    /// The object as `target`'s resource serves it: every write works on this view.
    pub(super) fn live(&self, target: &Target) -> Result<Value> {
        if target.ty.namespaced && target.namespace.is_none() {
            return Err(Failure::no_resource());
        }
        self.objects
            .get(&target.key())
            .map(|o| served(&target.ty, o))
            .ok_or_else(|| Failure::not_found(&target.ty, target.name()))
    }

    pub(super) fn get(&self, target: &Target) -> Result<Value> {
        self.live(target).map(|o| served(&target.ty, &o))
    }

    pub(super) fn selected<'a>(
        &'a self,
        target: &'a Target,
        selector: &'a Selector,
    ) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects
            .iter()
            .filter(move |((g, p, ns, _), _)| {
                *g == target.ty.store_group
                    && *p == target.ty.plural
                    && target.namespace.as_ref().is_none_or(|want| want == ns)
            })
            .map(|(_, obj)| obj)
            .filter(move |obj| selector.matches(obj))
    }

    pub(super) fn list(&self, target: &Target, query: &Query) -> Result<Value> {
        let selector = Selector::parse(query.get("labelSelector"), query.get("fieldSelector"))
            .map_err(|e| Failure::bad_request(e.to_string()))?;
        let (revision, after) = match query.get("continue").filter(|c| !c.is_empty()) {
            Some(token) => {
                let (revision, ns, name) = read_continue(token).ok_or_else(|| {
                    Failure::bad_request(format!(
                        "continue key is not valid: {token:?} was not issued by this server"
                    ))
                })?;
                (revision, Some((ns, name)))
            }
            None => (self.revision, None),
        };
        let mut items: Vec<&Value> = self
            .selected(target, &selector)
            .filter(|o| {
                after.as_ref().is_none_or(|(ns, name)| {
                    let at = (
                        o["metadata"]["namespace"].as_str().unwrap_or_default(),
                        o["metadata"]["name"].as_str().unwrap_or_default(),
                    );
                    at > (ns.as_str(), name.as_str())
                })
            })
            .collect();
        let mut metadata = json!({ "resourceVersion": revision.to_string() });
        let limit = query
            .get("limit")
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|l| *l > 0);
        if let Some(limit) = limit
            && items.len() > limit
        {
            let rest = items.len() - limit;
            items.truncate(limit);
            let last = items[limit - 1];
            metadata["continue"] = json!(write_continue(
                revision,
                last["metadata"]["namespace"].as_str().unwrap_or_default(),
                last["metadata"]["name"].as_str().unwrap_or_default(),
            ));
            if query.get("labelSelector").is_none_or(str::is_empty)
                && query.get("fieldSelector").is_none_or(str::is_empty)
            {
                metadata["remainingItemCount"] = json!(rest);
            }
        }
        let items: Vec<Value> = items.into_iter().map(|o| served(&target.ty, o)).collect();
        Ok(json!({
            "apiVersion": target.ty.api_version(),
            "kind": format!("{}List", target.ty.kind),
            "metadata": metadata,
            "items": items,
        }))
    }

    /// Opens a watch of `target`'s objects as `query` asks (selectors, `resourceVersion`,
    /// `sendInitialEvents`); its first events are sent at once.
    pub(super) fn watch(
        &mut self,
        target: &Target,
        query: &Query,
    ) -> Result<mpsc::UnboundedReceiver<Bytes>> {
        let selector = Selector::parse(query.get("labelSelector"), query.get("fieldSelector"))
            .map_err(|e| Failure::bad_request(e.to_string()))?;
        let from = query
            .get("resourceVersion")
            .filter(|rv| !rv.is_empty() && *rv != "0")
            .map(|rv| {
                rv.parse::<u64>()
                    .map_err(|_| Failure::bad_request(format!("invalid resource version: {rv:?}")))
            })
            .transpose()?;
        let initial = query.get("sendInitialEvents").is_some_and(|s| s == "true");
        let (watch, rx) = Watch::new(
            target.ty.clone(),
            target.namespace.clone(),
            selector.clone(),
        );
        let first = match from {
            Some(revision) if !initial => self.watches.since(revision, &watch),
            _ => {
                let mut first: Vec<Bytes> = self
                    .selected(target, &selector)
                    .map(|obj| line("ADDED", &served(&target.ty, obj)))
                    .collect();
                if initial {
                    let bookmark = json!({
                        "apiVersion": target.ty.api_version(), "kind": target.ty.kind,
                        "metadata": {
                            "resourceVersion": self.revision.to_string(),
                            "annotations": { "k8s.io/initial-events-end": "true" },
                        },
                    });
                    first.push(line("BOOKMARK", &bookmark));
                }
                first
            }
        };
        self.watches.add(watch, first);
        Ok(rx)
    }

    /// Stores the Namespace `name` unless it exists.
    pub(super) fn ensure_namespace(&mut self, name: &str) {
        let key = (
            String::new(),
            "namespaces".to_owned(),
            String::new(),
            name.to_owned(),
        );
        if self.objects.contains_key(&key) {
            return;
        }
        let Some(ty) = self.find("", "v1", "namespaces") else {
            return;
        };
        let mut obj = json!({ "metadata": { "name": name } });
        namespace_defaults(&mut obj, name);
        self.stamp_new(&ty, &mut obj);
        self.commit(&ty, key, obj, "ADDED");
    }

    /// Sets what the server sets on a new object.
    pub(super) fn stamp_new(&mut self, ty: &ResourceType, obj: &mut Value) {
        self.uids += 1;
        let meta = &mut obj["metadata"];
        if meta["uid"].as_str().is_none_or(str::is_empty) {
            meta["uid"] = json!(format!("00000000-0000-4000-8000-{:012x}", self.uids));
        }
        if meta["creationTimestamp"].is_null() {
            meta["creationTimestamp"] = now();
        }
        if ty.generation && meta["generation"].is_null() {
            meta["generation"] = json!(1);
        }
    }

    /// Stores `obj` (as `ty` serves it) at the next revision, tells the watches, and returns it
    /// as `ty` serves it.
    pub(super) fn commit(
        &mut self,
        ty: &ResourceType,
        key: Key,
        mut obj: Value,
        kind: &'static str,
    ) -> Value {
        self.revision += 1;
        obj["metadata"]["resourceVersion"] = json!(self.revision.to_string());
        if ty.group == EVENTS_GROUP {
            rename_fields(&mut obj, EVENTS_TO_CORE);
            obj["apiVersion"] = json!("v1");
        } else {
            obj["apiVersion"] = json!(ty.api_version());
        }
        obj["kind"] = json!(ty.kind);
        let before = if kind == "DELETED" {
            self.objects.remove(&key)
        } else {
            self.objects.insert(key, obj.clone())
        };
        let change = Change {
            revision: self.revision,
            group: ty.store_group.clone(),
            plural: ty.plural.clone(),
            kind,
            object: obj.clone(),
            before: before.filter(|_| kind == "MODIFIED"),
        };
        self.watches.publish(change);
        served(ty, &obj)
    }

    pub(super) fn suffix(&mut self) -> String {
        self.names += 1;
        // a fixed scramble of a counter: distinct, deterministic, and spread like random names
        let mut n = self.names.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20;
        (0..5)
            .map(|_| {
                let c = SUFFIX_ALPHABET[(n % SUFFIX_ALPHABET.len() as u64) as usize];
                n /= SUFFIX_ALPHABET.len() as u64;
                c as char
            })
            .collect()
    }
}
