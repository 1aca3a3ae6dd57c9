//! Secure metrics serving: the TLS certificate (provided in `--metrics-cert-path` or self-signed at
//! start) and the authentication and authorization check in front of `/metrics` (TokenReview, then
//! SubjectAccessReview for `get` on the non-resource URL).

use std::path::Path;
use std::sync::Arc;

use hyper::header::HeaderValue;
use k8s_openapi::api::authentication::v1::TokenReview;
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use kube::api::PostParams;
use kube::{Api, Client};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

use super::error::{Error, Result};
use super::options::ManagerOptions;

/// The names the self-signed certificate is valid for.
const SELF_SIGNED_NAMES: &[&str] = &["localhost", "127.0.0.1"];

/// The TLS acceptor of the metrics server: the certificate and key in `--metrics-cert-path`
/// (files `--metrics-cert-name` and `--metrics-cert-key`) when set, else a self-signed
/// certificate generated now.
pub(crate) fn tls_acceptor(options: &ManagerOptions) -> Result<TlsAcceptor> {
    let (certs, key) = match &options.metrics_cert_path {
        Some(dir) => load(
            &dir.join(&options.metrics_cert_name),
            &dir.join(&options.metrics_cert_key),
        )?,
        None => self_signed()?,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
        .map_err(|e| Error::MetricsCert {
            path: options.metrics_cert_path.clone(),
            reason: e.to_string(),
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Reads a PEM certificate chain and a PEM private key.
fn load(cert: &Path, key: &Path) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let failed = |path: &Path, reason: String| Error::MetricsCert {
        path: Some(path.to_path_buf()),
        reason,
    };
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| failed(cert, e.to_string()))?;
    if certs.is_empty() {
        return Err(failed(cert, "no PEM certificate in the file".to_owned()));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| failed(key, e.to_string()))?;
    Ok((certs, key))
}

/// A certificate for [`SELF_SIGNED_NAMES`] signed by its own fresh key.
fn self_signed() -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let names: Vec<String> = SELF_SIGNED_NAMES.iter().map(|n| (*n).to_owned()).collect();
    let generated = rcgen::generate_simple_self_signed(names).map_err(|e| Error::MetricsCert {
        path: None,
        reason: e.to_string(),
    })?;
    let key = PrivatePkcs8KeyDer::from(generated.signing_key.serialize_der());
    Ok((vec![generated.cert.der().clone()], key.into()))
}

/// What the check decided about one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The caller may read the path.
    Allowed,
    /// No bearer token, or one the apiserver does not accept: 401.
    Unauthenticated,
    /// The caller is authenticated but may not read the path: 403.
    Forbidden,
    /// A review could not be made (the manager's own permissions, the apiserver): 500.
    Failed(String),
}

/// Authenticates callers with a TokenReview and authorizes them with a SubjectAccessReview, as
/// controller-runtime's `WithAuthenticationAndAuthorization` filter does; the manager's identity
/// needs `create` on `tokenreviews` and `subjectaccessreviews` (the `metrics-auth-role`).
#[derive(Clone)]
pub(crate) struct Authorizer {
    client: Client,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer").finish_non_exhaustive()
    }
}

impl Authorizer {
    pub(crate) fn new(client: Client) -> Self {
        Self { client }
    }

    /// Decides whether the bearer of `authorization` may `verb` the non-resource URL `path`.
    pub(crate) async fn review(
        &self,
        authorization: Option<&HeaderValue>,
        verb: &str,
        path: &str,
    ) -> Verdict {
        let Some(token) = bearer_token(authorization) else {
            return Verdict::Unauthenticated;
        };
        // Built from JSON: the spec's field types differ between the Kubernetes versions
        // k8s-openapi supports (`token` is optional in some, required in others).
        let review: TokenReview = match serde_json::from_value(serde_json::json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": { "token": token },
        })) {
            Ok(r) => r,
            Err(e) => return Verdict::Failed(format!("cannot build a token review: {e}")),
        };
        let reviewed = match Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
        {
            Ok(r) => r,
            Err(e) => {
                return Verdict::Failed(format!(
                    "token review failed: {e}; the manager's service account needs create on tokenreviews (metrics-auth-role)"
                ));
            }
        };
        let status = reviewed.status.unwrap_or_default();
        let user = match (status.authenticated, status.user) {
            (Some(true), Some(user)) => user,
            _ => return Verdict::Unauthenticated,
        };
        let access: SubjectAccessReview = match serde_json::from_value(serde_json::json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user.username,
                "groups": user.groups,
                "uid": user.uid,
                "extra": user.extra,
                "nonResourceAttributes": { "path": path, "verb": verb },
            },
        })) {
            Ok(r) => r,
            Err(e) => return Verdict::Failed(format!("cannot build a subject access review: {e}")),
        };
        match Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &access)
            .await
        {
            Ok(r) if r.status.as_ref().is_some_and(|s| s.allowed) => Verdict::Allowed,
            Ok(_) => Verdict::Forbidden,
            Err(e) => Verdict::Failed(format!(
                "subject access review failed: {e}; the manager's service account needs create on subjectaccessreviews (metrics-auth-role)"
            )),
        }
    }
}

/// The token of an `Authorization: Bearer <token>` header; the scheme is case-insensitive.
pub(crate) fn bearer_token(header: Option<&HeaderValue>) -> Option<&str> {
    let value = header?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens() {
        let h = |v: &'static str| HeaderValue::from_static(v);
        assert_eq!(bearer_token(Some(&h("Bearer abc.def"))), Some("abc.def"));
        assert_eq!(bearer_token(Some(&h("bearer  abc "))), Some("abc"));
        assert_eq!(bearer_token(Some(&h("Basic dXNlcjpwdw=="))), None);
        assert_eq!(bearer_token(Some(&h("Bearer "))), None);
        assert_eq!(bearer_token(Some(&h("Bearer"))), None);
        assert_eq!(bearer_token(None), None);
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
