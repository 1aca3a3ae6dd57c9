//! The probe (`/healthz`, `/readyz`) and metrics (`/metrics`) HTTP servers, the metrics one over
//! TLS behind the authentication and authorization check when secure.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::error::{Error, Result};
use super::metrics::{Metrics, OPENMETRICS_CONTENT_TYPE};
use super::secure::{Authorizer, Verdict};

/// How long a client gets to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Liveness and readiness as the probe server reports them.
///
/// `/healthz` answers 200 while the server runs; `/readyz` answers 200 once the manager marks
/// itself ready (when [`Manager::run`](super::Manager::run) starts, before leadership, as in
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

/// What one server answers.
#[derive(Debug, Clone)]
pub(crate) enum Routes {
    /// `/healthz` and `/readyz`.
    Probes(Health),
    /// `/metrics`.
    Metrics(Metrics),
    /// Admission and conversion webhooks (`POST`), with the readiness flag set while serving.
    Webhooks(crate::webhook::WebhookServer, Option<Arc<AtomicBool>>),
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
            (Self::Probes(h), "/readyz" | "/readyz/") => match h.not_ready() {
                None => text(StatusCode::OK, PLAIN, "ok"),
                Some(why) => text(StatusCode::SERVICE_UNAVAILABLE, PLAIN, format!("{why}\n")),
            },
            (Self::Metrics(m), "/metrics") => match m.encode() {
                Ok(body) => text(StatusCode::OK, OPENMETRICS_CONTENT_TYPE, body),
                Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, PLAIN, format!("{e}\n")),
            },
            _ => text(StatusCode::NOT_FOUND, PLAIN, "404 page not found\n"),
        }
    }
}

/// One server: its routes, and for secure metrics the TLS acceptor and the check every request
/// passes before routing (as controller-runtime's filter wraps the whole metrics handler).
pub(crate) struct Server {
    pub(crate) routes: Routes,
    pub(crate) tls: Option<TlsAcceptor>,
    pub(crate) auth: Option<Authorizer>,
}

impl Server {
    /// A plain HTTP server without authentication.
    pub(crate) fn plain(routes: Routes) -> Self {
        Self {
            routes,
            tls: None,
            auth: None,
        }
    }

    async fn respond(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        if let Routes::Webhooks(webhooks, _) = &self.routes {
            return webhooks.respond(req).await;
        }
        let (method, path, headers) = (req.method(), req.uri().path(), req.headers());
        if let Some(auth) = &self.auth {
            let verb = method.as_str().to_ascii_lowercase();
            match auth
                .review(headers.get(header::AUTHORIZATION), &verb, path)
                .await
            {
                Verdict::Allowed => {}
                Verdict::Unauthenticated => {
                    let mut resp = text(StatusCode::UNAUTHORIZED, PLAIN, "Unauthorized\n");
                    resp.headers_mut().insert(
                        header::WWW_AUTHENTICATE,
                        header::HeaderValue::from_static("Bearer"),
                    );
                    return resp;
                }
                Verdict::Forbidden => return text(StatusCode::FORBIDDEN, PLAIN, "Forbidden\n"),
                Verdict::Failed(reason) => {
                    tracing::warn!(%path, error = %reason, "cannot check a metrics request");
                    return text(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        PLAIN,
                        "Authentication or authorization failed\n",
                    );
                }
            }
        }
        self.routes.answer(method, path)
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

/// Serves `server` on `listener` until `stop` is cancelled; open connections are dropped then.
pub(crate) async fn serve(listener: TcpListener, server: Server, stop: CancellationToken) {
    let server = Arc::new(server);
    let serving = match &server.routes {
        Routes::Webhooks(_, Some(flag)) => Some(Arc::clone(flag)),
        _ => None,
    };
    if let Some(flag) = &serving {
        flag.store(true, Ordering::SeqCst);
    }
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
        let server = Arc::clone(&server);
        connections.spawn(async move {
            match &server.tls {
                None => serve_connection(stream, server).await,
                Some(acceptor) => {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => serve_connection(tls, server).await,
                        Ok(Err(e)) => tracing::debug!(error = %e, "tls handshake failed"),
                        Err(_) => tracing::debug!("tls handshake timed out"),
                    }
                }
            }
        });
    }
    if let Some(flag) = &serving {
        flag.store(false, Ordering::SeqCst);
    }
    connections.shutdown().await;
}

/// Answers HTTP/1.1 requests on one connection.
async fn serve_connection<I>(io: I, server: Arc<Server>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let server = Arc::clone(&server);
        async move {
            let resp = server.respond(req).await;
            Ok::<_, Infallible>(resp)
        }
    });
    if let Err(e) = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(io), service)
        .await
    {
        tracing::debug!(error = %e, "http connection ended with an error");
    }
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
        let task = tokio::spawn(serve(listener, Server::plain(routes), stop.clone()));
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

    /// `GET path` over TLS, trusting only `cert_pem`; `None` when the handshake fails.
    async fn get_tls(
        addr: SocketAddr,
        cert_pem: &str,
        path: &str,
        authorization: Option<&str>,
    ) -> Option<String> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(cert_pem.as_bytes()).expect("pem"))
            .expect("trust the test certificate");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
        let mut tls = connector.connect(name, tcp).await.ok()?;
        let auth = authorization
            .map(|a| format!("Authorization: {a}\r\n"))
            .unwrap_or_default();
        tls.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: t\r\n{auth}Connection: close\r\n\r\n").as_bytes(),
        )
        .await
        .expect("write");
        let mut out = String::new();
        let _ = tls.read_to_string(&mut out).await;
        Some(out)
    }

    #[tokio::test]
    async fn secure_metrics_need_a_token_over_tls() {
        let dir = tempfile::tempdir().expect("tempdir");
        let generated =
            rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("cert");
        let cert_pem = generated.cert.pem();
        std::fs::write(dir.path().join("tls.crt"), &cert_pem).expect("write");
        std::fs::write(
            dir.path().join("tls.key"),
            generated.signing_key.serialize_pem(),
        )
        .expect("write");
        let options = super::super::ManagerOptions::default().metrics_cert_path(dir.path());
        let api = super::super::fake_api::FakeApi::default();
        let listener = bind("metrics", "127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let stop = CancellationToken::new();
        let server = Server {
            routes: Routes::Metrics(Metrics::new()),
            tls: Some(super::super::secure::tls_acceptor(&options).expect("tls")),
            auth: Some(Authorizer::new(api.client())),
        };
        tokio::spawn(serve(listener, server, stop.clone()));

        let resp = get_tls(addr, &cert_pem, "/metrics", None)
            .await
            .expect("handshake with the provided certificate");
        assert!(resp.starts_with("HTTP/1.1 401"), "{resp}");
        assert!(resp.contains("www-authenticate: Bearer"), "{resp}");
        let resp = get_tls(addr, &cert_pem, "/metrics", Some("Basic dTpw"))
            .await
            .expect("handshake");
        assert!(resp.starts_with("HTTP/1.1 401"), "{resp}");
        // every path is checked before routing
        let resp = get_tls(addr, &cert_pem, "/nope", None)
            .await
            .expect("handshake");
        assert!(resp.starts_with("HTTP/1.1 401"), "{resp}");
        // the fake apiserver serves no TokenReview: the check fails closed
        let resp = get_tls(addr, &cert_pem, "/metrics", Some("Bearer t0ken"))
            .await
            .expect("handshake");
        assert!(resp.starts_with("HTTP/1.1 500"), "{resp}");
        assert!(!resp.contains("controller_runtime"), "{resp}");
        // plain HTTP on the TLS port gets no answer
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .await
            .expect("write");
        let mut plain = Vec::new();
        let _ = s.read_to_end(&mut plain).await;
        assert!(!plain.starts_with(b"HTTP/1.1"), "{plain:?}");
        // a client that does not trust the certificate fails the handshake
        let other = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("cert");
        assert!(
            get_tls(addr, &other.cert.pem(), "/metrics", None)
                .await
                .is_none()
        );
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
