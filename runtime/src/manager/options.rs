//! Manager settings: the kubebuilder `cmd/main.go` flags as a clap-flattenable struct.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::shard::{Selection, Shard, ShardKey};

/// Where the in-cluster service account namespace is mounted.
pub const SERVICE_ACCOUNT_NAMESPACE_FILE: &str =
    "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// The environment variable naming the one namespace a namespace-scoped manager watches.
pub const WATCH_NAMESPACE_ENV: &str = "WATCH_NAMESPACE";

/// The environment variable the Downward API fills with the pod's namespace.
pub const POD_NAMESPACE_ENV: &str = "POD_NAMESPACE";

/// The webhook server's port unless `--webhook-port` says otherwise (controller-runtime's).
pub const DEFAULT_WEBHOOK_PORT: u16 = 9443;

/// Where the webhook server's certificate is read unless `--webhook-cert-path` says otherwise
/// (controller-runtime's default directory).
pub const DEFAULT_WEBHOOK_CERT_PATH: &str = "/tmp/k8s-webhook-server/serving-certs";

/// Settings of a [`Manager`](super::Manager), spelled like kubebuilder's `cmd/main.go` flags.
///
/// Flatten it into the binary's clap parser with `#[command(flatten)]`; [`Default`] gives the
/// same values as the flag defaults.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
#[non_exhaustive]
pub struct ManagerOptions {
    /// The address the metrics endpoint binds to (":8443", "127.0.0.1:8443"); "0" disables it.
    #[arg(long, value_name = "ADDR", default_value = ":8443")]
    pub metrics_bind_address: String,

    /// Serve /metrics over HTTPS, only to callers whose bearer token passes a TokenReview and
    /// who may get the non-resource URL /metrics; false serves plain HTTP to anyone.
    #[arg(
        long,
        value_name = "BOOL",
        default_value_t = true,
        num_args = 0..=1,
        default_missing_value = "true",
        action = clap::ArgAction::Set
    )]
    pub metrics_secure: bool,

    /// The directory holding the metrics server's certificate and key; unset, a self-signed
    /// certificate is generated at start.
    #[arg(long, value_name = "DIR")]
    pub metrics_cert_path: Option<PathBuf>,

    /// The certificate file in --metrics-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.crt")]
    pub metrics_cert_name: String,

    /// The key file in --metrics-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.key")]
    pub metrics_cert_key: String,

    /// The port the webhook server listens on (all interfaces), when the binary registers
    /// webhooks.
    #[arg(long, value_name = "PORT", default_value_t = DEFAULT_WEBHOOK_PORT)]
    pub webhook_port: u16,

    /// The directory holding the webhook server's certificate and key (cert-manager's Secret
    /// is mounted here); reloaded when the files change.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_WEBHOOK_CERT_PATH)]
    pub webhook_cert_path: PathBuf,

    /// The certificate file in --webhook-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.crt")]
    pub webhook_cert_name: String,

    /// The key file in --webhook-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.key")]
    pub webhook_cert_key: String,

    /// The address the probe endpoints (/healthz, /readyz) bind to; "0" disables them.
    #[arg(long, value_name = "ADDR", default_value = ":8081")]
    pub health_probe_bind_address: String,

    /// Enable leader election, ensuring only one active manager replica reconciles.
    #[arg(
        long,
        value_name = "BOOL",
        default_value_t = false,
        num_args = 0..=1,
        default_missing_value = "true",
        action = clap::ArgAction::Set
    )]
    pub leader_elect: bool,

    /// The name of the Lease used for leader election [default: <project>-leader].
    #[arg(long, value_name = "NAME")]
    pub leader_election_id: Option<String>,

    /// The namespace of the leader election Lease [default: $POD_NAMESPACE, else the
    /// in-cluster service account namespace, else "default"].
    #[arg(long, value_name = "NAMESPACE")]
    pub leader_election_namespace: Option<String>,

    /// How long non-leaders wait after the last renewal before they may take the lease.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_duration)]
    pub leader_election_lease_duration: Duration,

    /// How long the leader keeps retrying to renew before it gives up leadership and exits.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub leader_election_renew_deadline: Duration,

    /// How long to wait between attempts to acquire or renew the lease.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
    pub leader_election_retry_period: Duration,

    /// How long controllers get to finish after SIGTERM/SIGINT before they are aborted.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub graceful_shutdown_timeout: Duration,

    /// How many shards split the objects between replica sets (one Deployment per shard);
    /// 1 reconciles every object.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub shard_count: u32,

    /// Which shard, from 0 to --shard-count - 1, this replica set reconciles; each shard elects
    /// its own leader.
    #[arg(long, value_name = "I", default_value_t = 0)]
    pub shard_index: u32,

    /// What places an object in a shard: the hash of its uid, or of its namespace (every
    /// object of a namespace in one shard).
    #[arg(long, value_name = "KEY", value_enum, default_value_t = ShardKey::Uid)]
    pub shard_key: ShardKey,

    /// How a shard's lists and watches keep to it: auto asks the apiserver whether it honours
    /// the shard selector, server sends the selector, client drops other shards' objects as
    /// they arrive.
    #[arg(long, value_name = "HOW", value_enum, default_value_t = Selection::Auto)]
    pub shard_selection: Selection,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        Self {
            metrics_bind_address: ":8443".to_owned(),
            metrics_secure: true,
            metrics_cert_path: None,
            metrics_cert_name: "tls.crt".to_owned(),
            metrics_cert_key: "tls.key".to_owned(),
            webhook_port: DEFAULT_WEBHOOK_PORT,
            webhook_cert_path: PathBuf::from(DEFAULT_WEBHOOK_CERT_PATH),
            webhook_cert_name: "tls.crt".to_owned(),
            webhook_cert_key: "tls.key".to_owned(),
            health_probe_bind_address: ":8081".to_owned(),
            leader_elect: false,
            leader_election_id: None,
            leader_election_namespace: None,
            leader_election_lease_duration: Duration::from_secs(15),
            leader_election_renew_deadline: Duration::from_secs(10),
            leader_election_retry_period: Duration::from_secs(2),
            graceful_shutdown_timeout: Duration::from_secs(30),
            shard_count: 1,
            shard_index: 0,
            shard_key: ShardKey::Uid,
            shard_selection: Selection::Auto,
        }
    }
}

impl ManagerOptions {
    /// Sets `--metrics-bind-address`.
    #[must_use]
    pub fn metrics_bind_address(mut self, addr: impl Into<String>) -> Self {
        self.metrics_bind_address = addr.into();
        self
    }

    /// Sets `--metrics-secure`.
    #[must_use]
    pub fn metrics_secure(mut self, on: bool) -> Self {
        self.metrics_secure = on;
        self
    }

    /// Sets `--metrics-cert-path`.
    #[must_use]
    pub fn metrics_cert_path(mut self, dir: impl Into<PathBuf>) -> Self {
        self.metrics_cert_path = Some(dir.into());
        self
    }

    /// Sets `--webhook-port`.
    #[must_use]
    pub fn webhook_port(mut self, port: u16) -> Self {
        self.webhook_port = port;
        self
    }

    /// Sets `--webhook-cert-path`.
    #[must_use]
    pub fn webhook_cert_path(mut self, dir: impl Into<PathBuf>) -> Self {
        self.webhook_cert_path = dir.into();
        self
    }

    /// The address the webhook server binds: all interfaces on `--webhook-port`.
    pub fn webhook_addr(&self) -> SocketAddr {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), self.webhook_port)
    }

    /// The webhook server's certificate files in `--webhook-cert-path`.
    pub fn webhook_certs(&self) -> crate::webhook::CertDir {
        crate::webhook::CertDir {
            dir: self.webhook_cert_path.clone(),
            cert_name: self.webhook_cert_name.clone(),
            key_name: self.webhook_cert_key.clone(),
        }
    }

    /// Sets `--health-probe-bind-address`.
    #[must_use]
    pub fn health_probe_bind_address(mut self, addr: impl Into<String>) -> Self {
        self.health_probe_bind_address = addr.into();
        self
    }

    /// Sets `--leader-elect`.
    #[must_use]
    pub fn leader_elect(mut self, on: bool) -> Self {
        self.leader_elect = on;
        self
    }

    /// Sets `--leader-election-id`.
    #[must_use]
    pub fn leader_election_id(mut self, id: impl Into<String>) -> Self {
        self.leader_election_id = Some(id.into());
        self
    }

    /// Sets `--leader-election-namespace`.
    #[must_use]
    pub fn leader_election_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.leader_election_namespace = Some(namespace.into());
        self
    }

    /// The metrics address; `None` when disabled.
    pub fn metrics_addr(&self) -> Result<Option<SocketAddr>> {
        parse_bind_address("--metrics-bind-address", &self.metrics_bind_address)
    }

    /// The probe address; `None` when disabled.
    pub fn health_probe_addr(&self) -> Result<Option<SocketAddr>> {
        parse_bind_address(
            "--health-probe-bind-address",
            &self.health_probe_bind_address,
        )
    }

    /// The Lease name: `--leader-election-id`, else `<name>-leader`; with more than one shard,
    /// the shard's own Lease of that name ([`Shard::lease_name`]).
    pub fn lease_name(&self, name: &str) -> String {
        self.shard().lease_name(&self.lease_base(name))
    }

    /// The Lease name before the shard's suffix: `--leader-election-id`, else `<name>-leader`.
    /// Every shard's Lease, whatever the shard count, is of this group.
    pub fn lease_base(&self, name: &str) -> String {
        match &self.leader_election_id {
            Some(id) if !id.trim().is_empty() => id.trim().to_owned(),
            _ => format!("{name}-leader"),
        }
    }

    /// The shard `--shard-index` of `--shard-count`, by `--shard-key`, kept to as
    /// `--shard-selection` says; every object when index and count are out of range, which
    /// [`ManagerOptions::validate`] refuses.
    pub fn shard(&self) -> Shard {
        Shard::new(self.shard_index, self.shard_count)
            .unwrap_or(Shard::ALL)
            .by(self.shard_key)
            .selected(self.shard_selection)
    }

    /// The Lease namespace: `--leader-election-namespace`, else `$POD_NAMESPACE`, else the
    /// in-cluster service account namespace, else `default`.
    pub fn lease_namespace(&self) -> String {
        resolve_namespace(
            self.leader_election_namespace.as_deref(),
            std::env::var(POD_NAMESPACE_ENV).ok().as_deref(),
            std::fs::read_to_string(SERVICE_ACCOUNT_NAMESPACE_FILE)
                .ok()
                .as_deref(),
        )
    }

    /// Checks the leader election timings the way client-go does.
    pub fn validate(&self) -> Result<()> {
        self.metrics_addr()?;
        self.health_probe_addr()?;
        if Shard::new(self.shard_index, self.shard_count).is_none() {
            return Err(Error::Shard {
                index: self.shard_index,
                count: self.shard_count,
            });
        }
        let retry_jittered = self
            .leader_election_retry_period
            .mul_f64(super::leader::JITTER_FACTOR);
        if self.leader_election_lease_duration <= self.leader_election_renew_deadline
            || self.leader_election_renew_deadline <= retry_jittered
        {
            return Err(Error::LeaderElectionTimings {
                lease_duration: self.leader_election_lease_duration,
                renew_deadline: self.leader_election_renew_deadline,
                retry_period: self.leader_election_retry_period,
            });
        }
        Ok(())
    }
}

/// The namespace a namespace-scoped manager watches, from `$WATCH_NAMESPACE`; `None` (unset or
/// empty) means all namespaces.
pub fn watch_namespace() -> Option<String> {
    parse_watch_namespace(std::env::var(WATCH_NAMESPACE_ENV).ok().as_deref())
}

pub(crate) fn parse_watch_namespace(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// Picks the first non-empty of flag, env and file, else `default`.
pub(crate) fn resolve_namespace(
    flag: Option<&str>,
    env: Option<&str>,
    file: Option<&str>,
) -> String {
    [flag, env, file]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|v| !v.is_empty())
        .unwrap_or("default")
        .to_owned()
}

/// Parses a Go-style listen address: `:8080` binds all interfaces, `host:port` binds one,
/// `0` or an empty string disables the server (`None`).
pub fn parse_bind_address(flag: &'static str, value: &str) -> Result<Option<SocketAddr>> {
    let invalid = || Error::BindAddress {
        flag,
        value: value.to_owned(),
    };
    let v = value.trim();
    if v.is_empty() || v == "0" {
        return Ok(None);
    }
    let (host, port) = v.rsplit_once(':').ok_or_else(invalid)?;
    let port: u16 = port.parse().map_err(|_| invalid())?;
    let ip = match host {
        "" | "0.0.0.0" => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
        "[::]" => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        h => h
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(h)
            .parse()
            .map_err(|_| invalid())?,
    };
    Ok(Some(SocketAddr::new(ip, port)))
}

/// Parses a Go-style duration: `15s`, `500ms`, `1m`, `1h`, `1m30s`; a bare number is seconds.
pub fn parse_duration(value: &str) -> Result<Duration> {
    let invalid = || Error::Duration(value.to_owned());
    let v = value.trim();
    if v.is_empty() {
        return Err(invalid());
    }
    if let Ok(secs) = v.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).map_err(|_| invalid());
    }
    let mut total = Duration::ZERO;
    let mut rest = v;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(invalid)?;
        let (num, tail) = rest.split_at(num_len);
        let num: f64 = num.parse().map_err(|_| invalid())?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let scale = match unit {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(invalid()),
        };
        total += Duration::try_from_secs_f64(num * scale).map_err(|_| invalid())?;
        rest = tail;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        manager: ManagerOptions,
    }

    fn addr(v: &str) -> Option<SocketAddr> {
        parse_bind_address("--x", v).expect("valid address")
    }

    #[test]
    fn bind_addresses() {
        assert_eq!(addr(":8080"), Some("0.0.0.0:8080".parse().expect("addr")));
        assert_eq!(
            addr("127.0.0.1:9"),
            Some("127.0.0.1:9".parse().expect("addr"))
        );
        assert_eq!(
            addr("localhost:8443"),
            Some("127.0.0.1:8443".parse().expect("addr"))
        );
        assert_eq!(
            addr("[::1]:8081"),
            Some("[::1]:8081".parse().expect("addr"))
        );
        assert_eq!(addr("[::]:8081"), Some("[::]:8081".parse().expect("addr")));
        assert_eq!(addr("0"), None);
        assert_eq!(addr(""), None);
        for bad in ["8080", ":http", "host:8080", ":70000", "1.2.3:80"] {
            let err = parse_bind_address("--metrics-bind-address", bad).expect_err(bad);
            assert!(err.to_string().contains("--metrics-bind-address"), "{err}");
        }
    }

    #[test]
    fn durations() {
        let d = |v| parse_duration(v).expect("valid duration");
        assert_eq!(d("15s"), Duration::from_secs(15));
        assert_eq!(d("500ms"), Duration::from_millis(500));
        assert_eq!(d("1m30s"), Duration::from_secs(90));
        assert_eq!(d("1h"), Duration::from_secs(3600));
        assert_eq!(d("2"), Duration::from_secs(2));
        assert_eq!(d("1.5s"), Duration::from_millis(1500));
        for bad in ["", "s", "10x", "-1s", "5 s"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn flag_defaults_match_default_impl() {
        let cli = Cli::try_parse_from(["bin"]).expect("parse");
        assert_eq!(cli.manager, ManagerOptions::default());
    }

    #[test]
    fn flags_parse_like_go() {
        let cli = Cli::try_parse_from([
            "bin",
            "--leader-elect",
            "--metrics-bind-address=:8443",
            "--leader-election-id",
            "abc.example.com",
            "--leader-election-lease-duration=30s",
        ])
        .expect("parse");
        assert!(cli.manager.leader_elect);
        assert_eq!(cli.manager.metrics_bind_address, ":8443");
        assert_eq!(cli.manager.lease_name("proj"), "abc.example.com");
        assert_eq!(
            cli.manager.leader_election_lease_duration,
            Duration::from_secs(30)
        );
        let cli = Cli::try_parse_from(["bin", "--leader-elect=false"]).expect("parse");
        assert!(!cli.manager.leader_elect);
        assert!(cli.manager.metrics_secure, "metrics are secure by default");
        let cli = Cli::try_parse_from([
            "bin",
            "--metrics-secure=false",
            "--metrics-cert-path=/certs",
            "--metrics-cert-name=c.pem",
        ])
        .expect("parse");
        assert!(!cli.manager.metrics_secure);
        assert_eq!(cli.manager.metrics_cert_path, Some(PathBuf::from("/certs")));
        assert_eq!(cli.manager.metrics_cert_name, "c.pem");
        assert_eq!(cli.manager.metrics_cert_key, "tls.key");
        let cli = Cli::try_parse_from(["bin", "--leader-elect=true"]).expect("parse");
        assert!(cli.manager.leader_elect);

        let cli = Cli::try_parse_from(["bin"]).expect("parse");
        assert_eq!(cli.manager.webhook_port, 9443);
        assert_eq!(
            cli.manager.webhook_cert_path,
            PathBuf::from("/tmp/k8s-webhook-server/serving-certs")
        );
        assert_eq!(
            cli.manager.webhook_addr(),
            "0.0.0.0:9443".parse().expect("addr")
        );
        let cli = Cli::try_parse_from([
            "bin",
            "--webhook-port=9444",
            "--webhook-cert-path",
            "/certs",
            "--webhook-cert-key=k.pem",
        ])
        .expect("parse");
        assert_eq!(cli.manager.webhook_port, 9444);
        let certs = cli.manager.webhook_certs();
        assert_eq!(certs.dir, PathBuf::from("/certs"));
        assert_eq!(
            (certs.cert_name.as_str(), certs.key_name.as_str()),
            ("tls.crt", "k.pem")
        );
        assert!(Cli::try_parse_from(["bin", "--webhook-port=70000"]).is_err());
    }

    #[test]
    fn shards_have_their_own_lease_and_an_index_below_the_count() {
        let cli =
            Cli::try_parse_from(["bin", "--shard-count=3", "--shard-index=2"]).expect("parse");
        assert_eq!(cli.manager.shard(), Shard::new(2, 3).expect("shard"));
        assert_eq!(cli.manager.lease_name("proj"), "proj-leader-shard-2-of-3");
        let cli = Cli::try_parse_from([
            "bin",
            "--shard-count=3",
            "--shard-index=1",
            "--shard-key=namespace",
            "--shard-selection=client",
        ])
        .expect("parse");
        let shard = cli.manager.shard();
        assert_eq!(
            (shard.key(), shard.selection()),
            (ShardKey::Namespace, Selection::Client)
        );
        assert!(Cli::try_parse_from(["bin", "--shard-key=name"]).is_err());
        assert!(cli.manager.validate().is_ok());
        let cli =
            Cli::try_parse_from(["bin", "--shard-count=3", "--shard-index=3"]).expect("parse");
        let error = cli
            .manager
            .validate()
            .expect_err("index 3 of 3")
            .to_string();
        assert!(
            error.contains("invalid --shard-index 3 for --shard-count 3"),
            "{error}"
        );
        let cli = Cli::try_parse_from(["bin", "--shard-count=0"]).expect("parse");
        assert!(cli.manager.validate().is_err());
        assert_eq!(ManagerOptions::default().shard(), Shard::ALL);
    }

    #[test]
    fn lease_name_defaults_to_project() {
        assert_eq!(
            ManagerOptions::default().lease_name("memcached-operator"),
            "memcached-operator-leader"
        );
    }

    #[test]
    fn namespace_resolution_order() {
        assert_eq!(resolve_namespace(Some("a"), Some("b"), Some("c\n")), "a");
        assert_eq!(resolve_namespace(None, Some("b"), Some("c")), "b");
        assert_eq!(resolve_namespace(None, Some(""), Some("c\n")), "c");
        assert_eq!(resolve_namespace(None, None, None), "default");
    }

    #[test]
    fn watch_namespace_empty_means_all() {
        assert_eq!(parse_watch_namespace(None), None);
        assert_eq!(parse_watch_namespace(Some(" ")), None);
        assert_eq!(
            parse_watch_namespace(Some("team-a")),
            Some("team-a".to_owned())
        );
    }

    #[test]
    fn timings_are_validated() {
        assert!(ManagerOptions::default().validate().is_ok());
        let o = ManagerOptions {
            leader_election_renew_deadline: Duration::from_secs(15),
            ..ManagerOptions::default()
        };
        assert!(o.validate().is_err());
        let o = ManagerOptions {
            leader_election_retry_period: Duration::from_secs(9),
            ..ManagerOptions::default()
        };
        assert!(o.validate().is_err());
        let o = ManagerOptions::default().metrics_bind_address("nope");
        assert!(o.validate().is_err());
    }
}
