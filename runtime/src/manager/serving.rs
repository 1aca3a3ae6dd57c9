//! The manager's metrics server: `/metrics` in OpenMetrics, over TLS with the certificate in
//! `--metrics-cert-path` (or a self-signed one) when `--metrics-secure`.

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use tokio_rustls::TlsAcceptor;

use super::metrics::{Metrics, OPENMETRICS_CONTENT_TYPE};
use super::options::ManagerOptions;
use crate::error::{Error, Result};
use crate::serve::http::{PLAIN, Routes, get, text};
use crate::serve::tls::{self, CertFiles, CertUse};

/// `/metrics`.
impl Routes for Metrics {
    async fn respond(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        get(&req, |path| {
            (path == "/metrics").then(|| match self.encode() {
                Ok(body) => text(StatusCode::OK, OPENMETRICS_CONTENT_TYPE, body),
                Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, PLAIN, format!("{e}\n")),
            })
        })
    }
}

const METRICS: CertUse = CertUse {
    server: "metrics",
    error: |path, reason| Error::MetricsCert { path, reason },
};

/// The TLS acceptor of the metrics server: the certificate and key in `--metrics-cert-path`
/// (files `--metrics-cert-name` and `--metrics-cert-key`) when set, reloaded when the files
/// change (as cert-manager rotates a mounted Secret), else a self-signed certificate generated now.
pub(crate) fn tls_acceptor(options: &ManagerOptions) -> Result<TlsAcceptor> {
    let files = options.metrics_cert_path.as_ref().map(|dir| CertFiles {
        cert: dir.join(&options.metrics_cert_name),
        key: dir.join(&options.metrics_cert_key),
    });
    tls::acceptor(files, &METRICS)
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::manager::fake_api::FakeApi;
    use crate::serve::authz::Authorizer;
    use crate::serve::http::{Server, bind, serve, test_get as get};

    #[tokio::test]
    async fn metrics_answer_in_openmetrics() {
        let metrics = Metrics::new();
        metrics
            .reconcile_started("guestbook")
            .finish(super::super::ReconcileResult::Success);
        let listener = bind("metrics", "127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let stop = CancellationToken::new();
        tokio::spawn(serve(listener, Server::plain(metrics), stop.clone()));
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
        let options = ManagerOptions::default().metrics_cert_path(dir.path());
        let api = FakeApi::default();
        let listener = bind("metrics", "127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let stop = CancellationToken::new();
        let server = Server {
            routes: Metrics::new(),
            tls: Some(tls_acceptor(&options).expect("tls")),
            auth: Some(Authorizer::new(api.client())),
            serving: None,
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

    #[test]
    fn self_signed_certificate_is_served() {
        assert!(tls_acceptor(&ManagerOptions::default()).is_ok());
    }

    #[test]
    fn provided_certificate_is_loaded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let generated =
            rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("cert");
        std::fs::write(dir.path().join("cert.pem"), generated.cert.pem()).expect("write");
        std::fs::write(
            dir.path().join("key.pem"),
            generated.signing_key.serialize_pem(),
        )
        .expect("write");
        let mut options = ManagerOptions::default().metrics_cert_path(dir.path());
        options.metrics_cert_name = "cert.pem".to_owned();
        options.metrics_cert_key = "key.pem".to_owned();
        assert!(tls_acceptor(&options).is_ok());

        // the default file names are absent: the error names the missing file and the flags
        let options = ManagerOptions::default().metrics_cert_path(dir.path());
        let Err(err) = tls_acceptor(&options) else {
            panic!("tls.crt is missing, yet the certificate loaded");
        };
        let msg = err.to_string();
        assert!(msg.contains("tls.crt"), "{msg}");
        assert!(msg.contains("--metrics-cert-path"), "{msg}");

        // a key that does not match the certificate
        let other = rcgen::KeyPair::generate().expect("key");
        std::fs::write(dir.path().join("key.pem"), other.serialize_pem()).expect("write");
        let mut options = ManagerOptions::default().metrics_cert_path(dir.path());
        options.metrics_cert_name = "cert.pem".to_owned();
        options.metrics_cert_key = "key.pem".to_owned();
        let Err(err) = tls_acceptor(&options) else {
            panic!("the key does not match the certificate, yet it loaded");
        };
        let msg = err.to_string();
        assert!(msg.contains("--metrics-cert-path"), "{msg}");
    }
}
