//! The probe (`/healthz`, `/readyz`) and metrics (`/metrics`) HTTP servers.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::error::{Error, Result};
use super::metrics::{Metrics, OPENMETRICS_CONTENT_TYPE};

/// Liveness and readiness as the probe server reports them.
///
/// `/healthz` answers 200 while the server runs; `/readyz` answers 200 once the manager marks
/// itself ready (when [`Manager::run`](super::Manager::run) starts, before leadership, as in
/// controller-runtime) and 503 again once shutdown begins.
#[derive(Debug, Clone, Default)]
pub struct Health {
    ready: Arc<AtomicBool>,
}

impl Health {
    /// Marks the manager ready or not ready.
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
    }

    /// Whether `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }
}

/// What one server answers.
#[derive(Debug, Clone)]
pub(crate) enum Routes {
    /// `/healthz` and `/readyz`.
    Probes(Health),
    /// `/metrics`.
    Metrics(Metrics),
}

fn text(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(body.into()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    resp
}

const PLAIN: &str = "text/plain; charset=utf-8";

impl Routes {
    fn answer(&self, method: &Method, path: &str) -> Response<Full<Bytes>> {
        if method != Method::GET && method != Method::HEAD {
            return text(
                StatusCode::METHOD_NOT_ALLOWED,
                PLAIN,
                "method not allowed\n",
            );
        }
        match (self, path) {
            (Self::Probes(_), "/healthz" | "/healthz/") => text(StatusCode::OK, PLAIN, "ok"),
            (Self::Probes(h), "/readyz" | "/readyz/") if h.is_ready() => {
                text(StatusCode::OK, PLAIN, "ok")
            }
            (Self::Probes(_), "/readyz" | "/readyz/") => text(
                StatusCode::SERVICE_UNAVAILABLE,
                PLAIN,
                "manager is not running\n",
            ),
            (Self::Metrics(m), "/metrics") => match m.encode() {
                Ok(body) => text(StatusCode::OK, OPENMETRICS_CONTENT_TYPE, body),
                Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, PLAIN, format!("{e}\n")),
            },
            _ => text(StatusCode::NOT_FOUND, PLAIN, "404 page not found\n"),
        }
    }
}

/// Binds `addr`, naming `server` in the error.
pub(crate) async fn bind(server: &'static str, addr: SocketAddr) -> Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|source| Error::Bind {
        server,
        addr,
        source,
    })
}

/// Serves `routes` on `listener` until `stop` is cancelled; open connections are dropped then.
pub(crate) async fn serve(listener: TcpListener, routes: Routes, stop: CancellationToken) {
    let routes = Arc::new(routes);
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let routes = Arc::clone(&routes);
        connections.spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let resp = routes.answer(req.method(), req.uri().path());
                async move { Ok::<_, Infallible>(resp) }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %e, "http connection ended with an error");
            }
        });
    }
    connections.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        s.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .expect("write");
        let mut out = String::new();
        s.read_to_string(&mut out).await.expect("read");
        out
    }

    async fn start(routes: Routes) -> (SocketAddr, CancellationToken, tokio::task::JoinHandle<()>) {
        let listener = bind("health-probe", "127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let stop = CancellationToken::new();
        let task = tokio::spawn(serve(listener, routes, stop.clone()));
        (addr, stop, task)
    }

    #[tokio::test]
    async fn probes_answer() {
        let health = Health::default();
        let (addr, stop, task) = start(Routes::Probes(health.clone())).await;

        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        let not_ready = get(addr, "/readyz").await;
        assert!(not_ready.starts_with("HTTP/1.1 503"), "{not_ready}");
        health.set_ready(true);
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 200"));
        assert!(get(addr, "/nope").await.starts_with("HTTP/1.1 404"));

        stop.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(5), task)
            .await
            .expect("server stops on cancel")
            .expect("server task");
        assert!(
            tokio::net::TcpStream::connect(addr).await.is_err(),
            "listener closed"
        );
    }

    #[tokio::test]
    async fn metrics_answer_in_openmetrics() {
        let metrics = Metrics::new();
        metrics
            .reconcile_started("guestbook")
            .finish(super::super::metrics::ReconcileResult::Success);
        let (addr, stop, _task) = start(Routes::Metrics(metrics)).await;
        let resp = get(addr, "/metrics").await;
        assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
        assert!(resp.contains("application/openmetrics-text"), "{resp}");
        assert!(
            resp.contains(
                r#"controller_runtime_reconcile_total{controller="guestbook",result="success"} 1"#
            ),
            "{resp}"
        );
        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.1 404"));
        stop.cancel();
    }

    #[tokio::test]
    async fn bind_error_names_the_flag() {
        let first = bind("metrics", "127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("bind");
        let taken = first.local_addr().expect("addr");
        let err = bind("metrics", taken).await.expect_err("port is taken");
        assert!(err.to_string().contains("--metrics-bind-address"), "{err}");
    }
}
