//! The admission and conversion webhook server: defaulting ([`Defaulter`]), validating
//! ([`Validator`]) and CRD conversion ([`Converter`]) hooks behind controller-runtime's paths,
//! answering AdmissionReview v1 and ConversionReview v1 over HTTPS.
//!
//! A binary registers its hooks with [`WebhookServer::builder`] and hands the server to
//! [`Manager::add_webhook_server`](crate::manager::Manager::add_webhook_server), which serves it
//! on `--webhook-port` with the certificate in `--webhook-cert-path` on every replica (leader or
//! not), and reports it on `/readyz`:
//!
//! ```no_run
//! # use operator_gen_runtime::webhook::{Defaulter, HookError, Validator, Warnings, WebhookServer};
//! # use operator_gen_runtime::k8s_openapi::api::core::v1::ConfigMap;
//! struct Labels;
//! impl Defaulter<ConfigMap> for Labels {
//!     fn default(&self, obj: &mut ConfigMap) {
//!         obj.metadata.labels.get_or_insert_default().entry("app".into()).or_insert("web".into());
//!     }
//! }
//! impl Validator<ConfigMap> for Labels {
//!     fn validate_create(&self, obj: &ConfigMap) -> Result<Warnings, HookError> {
//!         match &obj.data {
//!             Some(d) if d.contains_key("password") => Err("data.password is not allowed: use a Secret".into()),
//!             _ => Ok(Warnings::new()),
//!         }
//!     }
//! }
//! # fn f() -> Result<(), operator_gen_runtime::manager::Error> {
//! let server = WebhookServer::builder()
//!     .defaulter::<ConfigMap>(Labels)
//!     .validator::<ConfigMap>(Labels)
//!     .build()?;
//! assert!(server.paths().contains(&"/mutate--v1-configmap".to_owned()));
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use kube::Resource;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use kube::core::{DynamicObject, Status};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

mod hooks;
mod hub;
use crate::serve::Health;
use crate::serve::http::{self, Routes};
use crate::serve::tls::{self, CertFiles, CertUse};
pub use hooks::{Converter, Defaulter, HookError, Validator, Warnings};
pub use hub::HubConverter;

/// The largest review body accepted (the apiserver's own limit on a request body: 3 MiB of
/// object, JSON-encoded twice in an update, plus the review).
pub const DEFAULT_BODY_LIMIT: usize = 7 * 1024 * 1024;

/// How long one request (reading the body and running the hook) may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How often, at most, the server looks whether the files in `--webhook-cert-path` changed (on a
/// TLS handshake, by their modification times): a rotated certificate is served within this long
/// of the first handshake after the rotation, without a restart.
pub const CERT_RELOAD_CHECK: Duration = tls::RELOAD_CHECK;

/// The converters of one server, each object given to the first that [`Converter::converts`] it.
struct Converters(Vec<Arc<dyn Converter>>);

impl Converter for Converters {
    fn convert(
        &self,
        object: serde_json::Value,
        desired_api_version: &str,
    ) -> Result<serde_json::Value, HookError> {
        match self.0.iter().find(|c| c.converts(&object)) {
            Some(c) => c.convert(object, desired_api_version),
            None => Err(HookError::from(format!(
                "no converter for kind {} of {}",
                object
                    .get("kind")
                    .and_then(|k| k.as_str())
                    .unwrap_or("(none)"),
                object
                    .get("apiVersion")
                    .and_then(|v| v.as_str())
                    .unwrap_or("(no apiVersion)")
            ))),
        }
    }
}

/// Where the webhook server's certificate and key are: `dir/cert_name` and `dir/key_name`
/// (PEM), read again when they change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertDir {
    /// The directory (`--webhook-cert-path`).
    pub dir: PathBuf,
    /// The certificate file (`--webhook-cert-name`).
    pub cert_name: String,
    /// The key file (`--webhook-cert-key`).
    pub key_name: String,
}

impl CertDir {
    /// `dir/tls.crt` and `dir/tls.key`, the names cert-manager's Secret uses.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            cert_name: "tls.crt".to_owned(),
            key_name: "tls.key".to_owned(),
        }
    }
}

const WEBHOOK_CERT: CertUse = CertUse {
    server: "webhook",
    error: |path, reason| Error::WebhookCert { path, reason },
};

/// One hook, type-erased: the review body in, the answer out.
type Hook = Arc<dyn Fn(&[u8]) -> Answer + Send + Sync>;

/// An HTTP status and a JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: StatusCode,
    /// The JSON body (a review, or an error message for a request that is not one).
    pub body: Vec<u8>,
}

impl Answer {
    fn json(status: StatusCode, value: &impl Serialize) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => Self { status, body },
            Err(e) => Self::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("cannot encode the response: {e}"),
            ),
        }
    }

    fn error(status: StatusCode, message: &str) -> Self {
        Self {
            status,
            body: serde_json::json!({ "error": message })
                .to_string()
                .into_bytes(),
        }
    }
}

/// The webhook server: hooks by path, a body size limit and a per-request timeout.
#[derive(Clone)]
pub struct WebhookServer {
    hooks: Arc<BTreeMap<String, Hook>>,
    body_limit: usize,
    timeout: Duration,
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookServer")
            .field("paths", &self.paths())
            .field("body_limit", &self.body_limit)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Collects the hooks of a [`WebhookServer`].
#[must_use]
pub struct WebhookServerBuilder {
    hooks: BTreeMap<String, Hook>,
    duplicates: Vec<String>,
    converters: Vec<Arc<dyn Converter>>,
    body_limit: usize,
    timeout: Duration,
}

/// The path controller-runtime serves a kind's hook on: `/<prefix>-<group with dashes>-<version>-<kind lowercased>`.
pub fn webhook_path(prefix: &str, group: &str, version: &str, kind: &str) -> String {
    format!(
        "/{prefix}-{}-{version}-{}",
        group.replace('.', "-"),
        kind.to_lowercase()
    )
}

/// The mutating path of `K`, e.g. `/mutate-crew-testproject-org-v1-captain`.
pub fn mutate_path<K: Resource<DynamicType = ()>>() -> String {
    webhook_path("mutate", &K::group(&()), &K::version(&()), &K::kind(&()))
}

/// The validating path of `K`, e.g. `/validate-crew-testproject-org-v1-captain`.
pub fn validate_path<K: Resource<DynamicType = ()>>() -> String {
    webhook_path("validate", &K::group(&()), &K::version(&()), &K::kind(&()))
}

pub use operator_gen_codegen::webhook::is_served_path;

/// The conversion path.
pub const CONVERT_PATH: &str = "/convert";

impl WebhookServerBuilder {
    fn add(&mut self, path: String, hook: Hook) {
        if self.hooks.insert(path.clone(), hook).is_some() {
            self.duplicates.push(path);
        }
    }

    /// Serves `defaulter` on `K`'s mutate path.
    pub fn defaulter<K>(self, defaulter: impl Defaulter<K>) -> Self
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Serialize + 'static,
    {
        self.defaulter_at::<K>(&mutate_path::<K>(), defaulter)
    }

    /// Serves `defaulter` on `path` instead of `K`'s mutate path (the `path=` of a
    /// `+kubebuilder:webhook` marker given a custom path, which must start with `/`).
    pub fn defaulter_at<K>(mut self, path: &str, defaulter: impl Defaulter<K>) -> Self
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Serialize + 'static,
    {
        let kind = K::kind(&()).into_owned();
        self.add(
            path.to_owned(),
            Arc::new(move |body| admit(body, &kind, |req, raw| mutate::<K>(&defaulter, req, raw))),
        );
        self
    }

    /// Serves `validator` on `K`'s validate path.
    pub fn validator<K>(self, validator: impl Validator<K>) -> Self
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Serialize + 'static,
    {
        self.validator_at::<K>(&validate_path::<K>(), validator)
    }

    /// Serves `validator` on `path` instead of `K`'s validate path (the `path=` of a
    /// `+kubebuilder:webhook` marker given a custom path, which must start with `/`).
    pub fn validator_at<K>(mut self, path: &str, validator: impl Validator<K>) -> Self
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Serialize + 'static,
    {
        let kind = K::kind(&()).into_owned();
        self.add(
            path.to_owned(),
            Arc::new(move |body| {
                admit(body, &kind, |req, raw| validate::<K>(&validator, req, raw))
            }),
        );
        self
    }

    /// Serves `converter` on `/convert`; with several (one per kind), each object goes to the
    /// first that [`Converter::converts`] it.
    pub fn converter(mut self, converter: impl Converter) -> Self {
        self.converters.push(Arc::new(converter));
        self
    }

    /// The largest request body accepted (default [`DEFAULT_BODY_LIMIT`]); larger ones get 413.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// How long one request may take (default [`DEFAULT_TIMEOUT`]); slower ones get 504.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The server; fails when two hooks of one kind share a path.
    pub fn build(mut self) -> Result<WebhookServer> {
        if !self.converters.is_empty() {
            let converters = Converters(std::mem::take(&mut self.converters));
            self.add(
                CONVERT_PATH.to_owned(),
                Arc::new(move |body| convert(&converters, body)),
            );
        }
        if let Some(path) = self.duplicates.into_iter().next() {
            return Err(Error::WebhookPath(path));
        }
        if let Some(path) = self.hooks.keys().find(|p| !is_served_path(p)) {
            return Err(Error::WebhookPathInvalid(path.clone()));
        }
        Ok(WebhookServer {
            hooks: Arc::new(self.hooks),
            body_limit: self.body_limit,
            timeout: self.timeout,
        })
    }
}

/// A [`WebhookServer`] bound to its address, serving once [`run`](Self::run).
pub struct BoundWebhookServer {
    listener: TcpListener,
    server: http::Server<WebhookServer>,
}

impl std::fmt::Debug for BoundWebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundWebhookServer")
            .field("listener", &self.listener)
            .finish_non_exhaustive()
    }
}

impl BoundWebhookServer {
    /// The address the server listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `stop` is cancelled.
    pub async fn run(self, stop: CancellationToken) {
        http::serve(self.listener, self.server, stop).await;
    }
}

impl WebhookServer {
    /// A server without hooks, to add them to.
    pub fn builder() -> WebhookServerBuilder {
        WebhookServerBuilder {
            hooks: BTreeMap::new(),
            duplicates: Vec::new(),
            converters: Vec::new(),
            body_limit: DEFAULT_BODY_LIMIT,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The paths served, sorted.
    pub fn paths(&self) -> Vec<String> {
        self.hooks.keys().cloned().collect()
    }

    /// Binds `addr` and loads the certificate in `certs` (an error names the file and the
    /// flags); `health`, when given, reports the server on `/readyz` while it serves.
    pub async fn bind(
        self,
        addr: SocketAddr,
        certs: &CertDir,
        health: Option<&Health>,
    ) -> Result<BoundWebhookServer> {
        let tls = tls::acceptor(
            Some(CertFiles {
                cert: certs.dir.join(&certs.cert_name),
                key: certs.dir.join(&certs.key_name),
            }),
            &WEBHOOK_CERT,
        )?;
        let listener = http::bind("webhook", addr).await?;
        let serving = health.map(|h| h.add_check("webhook server"));
        Ok(BoundWebhookServer {
            listener,
            server: http::Server {
                routes: self,
                tls: Some(tls),
                auth: None,
                serving,
            },
        })
    }

    async fn answer_request(&self, req: Request<Incoming>) -> Answer {
        let (parts, body) = req.into_parts();
        let path = parts.uri.path().to_owned();
        if parts.method != Method::POST {
            return Answer::error(StatusCode::METHOD_NOT_ALLOWED, "webhooks answer POST only");
        }
        let json = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.split(';')
                    .next()
                    .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
            });
        if !json {
            return Answer::error(
                StatusCode::BAD_REQUEST,
                "expected a request with content-type application/json",
            );
        }
        let body = match Limited::new(body, self.body_limit).collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return Answer::error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!("the request body exceeds {} bytes", self.body_limit),
                );
            }
            Err(e) => {
                return Answer::error(
                    StatusCode::BAD_REQUEST,
                    &format!("cannot read the request body: {e}"),
                );
            }
        };
        let Some(hook) = self.hooks.get(&path).cloned() else {
            return Answer::error(StatusCode::NOT_FOUND, &format!("no webhook on {path}"));
        };
        // A hook is synchronous user code: run it off the reactor so the timeout can fire.
        match tokio::task::spawn_blocking(move || hook(&body)).await {
            Ok(answer) => answer,
            Err(e) => Answer::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("the webhook failed: {e}"),
            ),
        }
    }

    /// Answers a review body sent to `path`, without HTTP (size limit and timeout aside).
    pub fn handle(&self, path: &str, body: &[u8]) -> Answer {
        match self.hooks.get(path) {
            Some(hook) => hook(body),
            None => Answer::error(StatusCode::NOT_FOUND, &format!("no webhook on {path}")),
        }
    }
}

impl Routes for WebhookServer {
    /// Answers one HTTP request: `POST` with a JSON review to a registered path.
    async fn respond(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        let answer = match tokio::time::timeout(self.timeout, self.answer_request(req)).await {
            Ok(answer) => answer,
            Err(_) => Answer::error(
                StatusCode::GATEWAY_TIMEOUT,
                &format!("the webhook did not answer within {:?}", self.timeout),
            ),
        };
        if answer.status != StatusCode::OK {
            tracing::warn!(status = %answer.status, body = %String::from_utf8_lossy(&answer.body), "webhook request failed");
        }
        let mut resp = Response::new(Full::new(Bytes::from(answer.body)));
        *resp.status_mut() = answer.status;
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        resp
    }
}

/// Decodes an AdmissionReview, runs `hook` on its request (with the raw `request.object`), and
/// wraps the response; a body that is no AdmissionReview gets 400 with a denying review.
fn admit(
    body: &[u8],
    kind: &str,
    hook: impl FnOnce(&AdmissionRequest<DynamicObject>, &serde_json::Value) -> AdmissionResponse,
) -> Answer {
    let invalid = |message: String| {
        Answer::json(
            StatusCode::BAD_REQUEST,
            &AdmissionResponse::invalid(message).into_review(),
        )
    };
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return invalid(format!("the request is not JSON: {e}")),
    };
    let raw_object = value
        .pointer("/request/object")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    let review: AdmissionReview<DynamicObject> = match serde_json::from_value(value) {
        Ok(r) => r,
        Err(e) => return invalid(format!("the request is not an AdmissionReview: {e}")),
    };
    if review.types.api_version != "admission.k8s.io/v1" {
        return invalid(format!(
            "unsupported AdmissionReview version {:?}: expected admission.k8s.io/v1",
            review.types.api_version
        ));
    }
    if review.types.kind != "AdmissionReview" {
        return invalid(format!(
            "the request is of kind {:?}, not AdmissionReview",
            review.types.kind
        ));
    }
    let request: AdmissionRequest<DynamicObject> = match review.try_into() {
        Ok(r) => r,
        Err(_) => return invalid("the AdmissionReview has no request".to_owned()),
    };
    if request.kind.kind != kind {
        let resp = AdmissionResponse::from(&request).deny(format!(
            "this webhook admits {kind}, not {}",
            request.kind.kind
        ));
        return Answer::json(StatusCode::OK, &resp.into_review());
    }
    let resp = hook(&request, &raw_object);
    Answer::json(StatusCode::OK, &resp.into_review())
}

/// Decodes an object of the request as `K`.
/// Why an admission request's object cannot be read as the hook's type: a BadRequest.
#[derive(Debug, thiserror::Error)]
enum DecodeError {
    #[error("the request has no {0}")]
    Missing(&'static str),
    #[error("cannot read the {0}: {1}")]
    Read(&'static str, #[source] serde_json::Error),
    #[error("cannot decode the {0}: {1}")]
    Decode(&'static str, #[source] serde_json::Error),
}

fn decode<K: DeserializeOwned>(
    obj: Option<&DynamicObject>,
    which: &'static str,
) -> Result<K, DecodeError> {
    let obj = obj.ok_or(DecodeError::Missing(which))?;
    let value = serde_json::to_value(obj).map_err(|e| DecodeError::Read(which, e))?;
    serde_json::from_value(value).map_err(|e| DecodeError::Decode(which, e))
}

/// A response that denies with `message` and HTTP-like `code` in its status.
fn denied<T: Resource>(
    req: &AdmissionRequest<T>,
    message: &str,
    reason: &str,
    code: u16,
) -> AdmissionResponse {
    let mut resp = AdmissionResponse::from(req).deny(message);
    resp.result = Status::failure(message, reason).with_code(code);
    resp
}

fn mutate<K>(
    defaulter: &impl Defaulter<K>,
    req: &AdmissionRequest<DynamicObject>,
    raw: &serde_json::Value,
) -> AdmissionResponse
where
    K: Resource + DeserializeOwned + Serialize,
{
    if !matches!(req.operation, Operation::Create | Operation::Update) || req.object.is_none() {
        return AdmissionResponse::from(req);
    }
    let mut obj: K = match serde_json::from_value(raw.clone()) {
        Ok(o) => o,
        Err(e) => {
            return denied(
                req,
                &format!("cannot decode the object: {e}"),
                "BadRequest",
                400,
            );
        }
    };
    defaulter.default(&mut obj);
    let defaulted = match serde_json::to_value(&obj) {
        Ok(v) => v,
        Err(e) => {
            return denied(
                req,
                &format!("cannot encode the defaulted object: {e}"),
                "InternalError",
                500,
            );
        }
    };
    let patch = json_patch::diff(raw, &defaulted);
    if patch.0.is_empty() {
        return AdmissionResponse::from(req);
    }
    match AdmissionResponse::from(req).with_patch(patch) {
        Ok(resp) => resp,
        Err(e) => denied(
            req,
            &format!("cannot encode the patch: {e}"),
            "InternalError",
            500,
        ),
    }
}

fn validate<K>(
    validator: &impl Validator<K>,
    req: &AdmissionRequest<DynamicObject>,
    _raw: &serde_json::Value,
) -> AdmissionResponse
where
    K: Resource + DeserializeOwned,
{
    let verdict = match req.operation {
        Operation::Create => {
            decode::<K>(req.object.as_ref(), "object").map(|o| validator.validate_create(&o))
        }
        Operation::Update => decode::<K>(req.old_object.as_ref(), "oldObject").and_then(|old| {
            decode::<K>(req.object.as_ref(), "object")
                .map(|new| validator.validate_update(&old, &new))
        }),
        Operation::Delete => {
            decode::<K>(req.old_object.as_ref(), "oldObject").map(|o| validator.validate_delete(&o))
        }
        Operation::Connect => Ok(Ok(Warnings::new())),
    };
    match verdict {
        Err(bad) => denied(req, &bad.to_string(), "BadRequest", 400),
        Ok(Ok(warnings)) => {
            let mut resp = AdmissionResponse::from(req);
            resp.warnings = (!warnings.is_empty()).then_some(warnings);
            resp
        }
        Ok(Err(error)) => denied(req, &error.to_string(), "Forbidden", 403),
    }
}

/// Answers a ConversionReview: every object converted, or a failure naming the first that
/// could not be (the apiserver then fails the request with that message).
fn convert(converter: &impl Converter, body: &[u8]) -> Answer {
    let invalid = |message: String| {
        Answer::json(
            StatusCode::BAD_REQUEST,
            &ConversionResponse::invalid(Status::failure(&message, "BadRequest").with_code(400))
                .into_review(),
        )
    };
    let review: ConversionReview = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => return invalid(format!("the request is not a ConversionReview: {e}")),
    };
    if review.types.api_version != "apiextensions.k8s.io/v1" {
        return invalid(format!(
            "unsupported ConversionReview version {:?}: expected apiextensions.k8s.io/v1",
            review.types.api_version
        ));
    }
    if review.types.kind != "ConversionReview" {
        return invalid(format!(
            "the request is of kind {:?}, not ConversionReview",
            review.types.kind
        ));
    }
    let request = match ConversionRequest::from_review(review) {
        Ok(r) => r,
        Err(_) => return invalid("the ConversionReview has no request".to_owned()),
    };
    let desired = request.desired_api_version.clone();
    let objects = request.objects.clone();
    let response = ConversionResponse::for_request(request);
    let mut converted = Vec::with_capacity(objects.len());
    for object in objects {
        let name = object
            .pointer("/metadata/name")
            .and_then(|n| n.as_str())
            .unwrap_or_default()
            .to_owned();
        let result = if object.get("apiVersion").and_then(|v| v.as_str()) == Some(desired.as_str())
        {
            Ok(object)
        } else {
            converter.convert(object, &desired).and_then(|out| {
                match out.get("apiVersion").and_then(|v| v.as_str()) {
                    Some(v) if v == desired => Ok(out),
                    other => Err(HookError::from(format!(
                        "the converter returned apiVersion {other:?}, not {desired:?}"
                    ))),
                }
            })
        };
        match result {
            Ok(out) => converted.push(out),
            Err(message) => {
                let message = format!("cannot convert {name:?} to {desired}: {message}");
                let failed = response.failure(Status::failure(&message, "ConversionFailed"));
                return Answer::json(StatusCode::OK, &failed.into_review());
            }
        }
    }
    Answer::json(StatusCode::OK, &response.success(converted).into_review())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::{Value, json};

    /// Sets label `app=web` unless set; keeps everything else.
    struct Labels;

    impl Defaulter<ConfigMap> for Labels {
        fn default(&self, obj: &mut ConfigMap) {
            obj.metadata
                .labels
                .get_or_insert_default()
                .entry("app".into())
                .or_insert_with(|| "web".into());
        }
    }

    /// Denies `data.password`, warns about an empty `data`, forbids changing `data.mode`, and
    /// forbids deleting objects labelled `keep`.
    struct Rules;

    impl Validator<ConfigMap> for Rules {
        fn validate_create(&self, obj: &ConfigMap) -> Result<Warnings, HookError> {
            match &obj.data {
                Some(d) if d.contains_key("password") => {
                    Err("data.password is not allowed: use a Secret".into())
                }
                None => Ok(vec!["data is empty".into()]),
                Some(_) => Ok(Warnings::new()),
            }
        }

        fn validate_update(&self, old: &ConfigMap, new: &ConfigMap) -> Result<Warnings, HookError> {
            let mode = |c: &ConfigMap| c.data.as_ref().and_then(|d| d.get("mode").cloned());
            if mode(old) == mode(new) {
                Ok(Warnings::new())
            } else {
                Err("data.mode is immutable".into())
            }
        }

        fn validate_delete(&self, obj: &ConfigMap) -> Result<Warnings, HookError> {
            if obj
                .metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key("keep"))
            {
                Err("objects labelled keep cannot be deleted".into())
            } else {
                Ok(Warnings::new())
            }
        }
    }

    /// Converts `example.com/v1` objects (`spec.size`) to `example.com/v2` (`spec.replicas`).
    struct V1ToV2;

    impl Converter for V1ToV2 {
        fn convert(&self, mut object: Value, desired: &str) -> Result<Value, HookError> {
            if desired != "example.com/v2" {
                return Err(format!("no conversion to {desired}").into());
            }
            let size = object
                .pointer("/spec/size")
                .cloned()
                .ok_or("spec.size is missing")?;
            object["apiVersion"] = json!(desired);
            object["spec"] = json!({ "replicas": size });
            Ok(object)
        }
    }

    fn server() -> WebhookServer {
        WebhookServer::builder()
            .defaulter::<ConfigMap>(Labels)
            .validator::<ConfigMap>(Rules)
            .converter(V1ToV2)
            .build()
            .expect("server")
    }

    fn review(operation: &str, object: Value, old: Value) -> Vec<u8> {
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "name": "cm",
                "namespace": "default",
                "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object,
                "oldObject": old,
                "dryRun": false
            }
        })
        .to_string()
        .into_bytes()
    }

    fn cm(extra: Value) -> Value {
        let mut obj = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": "default"},
        });
        if let (Some(o), Some(e)) = (obj.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        obj
    }

    /// The answer's status and its `response`.
    fn response(answer: &Answer) -> Value {
        let body: Value = serde_json::from_slice(&answer.body).expect("json body");
        assert_eq!(body["apiVersion"], "admission.k8s.io/v1", "{body}");
        assert_eq!(body["kind"], "AdmissionReview", "{body}");
        body["response"].clone()
    }

    fn patch_of(resp: &Value) -> Value {
        let bytes: Vec<u8> = serde_json::from_value(resp["patch"].clone()).expect("patch bytes");
        serde_json::from_slice(&bytes).expect("patch json")
    }

    #[test]
    fn paths_follow_controller_runtime() {
        assert_eq!(mutate_path::<ConfigMap>(), "/mutate--v1-configmap");
        assert_eq!(validate_path::<ConfigMap>(), "/validate--v1-configmap");
        assert_eq!(
            webhook_path("mutate", "crew.testproject.org", "v1", "Captain"),
            "/mutate-crew-testproject-org-v1-captain"
        );
        assert_eq!(
            server().paths(),
            [
                "/convert",
                "/mutate--v1-configmap",
                "/validate--v1-configmap"
            ]
        );
        let err = WebhookServer::builder()
            .validator::<ConfigMap>(Rules)
            .validator::<ConfigMap>(Rules)
            .build()
            .expect_err("two validators of one kind");
        assert!(err.to_string().contains("/validate--v1-configmap"), "{err}");
    }

    #[test]
    fn hooks_at_custom_paths_answer_there_and_not_at_the_default_paths() {
        let server = WebhookServer::builder()
            .defaulter_at::<ConfigMap>("/custom-mutate", Labels)
            .validator_at::<ConfigMap>("/hooks/custom_validate", Rules)
            .build()
            .expect("server");
        assert_eq!(server.paths(), ["/custom-mutate", "/hooks/custom_validate"]);
        let create = review("CREATE", cm(json!({"data": {"a": "1"}})), Value::Null);
        let resp = response(&server.handle("/custom-mutate", &create));
        assert_eq!(resp["allowed"], true);
        assert_eq!(
            patch_of(&resp),
            json!([{"op": "add", "path": "/metadata/labels", "value": {"app": "web"}}])
        );
        let secret = review(
            "CREATE",
            cm(json!({"data": {"password": "x"}})),
            Value::Null,
        );
        let resp = response(&server.handle("/hooks/custom_validate", &secret));
        assert_eq!(resp["allowed"], false, "{resp}");
        for default in ["/mutate--v1-configmap", "/validate--v1-configmap"] {
            assert_eq!(
                server.handle(default, &create).status,
                StatusCode::NOT_FOUND,
                "{default}"
            );
        }
        for bad in ["custom-mutate", "/custom/", "/custom mutate", "//x"] {
            let err = WebhookServer::builder()
                .defaulter_at::<ConfigMap>(bad, Labels)
                .build()
                .expect_err(bad);
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
        assert!(is_served_path("/"));
    }

    #[test]
    fn defaulting_answers_the_patch_to_the_defaulted_object() {
        let answer = server().handle(
            "/mutate--v1-configmap",
            &review("CREATE", cm(json!({"data": {"a": "1"}})), Value::Null),
        );
        assert_eq!(answer.status, StatusCode::OK);
        let resp = response(&answer);
        assert_eq!(resp["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
        assert_eq!(resp["allowed"], true);
        assert_eq!(resp["patchType"], "JSONPatch");
        assert_eq!(
            patch_of(&resp),
            json!([{"op": "add", "path": "/metadata/labels", "value": {"app": "web"}}])
        );

        // already defaulted: allowed without a patch
        let labelled = cm(json!({"metadata": {"name": "cm", "labels": {"app": "db"}}}));
        let resp = response(&server().handle(
            "/mutate--v1-configmap",
            &review("UPDATE", labelled.clone(), labelled),
        ));
        assert_eq!(resp["allowed"], true);
        assert!(resp.get("patch").is_none(), "{resp}");
        assert!(resp.get("patchType").is_none(), "{resp}");

        // a delete is not defaulted
        let resp = response(&server().handle(
            "/mutate--v1-configmap",
            &review("DELETE", Value::Null, cm(json!({}))),
        ));
        assert_eq!(resp["allowed"], true);
        assert!(resp.get("patch").is_none(), "{resp}");
    }

    #[test]
    fn validation_answers_allowed_denied_and_warnings() {
        let validate = |op: &str, obj: Value, old: Value| {
            response(&server().handle("/validate--v1-configmap", &review(op, obj, old)))
        };
        let resp = validate(
            "CREATE",
            cm(json!({"data": {"password": "x"}})),
            Value::Null,
        );
        assert_eq!(resp["allowed"], false);
        assert_eq!(
            resp["status"]["message"],
            "data.password is not allowed: use a Secret"
        );
        assert_eq!(resp["status"]["code"], 403);
        assert_eq!(resp["status"]["reason"], "Forbidden");

        let resp = validate("CREATE", cm(json!({})), Value::Null);
        assert_eq!(resp["allowed"], true);
        assert_eq!(resp["warnings"], json!(["data is empty"]));

        let resp = validate("CREATE", cm(json!({"data": {"a": "1"}})), Value::Null);
        assert_eq!(resp["allowed"], true);
        assert!(resp.get("warnings").is_none(), "{resp}");

        let old = cm(json!({"data": {"mode": "fast"}}));
        let resp = validate("UPDATE", cm(json!({"data": {"mode": "slow"}})), old.clone());
        assert_eq!(resp["allowed"], false);
        assert_eq!(resp["status"]["message"], "data.mode is immutable");
        let resp = validate("UPDATE", old.clone(), old);
        assert_eq!(resp["allowed"], true);

        let keep = cm(json!({"metadata": {"name": "cm", "labels": {"keep": "yes"}}}));
        let resp = validate("DELETE", Value::Null, keep);
        assert_eq!(resp["allowed"], false);
        assert_eq!(
            resp["status"]["message"],
            "objects labelled keep cannot be deleted"
        );
        let resp = validate("DELETE", Value::Null, cm(json!({})));
        assert_eq!(resp["allowed"], true);
    }

    #[test]
    fn malformed_reviews_are_refused_without_panicking() {
        let s = server();
        for (body, expected) in [
            (&b"not json"[..], "the request is not JSON"),
            (b"{}", "the request is not an AdmissionReview"),
            (
                br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#,
                "the AdmissionReview has no request",
            ),
            (
                br#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}"#,
                "unsupported AdmissionReview version",
            ),
        ] {
            for path in ["/mutate--v1-configmap", "/validate--v1-configmap"] {
                let answer = s.handle(path, body);
                assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{path}");
                let resp = response(&answer);
                assert_eq!(resp["allowed"], false, "{path}");
                let message = resp["status"]["message"].as_str().unwrap_or_default();
                assert!(message.starts_with(expected), "{path}: {message}");
            }
        }

        // an object that is no ConfigMap: denied with the decoding error, HTTP 200
        let bad = cm(json!({"data": 7}));
        for path in ["/mutate--v1-configmap", "/validate--v1-configmap"] {
            let answer = s.handle(path, &review("CREATE", bad.clone(), Value::Null));
            assert_eq!(answer.status, StatusCode::OK, "{path}");
            let resp = response(&answer);
            assert_eq!(resp["allowed"], false, "{path}");
            assert_eq!(resp["status"]["code"], 400, "{path}");
            let message = resp["status"]["message"].as_str().unwrap_or_default();
            assert!(
                message.starts_with("cannot decode the object"),
                "{path}: {message}"
            );
        }

        // a review of another kind
        let mut other = review("CREATE", cm(json!({})), Value::Null);
        other = String::from_utf8(other)
            .expect("utf8")
            .replace(r#""kind":"ConfigMap"}"#, r#""kind":"Secret"}"#)
            .into_bytes();
        let resp = response(&s.handle("/validate--v1-configmap", &other));
        assert_eq!(resp["allowed"], false);
        assert_eq!(
            resp["status"]["message"],
            "this webhook admits ConfigMap, not Secret"
        );

        let answer = s.handle(
            "/mutate-apps-v1-deployment",
            &review("CREATE", cm(json!({})), Value::Null),
        );
        assert_eq!(answer.status, StatusCode::NOT_FOUND);
    }

    fn conversion(objects: Value, desired: &str) -> Vec<u8> {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {
                "uid": "0000-1111",
                "desiredAPIVersion": desired,
                "objects": objects
            }
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn conversion_answers_converted_objects_or_a_failure() {
        let v1 = |name: &str, size: Value| json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": size}});
        let answer = server().handle(
            "/convert",
            &conversion(
                json!([v1("a", json!(1)), v1("b", json!(2))]),
                "example.com/v2",
            ),
        );
        assert_eq!(answer.status, StatusCode::OK);
        let body: Value = serde_json::from_slice(&answer.body).expect("json");
        assert_eq!(body["apiVersion"], "apiextensions.k8s.io/v1", "{body}");
        assert_eq!(body["kind"], "ConversionReview", "{body}");
        assert_eq!(body["response"]["uid"], "0000-1111");
        assert_eq!(body["response"]["result"]["status"], "Success");
        assert_eq!(
            body["response"]["convertedObjects"],
            json!([
                {"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "a"}, "spec": {"replicas": 1}},
                {"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "b"}, "spec": {"replicas": 2}},
            ])
        );

        // one object fails: the whole review fails, naming it
        let broken = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "c"}, "spec": {}});
        let answer = server().handle(
            "/convert",
            &conversion(json!([v1("a", json!(1)), broken]), "example.com/v2"),
        );
        let body: Value = serde_json::from_slice(&answer.body).expect("json");
        assert_eq!(body["response"]["result"]["status"], "Failure");
        assert_eq!(
            body["response"]["result"]["message"],
            r#"cannot convert "c" to example.com/v2: spec.size is missing"#
        );
        assert_eq!(body["response"]["convertedObjects"], json!([]));

        let answer = server().handle("/convert", b"{\"apiVersion\": 3}");
        assert_eq!(answer.status, StatusCode::BAD_REQUEST);
        let body: Value = serde_json::from_slice(&answer.body).expect("json");
        assert_eq!(body["response"]["result"]["status"], "Failure");
    }

    /// Writes a self-signed certificate for localhost into a fresh directory.
    fn cert_dir() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().expect("tempdir");
        let generated =
            rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("cert");
        std::fs::write(dir.path().join("tls.crt"), generated.cert.pem()).expect("write");
        std::fs::write(
            dir.path().join("tls.key"),
            generated.signing_key.serialize_pem(),
        )
        .expect("write");
        (dir, generated.cert.pem())
    }

    /// Sends one raw HTTP/1.1 request over TLS and returns the raw response.
    async fn send(addr: SocketAddr, cert_pem: &str, request: Vec<u8>) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut tls = connect(addr, cert_pem).await;
        tls.write_all(&request).await.expect("write");
        let mut out = Vec::new();
        let _ = tls.read_to_end(&mut out).await;
        String::from_utf8_lossy(&out).into_owned()
    }

    /// A TLS connection to the server on `addr`, trusting `cert_pem`.
    async fn connect(
        addr: SocketAddr,
        cert_pem: &str,
    ) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(cert_pem.as_bytes()).expect("pem"))
            .expect("trust");
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
        tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
            .expect("handshake")
    }

    /// Sends the headers of a POST of a 4096-byte JSON body to `path`, then one byte of the
    /// body every `gap` (none when `gap` is `None`: the body stalls); the raw response and how
    /// long it took from the headers on.
    async fn send_slowly(
        addr: SocketAddr,
        cert_pem: &str,
        path: &str,
        gap: Option<Duration>,
    ) -> (String, Duration) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let tls = connect(addr, cert_pem).await;
        let (mut read, mut write) = tokio::io::split(tls);
        let head = post(path, "application/json", &[]);
        let head = String::from_utf8(head)
            .expect("utf-8")
            .replace("Content-Length: 0", "Content-Length: 4096");
        write.write_all(head.as_bytes()).await.expect("headers");
        let started = std::time::Instant::now();
        let writer = tokio::spawn(async move {
            let Some(gap) = gap else {
                return std::future::pending::<()>().await;
            };
            for _ in 0..4096 {
                if write.write_all(b" ").await.is_err() || write.flush().await.is_err() {
                    return;
                }
                tokio::time::sleep(gap).await;
            }
        });
        let mut out = Vec::new();
        let read_all = read.read_to_end(&mut out);
        let _ = tokio::time::timeout(Duration::from_secs(30), read_all).await;
        writer.abort();
        (
            String::from_utf8_lossy(&out).into_owned(),
            started.elapsed(),
        )
    }

    fn post(path: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
        let mut req = format!(
            "POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        req.extend_from_slice(body);
        req
    }

    /// Never returns quickly: for the timeout.
    struct Slow;

    impl Validator<ConfigMap> for Slow {
        fn validate_create(&self, _: &ConfigMap) -> Result<Warnings, HookError> {
            std::thread::sleep(Duration::from_secs(3));
            Ok(Warnings::new())
        }
    }

    #[tokio::test]
    async fn served_over_tls_with_a_size_limit_a_timeout_and_readiness() {
        let (dir, pem) = cert_dir();
        let health = Health::default();
        health.set_ready(true);
        let server = WebhookServer::builder()
            .defaulter::<ConfigMap>(Labels)
            .validator::<ConfigMap>(Slow)
            .body_limit(64 * 1024)
            .timeout(Duration::from_millis(500))
            .build()
            .expect("server");
        let bound = server
            .bind(
                "127.0.0.1:0".parse().expect("addr"),
                &CertDir::new(dir.path()),
                Some(&health),
            )
            .await
            .expect("bind");
        assert!(!health.is_ready(), "not ready before it serves");
        let addr = bound.local_addr().expect("addr");
        let stop = CancellationToken::new();
        let task = tokio::spawn(bound.run(stop.clone()));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(health.is_ready(), "ready while serving");

        let body = review("CREATE", cm(json!({"data": {"a": "1"}})), Value::Null);
        let resp = send(
            addr,
            &pem,
            post("/mutate--v1-configmap", "application/json", &body),
        )
        .await;
        assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
        assert!(resp.contains(r#""patchType":"JSONPatch""#), "{resp}");

        let big = vec![b' '; 65 * 1024];
        let resp = send(
            addr,
            &pem,
            post("/mutate--v1-configmap", "application/json", &big),
        )
        .await;
        assert!(resp.starts_with("HTTP/1.1 413"), "{resp}");
        assert!(
            resp.contains("the request body exceeds 65536 bytes"),
            "{resp}"
        );

        let resp = send(
            addr,
            &pem,
            post("/mutate--v1-configmap", "text/plain", &body),
        )
        .await;
        assert!(resp.starts_with("HTTP/1.1 400"), "{resp}");
        assert!(resp.contains("content-type application/json"), "{resp}");

        let get = b"GET /mutate--v1-configmap HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n".to_vec();
        let resp = send(addr, &pem, get).await;
        assert!(resp.starts_with("HTTP/1.1 405"), "{resp}");

        let resp = send(addr, &pem, post("/nope", "application/json", &body)).await;
        assert!(resp.starts_with("HTTP/1.1 404"), "{resp}");

        let resp = send(
            addr,
            &pem,
            post("/validate--v1-configmap", "application/json", &body),
        )
        .await;
        assert!(resp.starts_with("HTTP/1.1 504"), "{resp}");
        assert!(resp.contains("did not answer within 500ms"), "{resp}");

        stop.cancel();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("stops")
            .expect("join");
        assert!(!health.is_ready(), "not ready once stopped");
    }

    /// A client that sends the headers and then stalls, or trickles the body a byte at a time,
    /// gets 504 once the server's timeout passes (not before, not much after), and a request
    /// sent meanwhile is answered at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn slow_clients_get_504_within_the_timeout_and_block_no_one() {
        let (dir, pem) = cert_dir();
        let timeout = Duration::from_secs(2);
        let server = WebhookServer::builder()
            .defaulter::<ConfigMap>(Labels)
            .timeout(timeout)
            .build()
            .expect("server");
        let bound = server
            .bind(
                "127.0.0.1:0".parse().expect("addr"),
                &CertDir::new(dir.path()),
                None,
            )
            .await
            .expect("bind");
        let addr = bound.local_addr().expect("addr");
        let stop = CancellationToken::new();
        let task = tokio::spawn(bound.run(stop.clone()));
        let path = "/mutate--v1-configmap";
        let slow: Vec<_> = [None, Some(Duration::from_millis(50))]
            .into_iter()
            .map(|gap| {
                let pem = pem.clone();
                tokio::spawn(async move { send_slowly(addr, &pem, path, gap).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let body = review("CREATE", cm(json!({"data": {"a": "1"}})), Value::Null);
        let resp = send(addr, &pem, post(path, "application/json", &body)).await;
        assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
        assert!(
            slow.iter().all(|t| !t.is_finished()),
            "answered while both slow clients still wait"
        );
        for (which, t) in ["stalled", "trickling"].iter().zip(slow) {
            let (resp, took) = t.await.expect("join");
            assert!(resp.starts_with("HTTP/1.1 504"), "{which}: {resp}");
            assert!(resp.contains("did not answer within 2s"), "{which}: {resp}");
            assert!(
                took >= timeout && took < timeout + Duration::from_secs(5),
                "{which}: answered after {took:?}"
            );
        }
        stop.cancel();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("stops")
            .expect("join");
    }

    #[tokio::test]
    async fn a_missing_certificate_names_the_flags() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = server()
            .bind(
                "127.0.0.1:0".parse().expect("addr"),
                &CertDir::new(dir.path()),
                None,
            )
            .await
            .expect_err("no certificate");
        let msg = err.to_string();
        assert!(msg.contains("tls.crt"), "{msg}");
        assert!(msg.contains("--webhook-cert-path"), "{msg}");
    }
}
