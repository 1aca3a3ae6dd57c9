//! The one error type of the crate; every message names the thing and, where there is one, the fix.

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

/// Why the control plane could not be started or used.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `KUBEBUILDER_ASSETS` is not set.
    #[error("KUBEBUILDER_ASSETS is not set; export KUBEBUILDER_ASSETS=$(operator-gen envtest use)")]
    AssetsNotSet,
    /// A binary is missing from the assets directory.
    #[error("{binary} not found in {} (KUBEBUILDER_ASSETS); export KUBEBUILDER_ASSETS=$(operator-gen envtest use)", dir.display())]
    MissingBinary {
        /// The binary's file name.
        binary: &'static str,
        /// The directory searched.
        dir: PathBuf,
    },
    /// The start timeout setting could not be read.
    #[error(
        "invalid KUBEBUILDER_CONTROLPLANE_START_TIMEOUT {value:?}; use seconds such as 60s or 2m"
    )]
    InvalidTimeout {
        /// The value as set.
        value: String,
    },
    /// A file or directory could not be created or written.
    #[error("cannot write {}: {error}", path.display())]
    Io {
        /// The path that could not be written.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
    /// No free loopback port could be reserved.
    #[error("cannot reserve a free port on 127.0.0.1: {0}")]
    Port(std::io::Error),
    /// Key or certificate generation failed.
    #[error("cannot generate {what}: {error}")]
    Certificate {
        /// Which key or certificate.
        what: &'static str,
        /// The underlying error.
        error: rcgen::Error,
    },
    /// A binary could not be started.
    #[error("cannot start {}: {error}", path.display())]
    Spawn {
        /// The binary.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
    /// A process exited before the control plane was ready.
    #[error("{name} exited ({status}) before the control plane was ready; end of {}:\n{log_tail}", log.display())]
    Exited {
        /// `etcd` or `kube-apiserver`.
        name: &'static str,
        /// Its exit status.
        status: ExitStatus,
        /// Its log file.
        log: PathBuf,
        /// The last lines of its log.
        log_tail: String,
    },
    /// kube-apiserver did not report ready in time.
    #[error(
        "kube-apiserver not ready after {}s (raise KUBEBUILDER_CONTROLPLANE_START_TIMEOUT); last answer: {last}; end of {}:\n{log_tail}",
        timeout.as_secs(),
        log.display()
    )]
    NotReady {
        /// How long it waited.
        timeout: Duration,
        /// The last error or answer from `/readyz`.
        last: String,
        /// The apiserver's log file.
        log: PathBuf,
        /// The last lines of that log.
        log_tail: String,
    },
    /// A TokenRequest was answered without a token.
    #[error("the apiserver returned no token for service account {account}")]
    NoToken {
        /// `namespace/name`.
        account: String,
    },
    /// A CRD directory holds no CRD, or a file in it is not one.
    #[error("{}: {why}; run `make manifests` (operator-gen manifests) to write the CRDs", path.display())]
    CrdFile {
        /// The directory or file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A test object's YAML file cannot be read as its type.
    #[error("{}: {why}; fix the file", path.display())]
    ObjectFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A CRD to install has no `metadata.name`.
    #[error("a CRD to install has no metadata.name")]
    UnnamedCrd,
    /// An installed CRD did not become usable.
    #[error("CRD {name} is not usable: {why}")]
    CrdNotEstablished {
        /// The CRD's name.
        name: String,
        /// What was wrong, with its conditions.
        why: String,
    },
    /// The generated kubeconfig could not be loaded by kube.
    #[error("cannot load the generated kubeconfig: {0}")]
    Kubeconfig(#[from] kube::config::KubeconfigError),
    /// A client could not be built or a request failed.
    #[error("{what}: {error}")]
    Kube {
        /// What was being done.
        what: String,
        /// The underlying error.
        error: kube::Error,
    },
}

/// Shorthand used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |error| Error::Io { path, error }
    }

    pub(crate) fn kube(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
        let what = what.into();
        move |error| Error::Kube { what, error }
    }
}
