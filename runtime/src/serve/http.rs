//! Serving HTTP/1.1: binding a listener, accepting connections (over TLS when the server has a
//! certificate), and answering each request with the server's routes, behind the authorization
//! check when it has one.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::authz::{Authorizer, Verdict};
use crate::error::{Error, Result};

/// How long a client gets to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a client gets to send a request's headers; the connection is closed after that.
const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// What one server answers: the probes, the metrics, the webhooks.
pub(crate) trait Routes: Send + Sync + 'static {
    /// The answer to `req`, which has passed the server's authorization check, if any.
    fn respond(&self, req: Request<Incoming>)
    -> impl Future<Output = Response<Full<Bytes>>> + Send;
}

/// A response of `status` with a body of `content_type`.
pub(crate) fn text(
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

/// The content type of plain text answers.
pub(crate) const PLAIN: &str = "text/plain; charset=utf-8";

/// Answers a `GET` or `HEAD` of a path with what `answer` gives for it, 404 when it gives
/// nothing, and any other method with 405.
pub(crate) fn get(
    req: &Request<Incoming>,
    answer: impl FnOnce(&str) -> Option<Response<Full<Bytes>>>,
) -> Response<Full<Bytes>> {
    let method = req.method();
    if method != Method::GET && method != Method::HEAD {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            PLAIN,
            "method not allowed\n",
        );
    }
    answer(req.uri().path())
        .unwrap_or_else(|| text(StatusCode::NOT_FOUND, PLAIN, "404 page not found\n"))
}

/// One server: its routes, and for secure metrics the TLS acceptor and the check every request
/// passes before routing (as controller-runtime's filter wraps the whole metrics handler).
pub(crate) struct Server<R> {
    pub(crate) routes: R,
    pub(crate) tls: Option<TlsAcceptor>,
    pub(crate) auth: Option<Authorizer>,
    /// Set while the server accepts connections: the readiness check of a server the manager
    /// must wait for (the webhook server).
    pub(crate) serving: Option<Arc<AtomicBool>>,
}

impl<R: Routes> Server<R> {
    /// A plain HTTP server without authentication.
    pub(crate) fn plain(routes: R) -> Self {
        Self {
            routes,
            tls: None,
            auth: None,
            serving: None,
        }
    }

    async fn respond(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        if let Some(auth) = &self.auth {
            let (method, path) = (req.method(), req.uri().path());
            let verb = method.as_str().to_ascii_lowercase();
            match auth
                .review(req.headers().get(header::AUTHORIZATION), &verb, path)
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
        self.routes.respond(req).await
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
pub(crate) async fn serve<R: Routes>(
    listener: TcpListener,
    server: Server<R>,
    stop: CancellationToken,
) {
    let server = Arc::new(server);
    if let Some(flag) = &server.serving {
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
    if let Some(flag) = &server.serving {
        flag.store(false, Ordering::SeqCst);
    }
    connections.shutdown().await;
}

/// Answers HTTP/1.1 requests on one connection.
async fn serve_connection<I, R>(io: I, server: Arc<Server<R>>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    R: Routes,
{
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let server = Arc::clone(&server);
        async move {
            let resp = server.respond(req).await;
            Ok::<_, Infallible>(resp)
        }
    });
    if let Err(e) = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(TokioIo::new(io), service)
        .await
    {
        tracing::debug!(error = %e, "http connection ended with an error");
    }
}

/// A plain HTTP/1.1 GET of `path` on `addr`, for the tests of the servers built on this module:
/// the whole response, status line and headers included.
#[cfg(test)]
pub(crate) async fn test_get(addr: SocketAddr, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .expect("write");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("read");
    out
}

#[cfg(test)]
mod tests {
    use super::test_get as get;
    use super::*;
    use crate::serve::Health;

    async fn start<R: Routes>(
        routes: R,
    ) -> (SocketAddr, CancellationToken, tokio::task::JoinHandle<()>) {
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
        let (addr, stop, task) = start(health.clone()).await;

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

    /// A client that stops halfway through its headers is disconnected after
    /// [`HEADER_READ_TIMEOUT`], and requests on other connections are answered meanwhile.
    #[tokio::test]
    async fn a_client_stalling_in_its_headers_is_cut_off() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let health = Health::default();
        let (addr, stop, task) = start(health.clone()).await;
        let mut stalled = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stalled
            .write_all(b"POST /healthz HTTP/1.1\r\nHost: t\r\nContent-")
            .await
            .expect("write");
        let started = std::time::Instant::now();
        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        let mut out = Vec::new();
        let limit = HEADER_READ_TIMEOUT + std::time::Duration::from_secs(10);
        tokio::time::timeout(limit, stalled.read_to_end(&mut out))
            .await
            .expect("the stalled connection is closed")
            .expect("read");
        let took = started.elapsed();
        assert!(took >= HEADER_READ_TIMEOUT, "closed after {took:?}");
        stop.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(5), task)
            .await
            .expect("server stops on cancel")
            .expect("server task");
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
