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
//!   keys, as `status.conditions` keyed by `type` does; other lists and empty objects are
//!   leaves: atomic, owned and replaced whole), and each update, merge or JSON patch gives the
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
//! - **Errors** are `metav1.Status` bodies with the apiserver's code, reason and message, which
//!   kube turns into `kube::Error::Api`.
//!
//! Not modelled: admission, validation against the CRD schema, defaulting, pruning, RBAC, and
//! garbage collection by owner references.

mod fields;
mod select;

use std::any::TypeId;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame};
use hyper::{Method, Request, Response, StatusCode};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::{NamespaceResourceScope, jiff};
use kube::Resource;
use serde::Serialize;
use serde_json::{Value, json};

use fields::{Fields, Path};
use select::Selector;

/// The body of every answer: a whole JSON document, or a watch's stream of lines.
type Body = UnsyncBoxBody<Bytes, Infallible>;

/// How a resource behaves, from its CRD or the built-in table.
#[derive(Debug, Clone)]
struct ResourceType {
    group: String,
    version: String,
    plural: String,
    kind: String,
    namespaced: bool,
    /// It has a status subresource.
    status: bool,
    /// The server sets and bumps `metadata.generation`.
    generation: bool,
    /// An update without `resourceVersion` is accepted (built-in kinds), not refused (custom).
    unconditional_update: bool,
    /// Its lists that merge by key under server-side apply.
    shape: Arc<fields::Shape>,
    /// The group its objects are stored under: its own, but the core group for
    /// `events.k8s.io` Events, which the apiserver keeps as core Events.
    store_group: String,
}

impl ResourceType {
    fn builtin(group: &str, plural: &str, kind: &str, namespaced: bool, status: bool) -> Self {
        ResourceType {
            group: group.into(),
            version: "v1".into(),
            plural: plural.into(),
            kind: kind.into(),
            namespaced,
            status,
            generation: group == "apps",
            unconditional_update: true,
            shape: Arc::default(),
            store_group: if group == EVENTS_GROUP { "" } else { group }.into(),
        }
    }

    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `guestbooks.webapp.example.com`, `configmaps`: how messages name the resource.
    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Guestbook.webapp.example.com`, `ConfigMap`: how Invalid messages name the kind.
    fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }
}

/// The built-in resources every fake serves.
fn builtins() -> Vec<ResourceType> {
    vec![
        ResourceType::builtin("", "configmaps", "ConfigMap", true, false),
        ResourceType::builtin("", "secrets", "Secret", true, false),
        ResourceType::builtin("", "serviceaccounts", "ServiceAccount", true, false),
        ResourceType::builtin("", "services", "Service", true, true),
        ResourceType::builtin("", "namespaces", "Namespace", false, true),
        ResourceType::builtin("", "events", "Event", true, false),
        ResourceType::builtin("events.k8s.io", "events", "Event", true, false),
        ResourceType::builtin("coordination.k8s.io", "leases", "Lease", true, false),
        ResourceType::builtin("apps", "deployments", "Deployment", true, true),
    ]
}

/// Where an object is kept: group, plural, namespace (empty for cluster-scoped), name.
type Key = (String, String, String, String);

/// One change, as watches see it.
#[derive(Debug, Clone)]
struct Change {
    revision: u64,
    group: String,
    plural: String,
    kind: &'static str,
    object: Value,
    /// The version a MODIFIED change replaced.
    before: Option<Value>,
}

/// An open watch.
struct Watch {
    ty: ResourceType,
    namespace: Option<String>,
    selector: Selector,
    lines: mpsc::UnboundedSender<Bytes>,
}

impl Watch {
    /// How this watch sees `change`, if at all: a modification that takes an object into its
    /// selector is ADDED, one that takes it out is DELETED, as the apiserver's watch sends them.
    fn sees(&self, change: &Change) -> Option<&'static str> {
        let ours = change.group == self.ty.store_group
            && change.plural == self.ty.plural
            && self
                .namespace
                .as_deref()
                .is_none_or(|ns| change.object["metadata"]["namespace"].as_str() == Some(ns));
        if !ours {
            return None;
        }
        let now = self.selector.matches(&change.object);
        let was = change
            .before
            .as_ref()
            .is_some_and(|b| self.selector.matches(b));
        match (change.kind, was, now) {
            ("MODIFIED", true, true) => Some("MODIFIED"),
            ("MODIFIED", false, true) => Some("ADDED"),
            ("MODIFIED", true, false) => Some("DELETED"),
            ("MODIFIED", false, false) => None,
            (kind, _, true) => Some(kind),
            _ => None,
        }
    }
}

#[derive(Default)]
struct State {
    types: Vec<ResourceType>,
    objects: BTreeMap<Key, Value>,
    revision: u64,
    uids: u64,
    names: u64,
    history: Vec<Change>,
    watches: Vec<Watch>,
}

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
                store_group: crd.spec.group.clone(),
            };
            state.add_type(ty);
        }
        drop(state);
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
    /// When `obj` has no name, or does not serialize to a JSON object.
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
    /// When `obj` has no name, or does not serialize to a JSON object.
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

/// A write's options from the query.
struct Write {
    manager: String,
    dry_run: bool,
    force: bool,
}

fn typed<K>() -> ResourceType
where
    K: Resource<DynamicType = ()>,
    K::Scope: 'static,
{
    ResourceType {
        group: K::group(&()).into_owned(),
        version: K::version(&()).into_owned(),
        plural: K::plural(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        namespaced: TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>(),
        status: true,
        generation: true,
        unconditional_update: false,
        shape: Arc::default(),
        store_group: K::group(&()).into_owned(),
    }
}

fn parse(body: &[u8]) -> Result<Value> {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) if v.is_object() || v.is_array() => Ok(v),
        Ok(_) => Err(Failure::bad_request("the body is not a JSON object".into())),
        Err(e) => Err(Failure::bad_request(format!(
            "the body is not valid JSON: {e}"
        ))),
    }
}

fn answer(code: StatusCode, body: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut resp = Response::new(Full::new(Bytes::from(bytes)).boxed_unsync());
    *resp.status_mut() = code;
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    resp
}

fn stream(lines: mpsc::UnboundedReceiver<Bytes>, timeout: Duration) -> Response<Body> {
    let frames = lines
        .take_until(tokio::time::sleep(timeout))
        .map(|line| Ok::<_, Infallible>(Frame::data(line)));
    let mut resp = Response::new(BodyExt::boxed_unsync(StreamBody::new(frames)));
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    resp
}

fn now() -> Value {
    serde_json::to_value(Time(jiff::Timestamp::now())).unwrap_or(Value::Null)
}

/// The query string, percent-decoded.
struct Query(BTreeMap<String, String>);

impl Query {
    fn parse(text: &str) -> Self {
        Query(
            text.split('&')
                .filter(|p| !p.is_empty())
                .map(|pair| {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    (decode(k), decode(v))
                })
                .collect(),
        )
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'+', _) => out.push(b' '),
            (b'%', Some(b)) => {
                out.push(b);
                i += 2;
            }
            (b, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An opaque `continue` token: the list's revision and the last key served, hex-encoded.
fn write_continue(revision: u64, namespace: &str, name: &str) -> String {
    format!("{revision}\0{namespace}\0{name}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn read_continue(token: &str) -> Option<(u64, String, String)> {
    let bytes: Option<Vec<u8>> = (0..token.len())
        .step_by(2)
        .map(|i| {
            token
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect();
    let text = String::from_utf8(bytes?).ok()?;
    let mut parts = text.split('\0');
    let revision = parts.next()?.parse().ok()?;
    let namespace = parts.next()?.to_owned();
    let name = parts.next()?.to_owned();
    Some((revision, namespace, name))
}

/// What a request's path names.
struct Target {
    ty: ResourceType,
    namespace: Option<String>,
    name: Option<String>,
    status: bool,
}

impl Target {
    fn key(&self) -> Key {
        (
            self.ty.store_group.clone(),
            self.ty.plural.clone(),
            self.namespace.clone().unwrap_or_default(),
            self.name.clone().unwrap_or_default(),
        )
    }

    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }
}

/// A refusal, answered as a `metav1.Status`.
#[derive(Debug)]
struct Failure {
    code: u16,
    reason: &'static str,
    message: String,
    details: Option<Value>,
}

type Result<T, E = Failure> = std::result::Result<T, E>;

impl Failure {
    fn new(code: u16, reason: &'static str, message: String) -> Self {
        Failure {
            code,
            reason,
            message,
            details: None,
        }
    }

    fn details(mut self, ty: &ResourceType, name: &str) -> Self {
        let mut details = json!({ "name": name, "kind": ty.plural });
        if !ty.group.is_empty() {
            details["group"] = json!(ty.group);
        }
        self.details = Some(details);
        self
    }

    fn bad_request(message: String) -> Self {
        Failure::new(400, "BadRequest", message)
    }

    fn not_found(ty: &ResourceType, name: &str) -> Self {
        Failure::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", ty.qualified()),
        )
        .details(ty, name)
    }

    fn no_resource() -> Self {
        Failure::new(
            404,
            "NotFound",
            "the server could not find the requested resource".into(),
        )
    }

    fn already_exists(ty: &ResourceType, name: &str) -> Self {
        Failure::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", ty.qualified()),
        )
        .details(ty, name)
    }

    fn conflict(ty: &ResourceType, name: &str, why: &str) -> Self {
        Failure::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                ty.qualified()
            ),
        )
        .details(ty, name)
    }

    fn stale(ty: &ResourceType, name: &str) -> Self {
        Failure::conflict(
            ty,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    fn invalid(ty: &ResourceType, name: &str, cause: &str) -> Self {
        let mut failure = Failure::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {cause}", ty.qualified_kind()),
        );
        let mut details = json!({ "name": name, "kind": ty.kind });
        if !ty.group.is_empty() {
            details["group"] = json!(ty.group);
        }
        failure.details = Some(details);
        failure
    }
}

impl From<Failure> for Response<Body> {
    fn from(f: Failure) -> Self {
        let mut body = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f.message, "reason": f.reason, "code": f.code,
        });
        if let Some(details) = f.details {
            body["details"] = details;
        }
        let code = StatusCode::from_u16(f.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        answer(code, &body)
    }
}

/// One manager's entry of `metadata.managedFields`.
#[derive(Debug, Clone)]
struct Managed {
    manager: String,
    operation: String,
    subresource: Option<String>,
    api_version: String,
    time: Value,
    fields: Fields,
}

impl Managed {
    fn same_owner(&self, manager: &str, operation: &str, subresource: Option<&str>) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource.as_deref() == subresource
    }
}

fn managed_of(obj: &Value) -> Vec<Managed> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| Managed {
                    manager: e["manager"].as_str().unwrap_or_default().to_owned(),
                    operation: e["operation"].as_str().unwrap_or_default().to_owned(),
                    subresource: e["subresource"].as_str().map(str::to_owned),
                    api_version: e["apiVersion"].as_str().unwrap_or_default().to_owned(),
                    time: e["time"].clone(),
                    fields: fields::from_fields_v1(&e["fieldsV1"]),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn write_managed(obj: &mut Value, entries: &[Managed]) {
    let list: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let mut entry = json!({
                "manager": e.manager, "operation": e.operation, "apiVersion": e.api_version,
                "time": e.time, "fieldsType": "FieldsV1", "fieldsV1": fields::to_fields_v1(&e.fields),
            });
            if let Some(sub) = &e.subresource {
                entry["subresource"] = json!(sub);
            }
            entry
        })
        .collect();
    if let Value::Object(meta) = &mut obj["metadata"] {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(list));
        }
    }
}

/// Gives `fields` to the `(manager, operation, subresource)` entry, taking them from the others.
fn take_fields(entries: &mut Vec<Managed>, owner: &Managed, fields: &Fields, replace: bool) {
    for entry in entries.iter_mut() {
        if entry.same_owner(
            &owner.manager,
            &owner.operation,
            owner.subresource.as_deref(),
        ) {
            continue;
        }
        entry
            .fields
            .retain(|p| !fields.iter().any(|f| fields::overlaps(p, f)));
    }
    match entries.iter_mut().find(|e| {
        e.same_owner(
            &owner.manager,
            &owner.operation,
            owner.subresource.as_deref(),
        )
    }) {
        Some(entry) => {
            if replace {
                entry.fields = fields.clone();
            } else {
                entry.fields.extend(fields.iter().cloned());
            }
            entry.time = owner.time.clone();
            entry.api_version = owner.api_version.clone();
        }
        None => {
            let mut entry = owner.clone();
            entry.fields = fields.clone();
            entries.push(entry);
        }
    }
    entries.retain(|e| !e.fields.is_empty());
}

/// The object with `metadata` (and `status`, when `without_status`) left out: what a change of
/// bumps `generation`.
fn spec_part(obj: &Value, without_status: bool) -> Value {
    let mut v = obj.clone();
    if let Value::Object(map) = &mut v {
        map.remove("metadata");
        if without_status {
            map.remove("status");
        }
    }
    v
}

fn without_managed(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Value::Object(meta) = &mut v["metadata"] {
        meta.remove("managedFields");
    }
    v
}

fn has_finalizers(obj: &Value) -> bool {
    obj["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty())
}

/// The group whose Events the apiserver stores as core Events.
const EVENTS_GROUP: &str = "events.k8s.io";

/// The fields a core Event and an `events.k8s.io` Event name differently, core's first.
const CORE_TO_EVENTS: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// The same pairs the other way round.
const EVENTS_TO_CORE: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
    ("reportingController", "reportingComponent"),
];

/// Renames top-level fields `from` → `to`, for each pair present.
fn rename_fields(obj: &mut Value, pairs: &[(&str, &str)]) {
    if let Value::Object(map) = obj {
        for (from, to) in pairs {
            if let Some(v) = map.remove(*from) {
                map.insert((*to).to_owned(), v);
            }
        }
    }
}

/// The namespaces a fresh apiserver has.
const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-node-lease", "kube-public", "kube-system"];

/// What the apiserver gives a new Namespace: the `kubernetes` finalizer in its spec, phase
/// Active, and the label naming it.
fn namespace_defaults(obj: &mut Value, name: &str) {
    if obj["spec"]["finalizers"].is_null() {
        obj["spec"]["finalizers"] = json!(["kubernetes"]);
    }
    obj["status"] = json!({ "phase": "Active" });
    obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
}

/// Characters of generated name suffixes, as the apiserver picks them (no vowels, no look-alikes).
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

impl State {
    fn add_type(&mut self, ty: ResourceType) {
        self.types
            .retain(|t| !(t.group == ty.group && t.version == ty.version && t.plural == ty.plural));
        self.types.push(ty);
    }

    fn find(&self, group: &str, version: &str, plural: &str) -> Option<ResourceType> {
        self.types
            .iter()
            .find(|t| t.group == group && t.version == version && t.plural == plural)
            .cloned()
    }

    /// Resolves `/api/v1/...` and `/apis/<group>/<version>/...`.
    fn route(&self, path: &str) -> Result<Target> {
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

    /// The stored object as the request's version serves it.
    fn served(ty: &ResourceType, obj: &Value) -> Value {
        let mut obj = obj.clone();
        if ty.group == EVENTS_GROUP {
            rename_fields(&mut obj, CORE_TO_EVENTS);
        }
        obj["apiVersion"] = json!(ty.api_version());
        obj["kind"] = json!(ty.kind);
        obj
    }

    /// The object as `target`'s resource serves it: every write works on this view.
    fn live(&self, target: &Target) -> Result<Value> {
        if target.ty.namespaced && target.namespace.is_none() {
            return Err(Failure::no_resource());
        }
        self.objects
            .get(&target.key())
            .map(|o| Self::served(&target.ty, o))
            .ok_or_else(|| Failure::not_found(&target.ty, target.name()))
    }

    fn get(&self, target: &Target) -> Result<Value> {
        self.live(target).map(|o| Self::served(&target.ty, &o))
    }

    fn selected<'a>(
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

    fn list(&self, target: &Target, query: &Query) -> Result<Value> {
        let selector = Selector::parse(query.get("labelSelector"), query.get("fieldSelector"))
            .map_err(Failure::bad_request)?;
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
        let items: Vec<Value> = items
            .into_iter()
            .map(|o| Self::served(&target.ty, o))
            .collect();
        Ok(json!({
            "apiVersion": target.ty.api_version(),
            "kind": format!("{}List", target.ty.kind),
            "metadata": metadata,
            "items": items,
        }))
    }

    fn watch(&mut self, target: &Target, query: &Query) -> Result<mpsc::UnboundedReceiver<Bytes>> {
        let selector = Selector::parse(query.get("labelSelector"), query.get("fieldSelector"))
            .map_err(Failure::bad_request)?;
        let (tx, rx) = mpsc::unbounded();
        let line = |kind: &str, object: &Value| {
            let mut text =
                serde_json::to_vec(&json!({ "type": kind, "object": object })).unwrap_or_default();
            text.push(b'\n');
            Bytes::from(text)
        };
        let from = query
            .get("resourceVersion")
            .filter(|rv| !rv.is_empty() && *rv != "0")
            .map(|rv| {
                rv.parse::<u64>()
                    .map_err(|_| Failure::bad_request(format!("invalid resource version: {rv:?}")))
            })
            .transpose()?;
        let initial = query.get("sendInitialEvents").is_some_and(|s| s == "true");
        let watch = Watch {
            ty: target.ty.clone(),
            namespace: target.namespace.clone(),
            selector: selector.clone(),
            lines: tx,
        };
        let mut first = Vec::new();
        match from {
            Some(revision) if !initial => {
                for change in self.history.iter().filter(|c| c.revision > revision) {
                    if let Some(kind) = watch.sees(change) {
                        first.push(line(kind, &Self::served(&target.ty, &change.object)));
                    }
                }
            }
            _ => {
                for obj in self.selected(target, &selector) {
                    first.push(line("ADDED", &Self::served(&target.ty, obj)));
                }
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
            }
        }
        for l in first {
            let _ = watch.lines.unbounded_send(l);
        }
        self.watches.push(watch);
        Ok(rx)
    }

    /// Stores the Namespace `name` unless it exists.
    fn ensure_namespace(&mut self, name: &str) {
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
    fn stamp_new(&mut self, ty: &ResourceType, obj: &mut Value) {
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

    /// Stores `obj` at the next revision and tells the watches.
    /// Stores `obj` (as `ty` serves it) at the next revision, tells the watches, and returns it
    /// as `ty` serves it.
    fn commit(&mut self, ty: &ResourceType, key: Key, mut obj: Value, kind: &'static str) -> Value {
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
        self.watches.retain(|w| {
            let Some(kind) = w.sees(&change) else {
                return !w.lines.is_closed();
            };
            let object = Self::served(&w.ty, &change.object);
            let mut text =
                serde_json::to_vec(&json!({ "type": kind, "object": object })).unwrap_or_default();
            text.push(b'\n');
            w.lines.unbounded_send(Bytes::from(text)).is_ok()
        });
        self.history.push(change);
        Self::served(ty, &obj)
    }

    fn create(&mut self, target: &Target, mut obj: Value, write: &Write) -> Result<Value> {
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
        let mut name = obj["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if name.is_empty() {
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
            name = loop {
                let candidate = format!("{prefix}{}", self.suffix());
                let key = (
                    ty.store_group.clone(),
                    ty.plural.clone(),
                    namespace.clone(),
                    candidate.clone(),
                );
                if !self.objects.contains_key(&key) {
                    break candidate;
                }
            };
            obj["metadata"]["name"] = json!(name);
        }
        let key = (
            ty.store_group.clone(),
            ty.plural.clone(),
            namespace.clone(),
            name.clone(),
        );
        if self.objects.contains_key(&key) {
            return Err(Failure::already_exists(ty, &name));
        }
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
            && let Value::Object(map) = &mut obj
        {
            map.remove("status");
        }
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

    fn suffix(&mut self) -> String {
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

    fn owner(
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

    fn update(&mut self, target: &Target, mut obj: Value, write: &Write) -> Result<Value> {
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
    fn write_over(
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

    /// Stores the new version of a live object: the generation bumped on a change of its spec,
    /// nothing written when nothing changed, the object removed when its last finalizer went
    /// during its deletion.
    fn store(
        &mut self,
        target: &Target,
        live: &Value,
        mut obj: Value,
        write: &Write,
    ) -> Result<Value> {
        let ty = &target.ty;
        obj["apiVersion"] = json!(ty.api_version());
        obj["kind"] = json!(ty.kind);
        if without_managed(&obj) == without_managed(live) {
            return Ok(Self::served(ty, live));
        }
        if ty.generation && spec_part(&obj, ty.status) != spec_part(live, ty.status) {
            let generation = live["metadata"]["generation"].as_i64().unwrap_or(0);
            obj["metadata"]["generation"] = json!(generation + 1);
        }
        if write.dry_run {
            return Ok(Self::served(ty, &obj));
        }
        let gone = !obj["metadata"]["deletionTimestamp"].is_null() && !has_finalizers(&obj);
        let kind = if gone { "DELETED" } else { "MODIFIED" };
        let stored = self.commit(ty, target.key(), obj, kind);
        Ok(Self::served(ty, &stored))
    }

    fn patch(
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

    fn apply(
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
                let mut obj = json!({ "metadata": {} });
                for path in &wanted {
                    if let Some(v) = fields::get(&applied, path) {
                        fields::set(&mut obj, path, v.clone());
                    }
                }
                obj["metadata"]["name"] = json!(name);
                let created = self.create(
                    target,
                    obj,
                    &Write {
                        manager: write.manager.clone(),
                        dry_run: true,
                        force: write.force,
                    },
                )?;
                let mut created = created;
                let mut entries = Vec::new();
                take_fields(&mut entries, &owner, &wanted, true);
                write_managed(&mut created, &entries);
                if write.dry_run {
                    return Ok((StatusCode::CREATED, created));
                }
                let stored = self.commit(ty, target.key(), created, "ADDED");
                return Ok((StatusCode::CREATED, stored));
            }
            Err(other) => return Err(other),
        };
        let mut entries = managed_of(&live);
        let mut conflicts: BTreeMap<String, Vec<Path>> = BTreeMap::new();
        for entry in &entries {
            if entry.same_owner(&owner.manager, "Apply", subresource) {
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
                        fields::get(&live, at) != fields::get(&applied, at)
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

    /// Deletes every selected object as [`delete`](Self::delete) does one; answers the list of
    /// them as they were when deleted (or marked).
    fn delete_collection(
        &mut self,
        target: &Target,
        query: &Query,
        write: &Write,
    ) -> Result<Value> {
        let selector = Selector::parse(query.get("labelSelector"), query.get("fieldSelector"))
            .map_err(Failure::bad_request)?;
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
                Self::served(&target.ty, &before)
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

    fn delete(&mut self, target: &Target, options: &Value, write: &Write) -> Result<Value> {
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
                return Ok(Self::served(ty, &live));
            }
            let mut obj = live.clone();
            obj["metadata"]["deletionTimestamp"] = now();
            obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            if ty.generation {
                let generation = live["metadata"]["generation"].as_i64().unwrap_or(0);
                obj["metadata"]["generation"] = json!(generation + 1);
            }
            if write.dry_run {
                return Ok(Self::served(ty, &obj));
            }
            let stored = self.commit(ty, target.key(), obj, "MODIFIED");
            return Ok(Self::served(ty, &stored));
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

/// What a write to the object or to its status subresource may change: with a status
/// subresource, the object's writes keep the live status and the status' writes keep all else.
fn scoped(ty: &ResourceType, to_status: bool, live: &Value, mut obj: Value) -> Value {
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

fn apply_conflict(
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

#[cfg(test)]
mod tests;
