//! Liveness and readiness, as the probe server answers them on `/healthz` and `/readyz`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};

use super::http::{PLAIN, Routes, get, text};

/// Liveness and readiness as the probe server reports them.
///
/// `/healthz` answers 200 while the server runs; `/readyz` answers 200 once the manager marks
/// itself ready (when [`Manager::run`](crate::manager::Manager::run) starts, before leadership, as in
/// controller-runtime) and 503 again once shutdown begins.
///
/// Servers that must be up for the manager to be ready (the webhook server) add a check; `/readyz`
/// answers 503 naming the first check that fails.
#[derive(Debug, Clone, Default)]
pub struct Health {
    ready: Arc<AtomicBool>,
    checks: Arc<Mutex<Vec<Check>>>,
}

/// A named readiness check: ready while its flag is set.
type Check = (&'static str, Arc<AtomicBool>);

impl Health {
    /// Marks the manager ready or not ready.
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
    }

    /// Whether `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.not_ready().is_none()
    }

    /// Why `/readyz` answers 503, if it does.
    fn not_ready(&self) -> Option<String> {
        if !self.ready.load(Ordering::SeqCst) {
            return Some("manager is not running".to_owned());
        }
        let checks = self.checks.lock().unwrap_or_else(PoisonError::into_inner);
        checks
            .iter()
            .find(|(_, ok)| !ok.load(Ordering::SeqCst))
            .map(|(name, _)| format!("{name} is not serving"))
    }

    /// A readiness check named `name`, failing until the returned flag is set.
    pub(crate) fn add_check(&self, name: &'static str) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        self.checks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((name, Arc::clone(&flag)));
        flag
    }
}

/// `/healthz` and `/readyz`.
impl Routes for Health {
    async fn respond(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        get(&req, |path| match path {
            "/healthz" | "/healthz/" => Some(text(StatusCode::OK, PLAIN, "ok")),
            "/readyz" | "/readyz/" => Some(match self.not_ready() {
                None => text(StatusCode::OK, PLAIN, "ok"),
                Some(why) => text(StatusCode::SERVICE_UNAVAILABLE, PLAIN, format!("{why}\n")),
            }),
            _ => None,
        })
    }
}
