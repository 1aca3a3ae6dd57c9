//! Starting etcd and kube-apiserver with envtest's flags, waiting for `/readyz`, handing out clients, tearing down.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};

use crate::assets::{self, ETCD, KUBE_APISERVER};
use crate::certs::{KeyCert, Pki};
use crate::error::{Error, Result};
use crate::kubeconfig::{self, Credentials};
use crate::process::Process;

/// The environment variable envtest reads for the start timeout (`60s`, `2m`, `1m30s`).
pub const START_TIMEOUT_ENV: &str = "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT";

/// Start timeout when neither [`Settings::start_timeout`] nor [`START_TIMEOUT_ENV`] is set;
/// generous, because a shared two-core machine takes a while.
const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(90);

/// How often to start over on new ports when one was taken.
const PORT_ATTEMPTS: u32 = 3;

/// How a [`ControlPlane`] starts; `Settings::default()` is what [`ControlPlane::start`] uses.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Directory holding `etcd` and `kube-apiserver`; `None` reads `KUBEBUILDER_ASSETS`.
    pub assets: Option<PathBuf>,
    /// How long to wait for `/readyz`; `None` reads `KUBEBUILDER_CONTROLPLANE_START_TIMEOUT`,
    /// else 90 seconds.
    pub start_timeout: Option<Duration>,
    /// Extra kube-apiserver flags (`--name=value`), passed after the defaults: a single-value flag
    /// given again replaces the default, a list flag (such as `--disable-admission-plugins`)
    /// adds to it, and `--feature-gates` adds to and overrides the defaults' gates (from
    /// Kubernetes 1.36 on, `ShardedListAndWatch=true`).
    pub apiserver_args: Vec<String>,
    /// An audit policy (an `audit.k8s.io/v1` `Policy`, as YAML). When set, the apiserver writes
    /// the requests it selects as JSON lines to [`ControlPlane::audit_log`], each before it
    /// answers (the log backend's blocking mode).
    pub audit_policy: Option<String>,
}

/// A running etcd and kube-apiserver on loopback ports, with an admin (`system:masters`) client.
///
/// Dropping it kills both processes and removes its temp dir, also while a test panics.
pub struct ControlPlane {
    client: kube::Client,
    config: kube::Config,
    server: String,
    etcd_url: String,
    kubeconfig: PathBuf,
    audit_log: Option<PathBuf>,
    apiserver_binary: PathBuf,
    apiserver_args: Vec<String>,
    apiserver_log: PathBuf,
    timeout: Duration,
    // fields drop in declaration order: the apiserver goes before etcd, the temp dir last;
    // `None` between `stop_apiserver` and `start_apiserver`
    apiserver: Option<Process>,
    etcd: Process,
    dir: tempfile::TempDir,
}

impl ControlPlane {
    /// Starts a control plane from the binaries in `KUBEBUILDER_ASSETS` and waits until it is ready.
    pub async fn start() -> Result<ControlPlane> {
        ControlPlane::start_with(Settings::default()).await
    }

    /// Starts a control plane as `settings` says and waits until it is ready; notes in the test
    /// record that the calling test ran against it ([`crate::ci::record_ran`]).
    pub async fn start_with(settings: Settings) -> Result<ControlPlane> {
        let assets = match settings.assets {
            Some(dir) => dir,
            None => assets::locate()?,
        };
        let etcd_binary = assets::binary_in(&assets, ETCD)?;
        let apiserver_binary = assets::binary_in(&assets, KUBE_APISERVER)?;
        let timeout = match settings.start_timeout {
            Some(timeout) => timeout,
            None => start_timeout_from_env()?,
        };
        // the free ports are released before the processes bind them, so another process can
        // take one in between; then start again on new ports
        let mut attempt = 1;
        loop {
            match ControlPlane::launch(
                &etcd_binary,
                &apiserver_binary,
                timeout,
                &settings.apiserver_args,
                settings.audit_policy.as_deref(),
            )
            .await
            {
                Err(Error::Exited { log_tail, .. })
                    if attempt < PORT_ATTEMPTS && log_tail.contains("address already in use") =>
                {
                    attempt += 1;
                }
                result => {
                    if result.is_ok() {
                        crate::ci::record_ran(crate::ci::Ran::Apiserver);
                    }
                    return result;
                }
            }
        }
    }

    async fn launch(
        etcd_binary: &Path,
        apiserver_binary: &Path,
        timeout: Duration,
        extra_apiserver_args: &[String],
        audit_policy: Option<&str>,
    ) -> Result<ControlPlane> {
        let dir = tempfile::Builder::new()
            .prefix("operator-gen-envtest-")
            .tempdir()
            .map_err(Error::io(std::env::temp_dir()))?;
        let root = dir.path();
        let pki = Pki::generate()?;
        let files = Files::new(root);
        write(&files.ca, &pki.ca_pem)?;
        write(&files.serving_cert, &pki.serving.cert_pem)?;
        write(&files.serving_key, &pki.serving.key_pem)?;
        write(&files.sa_public, &pki.service_account_public_pem)?;
        write(&files.sa_private, &pki.service_account_private_pem)?;

        let [etcd_port, peer_port, secure_port] = free_ports()?;
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let etcd_args = vec![
            format!("--data-dir={}", root.join("etcd").display()),
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--listen-peer-urls=http://127.0.0.1:{peer_port}"),
            "--unsafe-no-fsync=true".to_owned(),
        ];
        let mut etcd = Process::spawn(ETCD, etcd_binary, &etcd_args, root.join("etcd.log"))?;

        let server = format!("https://127.0.0.1:{secure_port}");
        let mut apiserver_args = vec![
            format!("--etcd-servers={etcd_url}"),
            format!("--cert-dir={}", root.display()),
            format!("--tls-cert-file={}", files.serving_cert.display()),
            format!("--tls-private-key-file={}", files.serving_key.display()),
            format!("--client-ca-file={}", files.ca.display()),
            format!("--secure-port={secure_port}"),
            "--bind-address=127.0.0.1".to_owned(),
            "--advertise-address=127.0.0.1".to_owned(),
            // since 1.37 the default (lease) endpoint reconciler refuses a loopback address for
            // the `kubernetes` Service's endpoints; nothing here routes to them
            "--endpoint-reconciler-type=none".to_owned(),
            "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
            "--allow-privileged=true".to_owned(),
            "--authorization-mode=RBAC".to_owned(),
            // there is no controller-manager to create default service accounts
            "--disable-admission-plugins=ServiceAccount".to_owned(),
            format!("--service-account-issuer={server}/"),
            format!("--service-account-key-file={}", files.sa_public.display()),
            format!(
                "--service-account-signing-key-file={}",
                files.sa_private.display()
            ),
        ];
        let audit_log = match audit_policy {
            Some(policy) => Some(audit(root, policy, &mut apiserver_args)?),
            None => None,
        };
        // before the caller's flags: a `--feature-gates` of theirs adds to it and overrides it
        apiserver_args.extend(crate::gates::flag(apiserver_binary));
        apiserver_args.extend(extra_apiserver_args.iter().cloned());
        let apiserver_log = root.join("kube-apiserver.log");
        let mut apiserver = Process::spawn(
            KUBE_APISERVER,
            apiserver_binary,
            &apiserver_args,
            apiserver_log.clone(),
        )?;

        let admin = pki.client_cert("admin", "system:masters")?;
        let (kubeconfig, config) =
            write_cert_kubeconfig(root, &server, &files.ca, "admin", &admin).await?;
        let client = kube::Client::try_from(config.clone())
            .map_err(Error::kube("cannot create the admin client"))?;
        wait_ready(&client, &mut etcd, &mut apiserver, timeout).await?;

        Ok(ControlPlane {
            client,
            config,
            server,
            etcd_url,
            kubeconfig,
            audit_log,
            apiserver_binary: apiserver_binary.to_owned(),
            apiserver_args,
            apiserver_log,
            timeout,
            apiserver: Some(apiserver),
            etcd,
            dir,
        })
    }

    /// Kills the kube-apiserver (SIGKILL, as a crashed or evicted apiserver goes) and reaps it;
    /// etcd keeps running. Requests fail until [`start_apiserver`](Self::start_apiserver).
    pub fn stop_apiserver(&mut self) {
        // dropping the process kills and reaps it
        self.apiserver = None;
    }

    /// Starts the kube-apiserver again, after [`stop_apiserver`](Self::stop_apiserver), with the
    /// same flags: the same address, certificates and etcd. Its log is appended to
    /// [`apiserver_log`](Self::apiserver_log). Waits until it is ready, as at start; does
    /// nothing when it runs.
    pub async fn start_apiserver(&mut self) -> Result<()> {
        if self.apiserver.is_some() {
            return Ok(());
        }
        let mut apiserver = Process::spawn(
            KUBE_APISERVER,
            &self.apiserver_binary,
            &self.apiserver_args,
            self.apiserver_log.clone(),
        )?;
        let ready = wait_ready(&self.client, &mut self.etcd, &mut apiserver, self.timeout).await;
        self.apiserver = Some(apiserver);
        ready
    }

    /// A client authenticated as `admin` in `system:masters`, which bypasses RBAC.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The admin client's configuration, e.g. to build a client with other settings.
    pub fn config(&self) -> &kube::Config {
        &self.config
    }

    /// The admin kubeconfig file, for `kubectl --kubeconfig` or `KUBECONFIG`.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The apiserver's URL, `https://127.0.0.1:<port>`.
    pub fn server_url(&self) -> &str {
        &self.server
    }

    /// etcd's client URL, `http://127.0.0.1:<port>` (plain HTTP; it also answers the v3 API as
    /// JSON, e.g. `POST /v3/kv/range`, to read what the apiserver stored).
    pub fn etcd_url(&self) -> &str {
        &self.etcd_url
    }

    /// The temp dir holding certificates, kubeconfigs and the `etcd.log` and `kube-apiserver.log`
    /// files; removed on drop.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The kube-apiserver log file.
    pub fn apiserver_log(&self) -> &Path {
        &self.apiserver_log
    }

    /// The audit log (JSON lines, one `audit.k8s.io/v1` Event each) when
    /// [`Settings::audit_policy`] was given.
    pub fn audit_log(&self) -> Option<&Path> {
        self.audit_log.as_deref()
    }

    /// The etcd log file.
    pub fn etcd_log(&self) -> &Path {
        self.etcd.log()
    }

    /// Applies `crds` with server-side apply (field manager [`crate::FIELD_MANAGER`], forcing
    /// conflicts) and waits until each is Established and its served versions are in discovery,
    /// so custom objects can be created right away.
    pub async fn install_crds(
        &self,
        crds: &[CustomResourceDefinition],
        timeout: Duration,
    ) -> Result<()> {
        crate::crds::install(&self.client, crds, timeout).await
    }

    /// Installs the CRDs of every `*.yaml` and `*.yml` file in `dir` (in name order; files may
    /// hold several documents), as envtest's `CRDDirectoryPaths` does, and waits as
    /// [`install_crds`](Self::install_crds) does. Returns the installed CRDs' names.
    pub async fn install_crd_dir(
        &self,
        dir: impl AsRef<Path>,
        timeout: Duration,
    ) -> Result<Vec<String>> {
        let crds = crate::crds::read_dir(dir.as_ref())?;
        crate::crds::install(&self.client, &crds, timeout).await?;
        Ok(crds
            .iter()
            .filter_map(|c| c.metadata.name.clone())
            .collect())
    }

    /// A client acting as `user` in `groups` (through impersonation by the admin), subject to RBAC
    /// like that user, unless a group is `system:masters`.
    pub fn client_for_user(&self, user: &str, groups: &[&str]) -> Result<kube::Client> {
        let mut config = self.config.clone();
        config.auth_info.impersonate = Some(user.to_owned());
        config.auth_info.impersonate_groups =
            Some(groups.iter().map(|g| (*g).to_owned()).collect());
        kube::Client::try_from(config)
            .map_err(Error::kube(format!("cannot create a client for {user}")))
    }

    /// A client authenticated as the existing ServiceAccount `namespace/name`, with a token from the
    /// TokenRequest API, subject to RBAC the way the operator's pod would be.
    pub async fn client_for_service_account(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<kube::Client> {
        let accounts: Api<ServiceAccount> = Api::namespaced(self.client(), namespace);
        let request = TokenRequest::default();
        let answer = accounts
            .create_token_request(name, &PostParams::default(), &request)
            .await
            .map_err(Error::kube(format!(
                "cannot request a token for service account {namespace}/{name} (does it exist?)"
            )))?;
        let token = answer
            .status
            .and_then(|s| s.token)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| Error::NoToken {
                account: format!("{namespace}/{name}"),
            })?;
        let user = format!("system:serviceaccount:{namespace}:{name}");
        let base = self.dir().join(format!("sa-{namespace}-{name}"));
        let token_file = base.with_extension("token");
        write(&token_file, &token)?;
        let config = kubeconfig::build(
            &self.server,
            &Files::new(self.dir()).ca,
            &user,
            Credentials::TokenFile(&token_file),
        );
        kubeconfig::write(&config, &base.with_extension("kubeconfig"))?;
        let config = kubeconfig::client_config(config).await?;
        kube::Client::try_from(config)
            .map_err(Error::kube(format!("cannot create a client for {user}")))
    }
}

/// Writes `policy` under `root` and adds the flags that make the apiserver audit by it, as JSON
/// lines each written before it answers; returns the audit log's path.
fn audit(root: &Path, policy: &str, apiserver_args: &mut Vec<String>) -> Result<PathBuf> {
    let policy_file = root.join("audit-policy.yaml");
    write(&policy_file, policy)?;
    let log = root.join("audit.log");
    apiserver_args.extend([
        format!("--audit-policy-file={}", policy_file.display()),
        format!("--audit-log-path={}", log.display()),
        "--audit-log-format=json".to_owned(),
        "--audit-log-mode=blocking".to_owned(),
    ]);
    Ok(log)
}

/// Where the control plane keeps its key material.
struct Files {
    ca: PathBuf,
    serving_cert: PathBuf,
    serving_key: PathBuf,
    sa_public: PathBuf,
    sa_private: PathBuf,
}

impl Files {
    fn new(root: &Path) -> Files {
        Files {
            ca: root.join("ca.crt"),
            serving_cert: root.join("apiserver.crt"),
            serving_key: root.join("apiserver.key"),
            sa_public: root.join("sa.pub"),
            sa_private: root.join("sa.key"),
        }
    }
}

fn write(path: &Path, contents: &str) -> Result<()> {
    std::fs::write(path, contents).map_err(Error::io(path))
}

/// Writes `<user>.crt`, `<user>.key` and `<user>.kubeconfig` under `root`; returns the kubeconfig
/// path and the client configuration.
async fn write_cert_kubeconfig(
    root: &Path,
    server: &str,
    ca: &Path,
    user: &str,
    cert: &KeyCert,
) -> Result<(PathBuf, kube::Config)> {
    let stem: String = user
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cert_file = root.join(format!("{stem}.crt"));
    let key_file = root.join(format!("{stem}.key"));
    write(&cert_file, &cert.cert_pem)?;
    write(&key_file, &cert.key_pem)?;
    let config = kubeconfig::build(
        server,
        ca,
        user,
        Credentials::ClientCert {
            cert: &cert_file,
            key: &key_file,
        },
    );
    let path = kubeconfig::write(&config, &root.join(format!("{stem}.kubeconfig")))?;
    Ok((path, kubeconfig::client_config(config).await?))
}

/// Three distinct free loopback ports (held together while picked, so they differ).
fn free_ports() -> Result<[u16; 3]> {
    let listeners = [bind()?, bind()?, bind()?];
    let port = |l: &TcpListener| l.local_addr().map(|a| a.port()).map_err(Error::Port);
    Ok([
        port(&listeners[0])?,
        port(&listeners[1])?,
        port(&listeners[2])?,
    ])
}

fn bind() -> Result<TcpListener> {
    TcpListener::bind("127.0.0.1:0").map_err(Error::Port)
}

/// Polls `/readyz` until it answers `ok`, failing early when a process exits.
async fn wait_ready(
    client: &kube::Client,
    etcd: &mut Process,
    apiserver: &mut Process,
    timeout: Duration,
) -> Result<()> {
    let deadline = Instant::now() + timeout;
    let mut last;
    loop {
        etcd.check_running()?;
        apiserver.check_running()?;
        let request = http::Request::get("/readyz")
            .body(Vec::new())
            .map_err(|e| {
                Error::kube("cannot build the /readyz request")(kube::Error::HttpError(e))
            })?;
        match tokio::time::timeout(Duration::from_secs(5), client.request_text(request)).await {
            Ok(Ok(text)) if text.trim() == "ok" => return Ok(()),
            Ok(Ok(text)) => last = text,
            Ok(Err(error)) => last = error.to_string(),
            Err(_) => last = "no answer within 5s".to_owned(),
        }
        if Instant::now() >= deadline {
            return Err(Error::NotReady {
                timeout,
                last,
                log: apiserver.log().to_path_buf(),
                log_tail: apiserver.log_tail(),
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn start_timeout_from_env() -> Result<Duration> {
    match std::env::var(START_TIMEOUT_ENV) {
        Ok(value) if !value.trim().is_empty() => {
            parse_duration(value.trim()).ok_or(Error::InvalidTimeout { value })
        }
        _ => Ok(DEFAULT_START_TIMEOUT),
    }
}

/// Parses the Go durations people write for timeouts: `90`, `90s`, `2m`, `1m30s`, `1h`.
fn parse_duration(text: &str) -> Option<Duration> {
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let mut total = 0u64;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let value: u64 = number.parse().ok()?;
        number.clear();
        total += value
            * match c {
                'h' => 3600,
                'm' => 60,
                's' => 1,
                _ => return None,
            };
    }
    number.is_empty().then_some(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_style_timeouts() {
        assert_eq!(parse_duration("90"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("45s"), Some(Duration::from_secs(45)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(parse_duration("1m3"), None);
        assert_eq!(parse_duration("s"), None);
    }

    #[test]
    fn free_ports_differ() {
        let [a, b, c] = free_ports().expect("ports");
        assert!(a != b && b != c && a != c);
    }

    #[tokio::test]
    async fn missing_binaries_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let settings = Settings {
            assets: Some(dir.path().to_path_buf()),
            ..Settings::default()
        };
        let error = ControlPlane::start_with(settings)
            .await
            .err()
            .expect("no binaries");
        let message = error.to_string();
        assert!(message.starts_with("etcd not found in "), "{message}");
        assert!(
            message.ends_with("export KUBEBUILDER_ASSETS=$(operator-gen envtest use)"),
            "{message}"
        );
    }
}
