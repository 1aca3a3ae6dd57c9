//! An in-memory apiserver for tests: serves one kind, Leases, with resourceVersion conflicts, and
//! lists them by label (`labelSelector=key=value,...`).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, Response, StatusCode};
use k8s_openapi::api::coordination::v1::Lease;

#[derive(Default)]
struct State {
    leases: BTreeMap<String, Lease>,
    version: u64,
}

/// The fake apiserver; cheap to clone, shared by every client made from it.
#[derive(Clone, Default)]
pub(crate) struct FakeApi {
    state: Arc<Mutex<State>>,
    failing: Arc<AtomicBool>,
    /// How long each answer is held back after the request took effect.
    delay: Arc<Mutex<std::time::Duration>>,
}

fn status(code: StatusCode, reason: &str) -> Response<Full<Bytes>> {
    let body = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": reason, "reason": reason, "code": code.as_u16(),
    });
    json(code, &body)
}

fn json(code: StatusCode, body: &impl serde::Serialize) -> Response<Full<Bytes>> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut resp = Response::new(Full::new(Bytes::from(bytes)));
    *resp.status_mut() = code;
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    resp
}

impl FakeApi {
    /// A client talking to this fake.
    pub fn client(&self) -> kube::Client {
        let this = self.clone();
        let svc = tower::service_fn(move |req: Request<kube::client::Body>| {
            let this = this.clone();
            async move {
                let response = this.handle(req).await;
                let delay = *this
                    .delay
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                tokio::time::sleep(delay).await;
                Ok::<_, Infallible>(response)
            }
        });
        kube::Client::new(svc, "default")
    }

    /// Makes every request fail with 500 (an unreachable apiserver) or work again.
    pub fn set_failing(&self, failing: bool) {
        self.failing.store(failing, Ordering::SeqCst);
    }

    /// Holds back every answer by `delay` after its request took effect (a slow network).
    pub fn set_reply_delay(&self, delay: std::time::Duration) {
        *self
            .delay
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = delay;
    }

    /// The stored Lease `ns/name`.
    pub fn lease(&self, ns: &str, name: &str) -> Option<Lease> {
        let state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.leases.get(&format!("{ns}/{name}")).cloned()
    }

    async fn handle(&self, req: Request<kube::client::Body>) -> Response<Full<Bytes>> {
        if self.failing.load(Ordering::SeqCst) {
            return status(StatusCode::INTERNAL_SERVER_ERROR, "InternalError");
        }
        let method = req.method().clone();
        let path = req.uri().path().to_owned();
        let query = req.uri().query().unwrap_or_default().to_owned();
        let body = match req.into_body().collect().await {
            Ok(b) => b.to_bytes(),
            Err(_) => return status(StatusCode::BAD_REQUEST, "BadRequest"),
        };
        let Some(rest) = path.strip_prefix("/apis/coordination.k8s.io/v1/namespaces/") else {
            return status(StatusCode::NOT_FOUND, "NotFound");
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match (method, parts.as_slice()) {
            (Method::GET, [ns, "leases", name]) => {
                match state.leases.get(&format!("{ns}/{name}")) {
                    Some(l) => json(StatusCode::OK, l),
                    None => status(StatusCode::NOT_FOUND, "NotFound"),
                }
            }
            (Method::GET, [ns, "leases"]) => {
                let selector: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
                    .filter(|(k, _)| k == "labelSelector")
                    .flat_map(|(_, v)| {
                        v.split(',')
                            .filter_map(|term| term.split_once('='))
                            .map(|(k, v)| (k.to_owned(), v.to_owned()))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                let prefix = format!("{ns}/");
                let items: Vec<&Lease> = state
                    .leases
                    .iter()
                    .filter(|(key, _)| key.starts_with(&prefix))
                    .map(|(_, lease)| lease)
                    .filter(|lease| {
                        selector.iter().all(|(k, v)| {
                            lease.metadata.labels.as_ref().and_then(|l| l.get(k)) == Some(v)
                        })
                    })
                    .collect();
                let body = serde_json::json!({
                    "apiVersion": "coordination.k8s.io/v1", "kind": "LeaseList",
                    "metadata": {"resourceVersion": state.version.to_string()},
                    "items": items,
                });
                json(StatusCode::OK, &body)
            }
            (Method::POST, [ns, "leases"]) => {
                let Ok(mut lease) = serde_json::from_slice::<Lease>(&body) else {
                    return status(StatusCode::BAD_REQUEST, "BadRequest");
                };
                let key = format!("{ns}/{}", lease.metadata.name.clone().unwrap_or_default());
                if state.leases.contains_key(&key) {
                    return status(StatusCode::CONFLICT, "AlreadyExists");
                }
                state.version += 1;
                lease.metadata.resource_version = Some(state.version.to_string());
                state.leases.insert(key, lease.clone());
                json(StatusCode::CREATED, &lease)
            }
            (Method::PUT, [ns, "leases", name]) => {
                let Ok(mut lease) = serde_json::from_slice::<Lease>(&body) else {
                    return status(StatusCode::BAD_REQUEST, "BadRequest");
                };
                let key = format!("{ns}/{name}");
                let Some(stored) = state.leases.get(&key) else {
                    return status(StatusCode::NOT_FOUND, "NotFound");
                };
                if stored.metadata.resource_version != lease.metadata.resource_version {
                    return status(StatusCode::CONFLICT, "Conflict");
                }
                state.version += 1;
                lease.metadata.resource_version = Some(state.version.to_string());
                state.leases.insert(key, lease.clone());
                json(StatusCode::OK, &lease)
            }
            _ => status(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed"),
        }
    }
}
