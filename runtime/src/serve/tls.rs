//! The TLS side of a server: its certificate, provided as PEM files (read again when they
//! change, as cert-manager rotates a mounted Secret) or self-signed at start.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_rustls::TlsAcceptor;

use crate::error::{Error, Result};

/// The names the self-signed certificate is valid for.
const SELF_SIGNED_NAMES: &[&str] = &["localhost", "127.0.0.1"];

/// How often a handshake may look whether the provided certificate files changed.
pub(crate) const RELOAD_CHECK: Duration = Duration::from_secs(10);

/// The certificate and key files a server reads (PEM).
#[derive(Debug, Clone)]
pub(crate) struct CertFiles {
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
}

/// Which server a certificate is for: names it in logs and errors.
#[derive(Debug)]
pub(crate) struct CertUse {
    /// `metrics` or `webhook`, for the logs.
    pub(crate) server: &'static str,
    /// Builds the error naming the server's flags.
    pub(crate) error: fn(Option<PathBuf>, String) -> Error,
}

/// A TLS acceptor (HTTP/1.1) presenting the certificate in `files`, read again when the files'
/// modification times change (checked at most every 10s, on a handshake); without files, a
/// self-signed certificate for localhost and 127.0.0.1 generated now.
pub(crate) fn acceptor(files: Option<CertFiles>, usage: &'static CertUse) -> Result<TlsAcceptor> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let source = match files {
        Some(files) => CertSource::watched(
            files.cert,
            files.key,
            Arc::clone(&provider),
            RELOAD_CHECK,
            usage,
        )?,
        None => CertSource::self_signed(Arc::clone(&provider), usage)?,
    };
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| (usage.error)(None, e.to_string()))?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(source));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The certificate a server presents: fixed, or read from files and read again when
/// their modification times change (checked at most once per `every`, on a handshake).
#[derive(Debug)]
struct CertSource {
    usage: &'static CertUse,
    files: Option<Watched>,
    current: Mutex<Current>,
}

#[derive(Debug)]
struct Watched {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    every: Duration,
}

#[derive(Debug)]
struct Current {
    key: Arc<CertifiedKey>,
    stamps: Option<(SystemTime, SystemTime)>,
    checked: Instant,
}

impl CertSource {
    fn self_signed(provider: Arc<CryptoProvider>, usage: &'static CertUse) -> Result<Self> {
        let names: Vec<String> = SELF_SIGNED_NAMES.iter().map(|n| (*n).to_owned()).collect();
        let failed = |reason: String| (usage.error)(None, reason);
        let generated =
            rcgen::generate_simple_self_signed(names).map_err(|e| failed(e.to_string()))?;
        let key = PrivatePkcs8KeyDer::from(generated.signing_key.serialize_der());
        let key = CertifiedKey::from_der(vec![generated.cert.der().clone()], key.into(), &provider)
            .map_err(|e| failed(e.to_string()))?;
        Ok(Self {
            usage,
            files: None,
            current: Mutex::new(Current {
                key: Arc::new(key),
                stamps: None,
                checked: Instant::now(),
            }),
        })
    }

    fn watched(
        cert: PathBuf,
        key: PathBuf,
        provider: Arc<CryptoProvider>,
        every: Duration,
        usage: &'static CertUse,
    ) -> Result<Self> {
        let stamps = stamps(&cert, &key);
        let loaded = load(&cert, &key, &provider, usage)?;
        Ok(Self {
            usage,
            files: Some(Watched {
                cert,
                key,
                provider,
                every,
            }),
            current: Mutex::new(Current {
                key: Arc::new(loaded),
                stamps,
                checked: Instant::now(),
            }),
        })
    }

    /// The certificate to present now, read again first when the files changed; a file that
    /// no longer loads keeps the previous certificate (and is logged).
    fn current(&self) -> Arc<CertifiedKey> {
        let mut current = self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(files) = &self.files
            && current.checked.elapsed() >= files.every
        {
            current.checked = Instant::now();
            let stamps = stamps(&files.cert, &files.key);
            if stamps.is_some() && stamps != current.stamps {
                current.stamps = stamps;
                match load(&files.cert, &files.key, &files.provider, self.usage) {
                    Ok(key) => {
                        tracing::info!(server = self.usage.server, cert = %files.cert.display(), "reloaded the certificate");
                        current.key = Arc::new(key);
                    }
                    Err(e) => {
                        tracing::warn!(server = self.usage.server, error = %e, "keeping the previous certificate");
                    }
                }
            }
        }
        Arc::clone(&current.key)
    }
}

impl ResolvesServerCert for CertSource {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

/// The modification times of both files (following symlinks, as a mounted Secret is).
fn stamps(cert: &Path, key: &Path) -> Option<(SystemTime, SystemTime)> {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    Some((modified(cert)?, modified(key)?))
}

/// Reads a PEM certificate chain and its PEM private key, and checks that they match.
fn load(
    cert: &Path,
    key: &Path,
    provider: &CryptoProvider,
    usage: &CertUse,
) -> Result<CertifiedKey> {
    let failed = |path: &Path, reason: String| (usage.error)(Some(path.to_path_buf()), reason);
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| failed(cert, e.to_string()))?;
    if certs.is_empty() {
        return Err(failed(cert, "no PEM certificate in the file".to_owned()));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| failed(key, e.to_string()))?;
    CertifiedKey::from_der(certs, private, provider).map_err(|e| failed(key, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST: CertUse = CertUse {
        server: "test",
        error: |path, reason| Error::MetricsCert { path, reason },
    };

    #[test]
    fn self_signed_certificate_is_served() {
        assert!(acceptor(None, &TEST).is_ok());
    }

    #[test]
    fn provided_certificate_is_reloaded_when_its_files_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        let write = |at: SystemTime| -> Vec<u8> {
            let generated =
                rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("cert");
            std::fs::write(&cert, generated.cert.pem()).expect("write");
            std::fs::write(&key, generated.signing_key.serialize_pem()).expect("write");
            for file in [&cert, &key] {
                std::fs::File::options()
                    .write(true)
                    .open(file)
                    .and_then(|f| f.set_modified(at))
                    .expect("set mtime");
            }
            generated.cert.der().to_vec()
        };
        let start = SystemTime::now();
        let first = write(start);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let source =
            CertSource::watched(cert.clone(), key.clone(), provider, Duration::ZERO, &TEST)
                .expect("load");
        assert_eq!(source.current().cert[0].as_ref(), first.as_slice());

        let second = write(start + Duration::from_secs(60));
        assert_eq!(
            source.current().cert[0].as_ref(),
            second.as_slice(),
            "rotated files are served"
        );

        // a broken rotation keeps the last good certificate
        std::fs::write(&key, "not a key").expect("write");
        std::fs::File::options()
            .write(true)
            .open(&key)
            .and_then(|f| f.set_modified(start + Duration::from_secs(120)))
            .expect("set mtime");
        assert_eq!(source.current().cert[0].as_ref(), second.as_slice());
    }
}
