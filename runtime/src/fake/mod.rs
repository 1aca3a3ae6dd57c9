//! An in-memory Kubernetes API for unit tests, served to a real [`kube::Client`]: a controller
//! under test runs its own requests through kube's client against it, with no apiserver.
//!
//! ```no_run
//! # async fn demo() {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//! use operator_gen_runtime::fake::FakeApi;
//!
//! let fake = FakeApi::new();
//! let api: Api<ConfigMap> = Api::namespaced(fake.client(), "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! api.create(&PostParams::default(), &cm).await.expect("created");
//! # }
//! ```
//!
//! What it models, as the apiserver does it (a test in the operator-gen repository runs one
//! behaviour table against this fake and against a real kube-apiserver, so the two agree):
//!
//! - **Resources**: the kinds of a CRD given to [`FakeApi::with_crd`] (every served version,
//!   scope and status subresource as the CRD says), types registered with
//!   [`FakeApi::register`] (a status subresource assumed), and the built-in resources a
//!   controller touches: core `configmaps`, `secrets`, `serviceaccounts`, `services`,
//!   `namespaces`, `events`, `events.k8s.io` `events`, `coordination.k8s.io` `leases`, and apps
//!   `deployments`. Other paths answer 404 NotFound. Objects of a kind are stored once and served
//!   under any of its versions without conversion (the CRD's `None` strategy). Core and
//!   `events.k8s.io` Events are one store, as on the apiserver: an Event written through one
//!   API reads through the other, its fields renamed (`involvedObject`/`regarding`,
//!   `message`/`note`, `reportingComponent`/`reportingController`, the `deprecated*` fields).
//! - **Namespaces**: `default`, `kube-system`, `kube-public` and `kube-node-lease` exist;
//!   creating in another namespace needs its Namespace (else 404 NotFound `namespaces "x" not
//!   found`), which gets phase Active, the `kubernetes` spec finalizer and the
//!   `kubernetes.io/metadata.name` label; seeding an object creates its namespace. Deleting a
//!   Namespace removes it at once and leaves its objects (there is no namespace controller).
//! - **Reads**: get; list with `labelSelector` (`=`, `==`, `!=`, `in`, `notin`, exists, `!`) and
//!   `fieldSelector` (`metadata.name`, `metadata.namespace`; another field is 400 BadRequest), in
//!   namespace-then-name order, with the list's `resourceVersion`; `limit` pages with an opaque
//!   `continue` token (and `remainingItemCount` without selectors), a later page reading the
//!   objects as they are then, not as they were at the first page.
//! - **Writes**: create (`generateName` gets five characters as the apiserver's do; an existing
//!   name is 409 AlreadyExists; no name is 422 Invalid), update (a stale `resourceVersion` is
//!   409 Conflict with the apiserver's message; custom resources need one, 422 Invalid without),
//!   and patch: merge (RFC 7386; strategic merge is served as a merge), JSON (RFC 6902; a
//!   failing `test` is 422 Invalid, a `test` of an absent field against `null` holds) and
//!   server-side apply. `dryRun` answers without storing. Every write that changes the object
//!   takes the next value of one global revision as `resourceVersion`; one that changes nothing
//!   keeps it and sends no event. The server sets `uid`, `creationTimestamp`, and, on kinds that
//!   have it (custom resources, Deployments), `generation`: 1 on create, bumped when anything but
//!   `metadata` (and `status`, with a status subresource) changes, and when an object with
//!   finalizers is marked for deletion.
//! - **Status subresource**: writes to `/status` change only `status`; writes to the object
//!   leave `status` as it was (and create drops it).
//! - **Server-side apply**, simplified: each manager owns the leaf paths of the objects it
//!   applied (a list the CRD marks `x-kubernetes-list-type: map` merges item by item on its
//!   keys, as `status.conditions` keyed by `type` does; `metadata.finalizers` and a list of
//!   scalars marked `x-kubernetes-list-type: set` merge item by item on their values; other lists
//!   and empty objects are leaves: atomic, owned and replaced whole), and each update, merge or JSON patch gives the
//!   fields it changed to its `fieldManager` (operation `Update`), taking them from the others.
//!   An apply sets the fields it names, removes those its manager owned before and no longer
//!   names (unless another manager owns them too), and creates the object when there is none.
//!   Naming a field another manager owns with a different value is 409 Conflict (`Apply failed
//!   with 1 conflict: conflict with "other": .spec.size`, the apiserver's wording) unless
//!   `force=true`, which takes the field over. `metadata.managedFields` is written in the
//!   FieldsV1 form, one path per leaf; ownership sent by a client in the object is ignored.
//! - **Delete**: an object without finalizers goes at once (a DELETED event; the answer is a
//!   success Status naming it); one with finalizers gets `deletionTimestamp` and
//!   `deletionGracePeriodSeconds: 0` and stays (MODIFIED) until a write removes its last
//!   finalizer, when it goes (DELETED). A `resourceVersion` or `uid` precondition that does not
//!   hold is 409 Conflict. `deleteCollection` deletes each selected object so and answers the
//!   list of them.
//! - **Watch**: newline-delimited `{"type", "object"}` events, ADDED, MODIFIED and DELETED,
//!   filtered by namespace and selectors; from a `resourceVersion` the events after it are
//!   replayed, without one (or from `0`) every current object comes first as ADDED; with
//!   `sendInitialEvents=true` those are followed by the BOOKMARK that ends them. A change that
//!   takes an object out of a watch's selector is DELETED to it, one that brings it in is ADDED.
//!   The stream ends after `timeoutSeconds`; no periodic bookmarks.
//! - **Admission of custom resources**: a kind served from a CRD ([`FakeApi::with_crd`]) admits
//!   what the apiserver admits with that CRD's schema, on every create, update, merge and JSON
//!   patch, server-side apply, status write and seeded object: unknown fields pruned, defaults
//!   set, the structural schema and the CEL rules (`x-kubernetes-validations`, transition rules
//!   on updates) checked, by [`crate::admission::Validator`], whose documentation says exactly
//!   what is checked. A refusal is 422 Invalid with the apiserver's message and its causes
//!   (reason and field path) in `details.causes`; a refused seeded object panics with the
//!   message. Kinds given by [`FakeApi::register`] or seeded without a CRD are not checked.
//! - **Admission webhooks**: a defaulter given to [`FakeApi::with_defaulter`] and a validator
//!   given to [`FakeApi::with_validator`] run on the creates, updates, patches and applies of
//!   their kind (not its status, not deletes, not seeded objects), as the scaffold configures
//!   them: the schema's defaults, then the defaulter, then the schema's pruning, defaults and
//!   checks, then the validator, whose denial is 403 Forbidden `admission webhook
//!   "v<kind>-<version>.kb.io" denied the request: <message>`. Their warnings are not returned.
//! - **Errors** are `metav1.Status` bodies with the apiserver's code, reason and message, which
//!   kube turns into `kube::Error::Api`.
//!
//! Not modelled: other admission plugins and webhooks, validation of built-in kinds and of
//! `metadata`, RBAC, and garbage collection by owner references.

// The layers, each using only those listed after it: `patch` (merge, JSON patch, apply) on
// `writes` (create, update, delete) on `store` (the objects, reads, the commit every change goes
// through) on `watch`; `wire` (bodies, queries, answers), `managed` (field ownership), `failure`,
// `resource`, `events`, `fields` and `select` below them.
mod events;
mod failure;
mod fields;
mod hooks;
mod managed;
mod patch;
mod resource;
mod select;
mod store;
mod watch;
mod wire;
mod writes;

use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::{Method, Request, Response, StatusCode};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource;
use serde::Serialize;
use serde_json::{Value, json};

use crate::admission::Validator;
use crate::webhook::{Defaulter, Validator as WebhookValidator};
use failure::{Failure, Result};
use resource::{ResourceType, builtins, typed};
use serde::de::DeserializeOwned;
use store::{SYSTEM_NAMESPACES, State};
use wire::{Body, Query, answer, parse, stream};
use writes::Write;

/// An in-memory Kubernetes API; see the [module documentation](self) for what it models.
/// Cheap to clone: every clone and every client made from it share the same objects.
#[derive(Clone)]
pub struct FakeApi {
    state: Arc<Mutex<State>>,
}

impl Default for FakeApi {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for FakeApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("FakeApi")
            .field("objects", &state.objects.len())
            .field("revision", &state.revision)
            .finish()
    }
}

impl FakeApi {
    /// A fake serving the built-in resources, with no objects.
    pub fn new() -> Self {
        let mut state = State {
            types: builtins(),
            ..State::default()
        };
        for namespace in SYSTEM_NAMESPACES {
            state.ensure_namespace(namespace);
        }
        FakeApi {
            state: Arc::new(Mutex::new(state)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Serves the kind of `crd`: each served version, its scope and status subresource.
    pub fn with_crd(self, crd: &CustomResourceDefinition) -> Self {
        let mut state = self.lock();
        for version in crd.spec.versions.iter().filter(|v| v.served) {
            let ty = ResourceType {
                group: crd.spec.group.clone(),
                version: version.name.clone(),
                plural: crd.spec.names.plural.clone(),
                kind: crd.spec.names.kind.clone(),
                namespaced: crd.spec.scope == "Namespaced",
                status: version
                    .subresources
                    .as_ref()
                    .is_some_and(|s| s.status.is_some()),
                generation: true,
                unconditional_update: false,
                shape: Arc::new(fields::Shape::of(
                    version
                        .schema
                        .as_ref()
                        .and_then(|s| s.open_api_v3_schema.as_ref()),
                )),
                admission: Validator::from_crd(crd, &version.name).map(Arc::new),
                store_group: crd.spec.group.clone(),
            };
            state.add_type(ty);
        }
        drop(state);
        self
    }

    /// Runs `defaulter` on every create and update of `K` (not of its status), after the
    /// schema's defaults and before its checks, as the apiserver calls a mutating webhook
    /// (named `m<kind>-<version>.kb.io`, as the scaffold names it). Objects seeded are not
    /// given to it.
    pub fn with_defaulter<K>(self, defaulter: impl Defaulter<K>) -> Self
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + 'static,
    {
        self.lock().hooks.add_defaulter(defaulter);
        self
    }

    /// Runs `validator` on every create and update of `K` (not of its status) after the
    /// schema's checks, as the apiserver calls a validating webhook (named
    /// `v<kind>-<version>.kb.io`): a denial is 403 Forbidden `admission webhook "vcaptain-v1.kb.io"
    /// denied the request: <message>`, and nothing is written. Its warnings are not returned,
    /// deletes are not given to it, nor are objects seeded.
    pub fn with_validator<K>(self, validator: impl WebhookValidator<K>) -> Self
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + 'static,
    {
        self.lock().hooks.add_validator(validator);
        self
    }

    /// Serves `K` as a custom resource with a status subresource, its scope from `K::Scope`.
    /// [`with_crd`](Self::with_crd) says more exactly what a CRD serves.
    pub fn register<K>(self) -> Self
    where
        K: Resource<DynamicType = ()>,
        K::Scope: 'static,
    {
        self.lock().add_type(typed::<K>());
        self
    }

    /// Stores `obj` as if created (uid, resourceVersion, creationTimestamp and generation set
    /// when missing); registers `K` as [`register`](Self::register) does when no resource of
    /// its group and plural is served.
    ///
    /// # Panics
    ///
    /// When `obj` has no name, does not serialize to a JSON object, or its kind's CRD (given to
    /// [`with_crd`](Self::with_crd)) does not admit it: the message is the apiserver's.
    pub fn with_object<K>(self, obj: &K) -> Self
    where
        K: Resource<DynamicType = ()> + Serialize,
        K::Scope: 'static,
    {
        self.seed(obj);
        self
    }

    /// [`with_object`](Self::with_object) on a shared fake.
    ///
    /// # Panics
    ///
    /// When `obj` has no name, does not serialize to a JSON object, or its kind's CRD does not
    /// admit it.
    pub fn seed<K>(&self, obj: &K)
    where
        K: Resource<DynamicType = ()> + Serialize,
        K::Scope: 'static,
    {
        let mut state = self.lock();
        let wanted = typed::<K>();
        let ty = match state.find(&wanted.group, &wanted.version, &wanted.plural) {
            Some(ty) => ty,
            None => {
                state.add_type(wanted.clone());
                wanted
            }
        };
        let mut value = serde_json::to_value(obj).expect("a seeded object serializes to JSON");
        value["apiVersion"] = json!(ty.api_version());
        value["kind"] = json!(ty.kind);
        let name = value["metadata"]["name"]
            .as_str()
            .filter(|n| !n.is_empty())
            .expect("a seeded object has metadata.name")
            .to_owned();
        let namespace = if ty.namespaced {
            let ns = value["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_owned();
            value["metadata"]["namespace"] = json!(ns);
            state.ensure_namespace(&ns);
            ns
        } else {
            String::new()
        };
        let mut value = writes::admitted(&ty, value, None)
            .unwrap_or_else(|refused| panic!("the seeded object is refused: {}", refused.message));
        state.stamp_new(&ty, &mut value);
        let key = (ty.store_group.clone(), ty.plural.clone(), namespace, name);
        state.commit(&ty, key, value, "ADDED");
    }

    /// A `kube::Client` whose requests this fake answers; its default namespace is `default`.
    /// Needs a Tokio runtime, as every `kube::Client` does.
    pub fn client(&self) -> kube::Client {
        let fake = self.clone();
        let service = tower::service_fn(move |req: Request<kube::client::Body>| {
            let fake = fake.clone();
            async move { Ok::<_, Infallible>(fake.handle(req).await) }
        });
        kube::Client::new(service, "default")
    }

    /// The current revision: the `resourceVersion` of the latest write.
    pub fn revision(&self) -> u64 {
        self.lock().revision
    }

    async fn handle(&self, req: Request<kube::client::Body>) -> Response<Body> {
        let (parts, body) = req.into_parts();
        let bytes = match body.collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => return Failure::bad_request(format!("cannot read the body: {e}")).into(),
        };
        match self.serve(&parts, &bytes) {
            Ok(resp) => resp,
            Err(failure) => failure.into(),
        }
    }

    fn serve(&self, parts: &hyper::http::request::Parts, body: &[u8]) -> Result<Response<Body>> {
        let query = Query::parse(parts.uri.query().unwrap_or_default());
        let mut state = self.lock();
        let target = state.route(parts.uri.path())?;
        let manager = query
            .get("fieldManager")
            .map(str::to_owned)
            .unwrap_or_else(|| {
                parts
                    .headers
                    .get(hyper::header::USER_AGENT)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|ua| ua.split('/').next())
                    .filter(|m| !m.is_empty())
                    .unwrap_or("unknown")
                    .to_owned()
            });
        let write = Write {
            manager,
            dry_run: query.get("dryRun").is_some_and(|d| d == "All"),
            force: query.get("force").is_some_and(|f| f == "true"),
        };
        let content_type = parts
            .headers
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        match (&parts.method, target.name.is_some()) {
            (&Method::GET, true) => state.get(&target).map(|o| answer(StatusCode::OK, &o)),
            (&Method::GET, false) if query.get("watch").is_some_and(|w| w == "true") => {
                let timeout = query
                    .get("timeoutSeconds")
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(1800);
                let lines = state.watch(&target, &query)?;
                Ok(stream(lines, Duration::from_secs(timeout)))
            }
            (&Method::GET, false) => state
                .list(&target, &query)
                .map(|l| answer(StatusCode::OK, &l)),
            (&Method::POST, false) if !target.status => {
                let obj = state.create(&target, parse(body)?, &write)?;
                Ok(answer(StatusCode::CREATED, &obj))
            }
            (&Method::PUT, true) => {
                let obj = state.update(&target, parse(body)?, &write)?;
                Ok(answer(StatusCode::OK, &obj))
            }
            (&Method::PATCH, true) => {
                let (code, obj) = state.patch(&target, content_type, parse(body)?, &write)?;
                Ok(answer(code, &obj))
            }
            (&Method::DELETE, true) if !target.status => {
                let options = if body.is_empty() {
                    Value::Null
                } else {
                    parse(body)?
                };
                let obj = state.delete(&target, &options, &write)?;
                Ok(answer(StatusCode::OK, &obj))
            }
            (&Method::DELETE, false) if !target.status => {
                let list = state.delete_collection(&target, &query, &write)?;
                Ok(answer(StatusCode::OK, &list))
            }
            (method, _) => Err(Failure::new(
                405,
                "MethodNotAllowed",
                format!(
                    "the server does not allow this method on the requested resource: {method}"
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests;
