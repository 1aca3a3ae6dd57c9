//! The one error type of the manager and the webhook server: what went wrong and what to do
//! about it.

use std::time::Duration;

/// Everything [`Manager`](crate::manager::Manager) and the webhook server can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A `--*-bind-address` flag does not parse.
    #[error(
        "invalid {flag} {value:?}: expected \":PORT\", \"HOST:PORT\", or \"0\" to disable the server"
    )]
    BindAddress {
        /// The flag that carried the value.
        flag: &'static str,
        /// The value as given.
        value: String,
    },

    /// A listener could not be bound.
    #[error(
        "cannot listen on {addr} for the {server} server: {source}; {}",
        bind_hint(server)
    )]
    Bind {
        /// `metrics`, `health-probe` or `webhook`.
        server: &'static str,
        /// The address that was tried.
        addr: std::net::SocketAddr,
        /// Why binding failed.
        #[source]
        source: std::io::Error,
    },

    /// A duration flag does not parse.
    #[error(
        "invalid duration {0:?}: expected a number with a unit such as \"15s\", \"500ms\" or \"1m\""
    )]
    Duration(String),

    /// `--shard-index` is not below `--shard-count`, or the count is 0.
    #[error(
        "invalid --shard-index {index} for --shard-count {count}: the index must be from 0 to the count minus 1, and the count at least 1"
    )]
    Shard {
        /// `--shard-index`.
        index: u32,
        /// `--shard-count`.
        count: u32,
    },

    /// The leader election timings contradict each other.
    #[error(
        "invalid leader election timings: lease duration ({lease_duration:?}) must exceed renew deadline ({renew_deadline:?}), which must exceed 1.2 x retry period ({retry_period:?}); adjust the --leader-election-* flags"
    )]
    LeaderElectionTimings {
        /// `--leader-election-lease-duration`.
        lease_duration: Duration,
        /// `--leader-election-renew-deadline`.
        renew_deadline: Duration,
        /// `--leader-election-retry-period`.
        retry_period: Duration,
    },

    /// The manager was given an empty name.
    #[error("the manager name is empty: pass the project name to Manager::new")]
    EmptyName,

    /// No Kubernetes client could be built.
    #[error("cannot build a kubernetes client: {0}; set KUBECONFIG or run inside a cluster")]
    Client(#[source] kube::Error),

    /// The Lease could not be read or written.
    #[error(
        "leader election on lease {namespace}/{name} failed: {source}; check that the service account may get, create and update coordination.k8s.io leases"
    )]
    Lease {
        /// Lease namespace.
        namespace: String,
        /// Lease name.
        name: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },

    /// The lease could not be renewed within the renew deadline; another replica may lead now.
    #[error(
        "leader election lost: lease {namespace}/{name} was not renewed within {renew_deadline:?}; exiting so that only one replica reconciles"
    )]
    LeadershipLost {
        /// Lease namespace.
        namespace: String,
        /// Lease name.
        name: String,
        /// The renew deadline that passed.
        renew_deadline: Duration,
    },

    /// A controller future returned before shutdown was requested.
    #[error(
        "controller {0:?} stopped before shutdown was requested; a controller future must run until the manager's shutdown signal fires"
    )]
    ControllerStopped(String),

    /// A controller future panicked.
    #[error("controller {0:?} panicked; see the log above")]
    ControllerPanicked(String),

    /// Installing the SIGTERM/SIGINT handler failed.
    #[error("cannot install the signal handler: {0}")]
    Signal(#[source] std::io::Error),

    /// The metrics server's certificate could not be loaded or generated.
    #[error(
        "cannot set up tls for the metrics server{}: {reason}; give --metrics-cert-path a directory holding a PEM certificate and its key (file names --metrics-cert-name, --metrics-cert-key), omit it for a self-signed certificate, or serve plain http with --metrics-secure=false",
        path.as_ref().map(|p| format!(" from {}", p.display())).unwrap_or_default()
    )]
    MetricsCert {
        /// The file or directory that failed, when one was given.
        path: Option<std::path::PathBuf>,
        /// What went wrong.
        reason: String,
    },

    /// The webhook server's certificate could not be loaded.
    #[error(
        "cannot set up tls for the webhook server from {}: {reason}; put a PEM certificate and its key in --webhook-cert-path (file names --webhook-cert-name, --webhook-cert-key), as cert-manager mounts its Secret",
        path.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "its certificate".to_owned())
    )]
    WebhookCert {
        /// The file that failed, when one was read.
        path: Option<std::path::PathBuf>,
        /// What went wrong.
        reason: String,
    },

    /// Two webhooks of one kind were registered on one path.
    #[error(
        "two webhooks are registered on {0}: register one defaulter, one validator per kind and one converter"
    )]
    WebhookPath(String),

    /// A hook was registered on a path the webhook server cannot serve.
    #[error(
        "webhook path {0:?} is invalid: a path is `/` or `/` followed by segments of letters, digits, `-` and `_`, e.g. /custom-mutate"
    )]
    WebhookPathInvalid(String),

    /// Encoding the metrics registry failed.
    #[error("cannot encode metrics: {0}")]
    Encode(#[source] std::fmt::Error),
}

/// How to pick another address for `server`.
fn bind_hint(server: &str) -> String {
    match server {
        "webhook" => "free the port or pick another with --webhook-port".to_owned(),
        _ => format!("free the port or pick another with --{server}-bind-address (0 disables it)"),
    }
}

/// `Result` with the runtime's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
