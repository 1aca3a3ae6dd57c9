//! Secure metrics against a real kube-apiserver: the runtime's manager, running as a service
//! account bound to the scaffold's `metrics-auth-role`, serves `/metrics` over HTTPS (self-signed
//! certificate) to a token bound to the scaffold's `metrics-reader` role (200 with the reconcile
//! metrics), answers 401 without a token or with one the apiserver rejects, 403 to a valid token
//! without `metrics-reader` (and to a reader asking for another path), and 500 when the manager
//! itself may not review tokens; with `--metrics-secure=false` it serves plain HTTP to anyone.
//! And the metric names the dashboards of `edit --plugins grafana` query are all served by a
//! manager holding its Lease, with the custom metrics of the dashboards' configuration registered
//! and a controller whose work queue its reconciles went through.

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleRef, Subject};
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_runtime::manager::prometheus_client::metrics::counter::Counter;
use operator_gen_runtime::manager::prometheus_client::metrics::gauge::Gauge;
use operator_gen_runtime::manager::prometheus_client::metrics::histogram::Histogram;
use operator_gen_runtime::manager::{Manager, ManagerOptions, ReconcileResult};
use operator_gen_tests::cli;
use operator_gen_tests::operator::free_port;
use operator_gen_tests::tools::{Ran, record_ran};
use operator_gen_tests::workspace;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const NAMESPACE: &str = "metrics-test";

/// The reconcile metrics, by name, after one successful and one failed reconcile.
const RECONCILE_METRICS: &[&str] = &[
    "controller_runtime_reconcile_total",
    "controller_runtime_reconcile_errors_total",
    "controller_runtime_reconcile_time_seconds",
];

/// Accepts the manager's self-signed certificate (as the scaffold's ServiceMonitor does with
/// `insecureSkipVerify`) while still checking the handshake signatures.
#[derive(Debug)]
struct AcceptSelfSigned(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptSelfSigned {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A response: status code and body.
#[derive(Debug)]
struct Answer {
    status: u16,
    body: String,
}

fn parse(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Answer { status, body }
}

fn request(path: &str, token: Option<&str>) -> String {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n")
}

/// `GET path` over HTTPS on `port`, with `token` as bearer token.
async fn get_https(port: u16, path: &str, token: Option<&str>) -> Answer {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AcceptSelfSigned(provider)))
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect to the metrics server");
    let name = ServerName::try_from("localhost").expect("server name");
    let mut tls = connector
        .connect(name, tcp)
        .await
        .expect("TLS handshake with the metrics server");
    tls.write_all(request(path, token).as_bytes())
        .await
        .expect("write the request");
    let mut raw = Vec::new();
    // the server may close without close_notify once the response is sent
    let _ = tls.read_to_end(&mut raw).await;
    parse(&raw)
}

/// `GET path` over plain HTTP on `port`.
async fn get_http(port: u16, path: &str) -> Answer {
    let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect to the metrics server");
    tcp.write_all(request(path, None).as_bytes())
        .await
        .expect("write the request");
    let mut raw = Vec::new();
    let _ = tcp.read_to_end(&mut raw).await;
    parse(&raw)
}

/// Reads a scaffolded RBAC object from the `init` golden (kept equal to what `init` writes by
/// the cli_cases test).
fn scaffolded<T: serde::de::DeserializeOwned>(file: &str) -> T {
    let path = workspace()
        .join("tests/cases/init/out/config/rbac")
        .join(file);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespace.map(str::to_owned),
        ..ObjectMeta::default()
    }
}

fn binding(name: &str, role: &str, account: &str) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: meta(name, None),
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".to_owned()),
            kind: "ClusterRole".to_owned(),
            name: role.to_owned(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name: account.to_owned(),
            namespace: Some(NAMESPACE.to_owned()),
            ..Subject::default()
        }]),
    }
}

async fn token(plane: &ControlPlane, account: &str) -> String {
    let accounts: Api<ServiceAccount> = Api::namespaced(plane.client(), NAMESPACE);
    accounts
        .create_token_request(account, &PostParams::default(), &TokenRequest::default())
        .await
        .unwrap_or_else(|e| panic!("token for {account}: {e}"))
        .status
        .and_then(|s| s.token)
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| panic!("no token for {account}"))
}

/// A manager of `account` with `options` on a free metrics port, one successful and one failed
/// reconcile recorded; returns the port and the token that stops it.
async fn start_manager(
    plane: &ControlPlane,
    account: &str,
    options: ManagerOptions,
) -> (u16, operator_gen_runtime::manager::CancellationToken) {
    let client = plane
        .client_for_service_account(NAMESPACE, account)
        .await
        .expect("client for the manager's service account");
    let port = free_port();
    let options = options
        .metrics_bind_address(format!("127.0.0.1:{port}"))
        .health_probe_bind_address("0");
    let manager = Manager::with_client(options, "metrics-test", client).expect("manager");
    for result in [ReconcileResult::Success, ReconcileResult::Error] {
        manager
            .metrics()
            .reconcile_started("guestbook")
            .finish(result);
    }
    let stop = manager.shutdown_token();
    tokio::spawn(async move {
        if let Err(e) = manager.run().await {
            panic!("the manager failed: {e}");
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "the metrics server does not listen on {port}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (port, stop)
}

fn assert_metrics(answer: &Answer) {
    assert_eq!(answer.status, 200, "{answer:?}");
    for name in RECONCILE_METRICS {
        assert!(
            answer.body.contains(name),
            "{name} missing:\n{}",
            answer.body
        );
    }
    assert!(
        answer.body.contains(
            r#"controller_runtime_reconcile_total{controller="guestbook",result="success"} 1"#
        ),
        "{}",
        answer.body
    );
}

#[tokio::test]
async fn metrics_need_a_token_allowed_to_get_metrics() {
    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    record_ran(Ran::Apiserver);
    let admin = plane.client();
    let pp = PostParams::default();

    Api::<Namespace>::all(admin.clone())
        .create(
            &pp,
            &Namespace {
                metadata: meta(NAMESPACE, None),
                ..Namespace::default()
            },
        )
        .await
        .expect("namespace");
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), NAMESPACE);
    for name in [
        "controller-manager",
        "unauthorized-manager",
        "prometheus",
        "stranger",
    ] {
        accounts
            .create(
                &pp,
                &ServiceAccount {
                    metadata: meta(name, Some(NAMESPACE)),
                    ..ServiceAccount::default()
                },
            )
            .await
            .unwrap_or_else(|e| panic!("service account {name}: {e}"));
    }

    // the scaffold's roles, and its binding of metrics-auth-role to the manager's account
    // (namespace set as kustomize's namespace transformer does)
    let roles: Api<ClusterRole> = Api::all(admin.clone());
    let auth_role: ClusterRole = scaffolded("metrics_auth_role.yaml");
    let reader_role: ClusterRole = scaffolded("metrics_reader_role.yaml");
    assert_eq!(
        auth_role.metadata.name.as_deref(),
        Some("metrics-auth-role")
    );
    assert_eq!(reader_role.metadata.name.as_deref(), Some("metrics-reader"));
    roles
        .create(&pp, &auth_role)
        .await
        .expect("metrics-auth-role");
    roles
        .create(&pp, &reader_role)
        .await
        .expect("metrics-reader");
    let mut auth_binding: ClusterRoleBinding = scaffolded("metrics_auth_role_binding.yaml");
    assert_eq!(auth_binding.role_ref.name, "metrics-auth-role");
    for subject in auth_binding.subjects.iter_mut().flatten() {
        assert_eq!(subject.name, "controller-manager");
        subject.namespace = Some(NAMESPACE.to_owned());
    }
    let bindings: Api<ClusterRoleBinding> = Api::all(admin.clone());
    bindings
        .create(&pp, &auth_binding)
        .await
        .expect("metrics-auth-rolebinding");
    bindings
        .create(
            &pp,
            &binding("prometheus-metrics-reader", "metrics-reader", "prometheus"),
        )
        .await
        .expect("metrics-reader binding");

    let reader = token(&plane, "prometheus").await;
    let stranger = token(&plane, "stranger").await;

    // secure by default: HTTPS with a self-signed certificate, TokenReview + SubjectAccessReview
    let (port, stop_secure) =
        start_manager(&plane, "controller-manager", ManagerOptions::default()).await;
    let none = get_https(port, "/metrics", None).await;
    assert_eq!(none.status, 401, "no token: {none:?}");
    assert!(!none.body.contains("controller_runtime"), "{none:?}");
    let forged = get_https(port, "/metrics", Some("not-a-token")).await;
    assert_eq!(
        forged.status, 401,
        "a token the apiserver rejects: {forged:?}"
    );
    let denied = get_https(port, "/metrics", Some(&stranger)).await;
    assert_eq!(
        denied.status, 403,
        "a token without metrics-reader: {denied:?}"
    );
    assert!(!denied.body.contains("controller_runtime"), "{denied:?}");
    let other_path = get_https(port, "/debug", Some(&reader)).await;
    assert_eq!(
        other_path.status, 403,
        "metrics-reader allows /metrics only: {other_path:?}"
    );
    assert_metrics(&get_https(port, "/metrics", Some(&reader)).await);
    // plain HTTP on the secure port gets no HTTP answer
    let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    tcp.write_all(request("/metrics", None).as_bytes())
        .await
        .expect("write");
    let mut raw = Vec::new();
    let _ = tcp.read_to_end(&mut raw).await;
    assert!(
        !raw.starts_with(b"HTTP/"),
        "plain HTTP answered on the TLS port"
    );
    stop_secure.cancel();

    // a manager whose account lacks metrics-auth-role cannot review tokens: it fails closed
    let (port, stop_unauthorized) =
        start_manager(&plane, "unauthorized-manager", ManagerOptions::default()).await;
    let failed = get_https(port, "/metrics", Some(&reader)).await;
    assert_eq!(failed.status, 500, "reviews not permitted: {failed:?}");
    assert!(!failed.body.contains("controller_runtime"), "{failed:?}");
    stop_unauthorized.cancel();

    // --metrics-secure=false: plain HTTP, no token needed
    let (port, stop_plain) = start_manager(
        &plane,
        "unauthorized-manager",
        ManagerOptions::default().metrics_secure(false),
    )
    .await;
    assert_metrics(&get_http(port, "/metrics").await);
    stop_plain.cancel();
}

/// The metrics the dashboards of `edit --plugins grafana` query, for the configuration
/// [`GRAFANA_CONFIG`]: by the runtime (its reconcile metrics, workers in use, leader election
/// and its controllers' work queues) and by the user (one of each type).
const DASHBOARD_METRICS: &[&str] = &[
    "controller_runtime_active_workers",
    "controller_runtime_reconcile_errors_total",
    "controller_runtime_reconcile_time_seconds_bucket",
    "controller_runtime_reconcile_total",
    "crew_ships_sailing",
    "crew_voyage_duration_seconds_bucket",
    "crew_voyages_total",
    "leader_election_master_status",
    "workqueue_adds_total",
    "workqueue_depth",
    "workqueue_longest_running_processor_seconds",
    "workqueue_queue_duration_seconds_bucket",
    "workqueue_retries_total",
    "workqueue_unfinished_work_seconds",
    "workqueue_work_duration_seconds_bucket",
];

/// The work queue the test's ConfigMap controller is followed in.
const QUEUE_NAME: &str = "configmap";

/// A controller of the ConfigMaps of `default`, in the work queue [`QUEUE_NAME`] of
/// `manager`'s metrics: each reconcile succeeds at once.
fn add_configmap_controller(manager: &mut Manager, client: kube::Client) {
    use operator_gen_runtime::controller::{Retries, generation_changed_from};
    use operator_gen_runtime::kube::runtime::controller::Action;
    use operator_gen_runtime::watch::Source;
    let queue = manager.metrics().queue(QUEUE_NAME);
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let source = Source::new(api, Default::default()).queue(queue.clone());
    let controller = generation_changed_from(source)
        .graceful_shutdown_on(manager.shutdown_signal())
        .run(
            |obj: Arc<ConfigMap>, retries: Arc<Retries>| async move {
                let work = async { Ok::<_, kube::Error>(Action::await_change()) };
                retries.track(obj.as_ref(), work).await
            },
            |obj, error, retries| retries.after_failure(obj.as_ref(), error),
            Arc::new(Retries::in_queue(queue)),
        );
    manager.add_controller_stream(QUEUE_NAME, controller);
}

/// The value of `series` (a name with its labels, as served) in the body of `/metrics`.
fn sample(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

const GRAFANA_CONFIG: &str = "customMetrics:\n  - metric: crew_voyages_total\n    type: counter\n  - metric: crew_voyage_duration_seconds\n    type: histogram\n  - metric: crew_ships_sailing\n    type: gauge\n";

/// The metric names a PromQL expression selects: each name directly followed by `{`.
fn selected_metrics(expr: &str, out: &mut std::collections::BTreeSet<String>) {
    let chars: Vec<char> = expr.chars().collect();
    let mut start = None;
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take()
            && c == '{'
            && !chars[s].is_ascii_digit()
        {
            out.insert(chars[s..i].iter().collect());
        }
    }
}

/// Every metric the dashboards under `dir/grafana` select, in their panels' targets and their
/// variables' queries.
fn dashboard_metrics(dir: &std::path::Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for rel in [
        "grafana/controller-runtime-metrics.json",
        "grafana/custom-metrics/custom-metrics-dashboard.json",
    ] {
        let text = std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let dashboard: serde_json::Value = serde_json::from_str(&text).expect("dashboard JSON");
        for panel in dashboard["panels"].as_array().expect("panels") {
            for target in panel["targets"].as_array().expect("targets") {
                selected_metrics(target["expr"].as_str().expect("expr"), &mut out);
            }
        }
        for variable in dashboard["templating"]["list"]
            .as_array()
            .expect("variables")
        {
            if variable["type"] == "query" {
                selected_metrics(variable["query"].as_str().expect("query"), &mut out);
            }
        }
    }
    out
}

#[tokio::test]
async fn grafana_dashboards_query_metrics_the_manager_serves() {
    require_assets!();
    // the dashboards as `edit --plugins grafana` writes them for a project with custom metrics
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("crew");
    std::fs::create_dir_all(dir.join("grafana/custom-metrics")).expect("mkdir");
    for args in ["init --domain example.com", "edit --plugins grafana"] {
        if args.starts_with("edit") {
            std::fs::write(
                dir.join("grafana/custom-metrics/config.yaml"),
                GRAFANA_CONFIG,
            )
            .expect("write the configuration");
        }
        let out = cli::run(&dir, &cli::split_args(args));
        assert_eq!(out.code, 0, "`{args}` failed: {}", out.stderr);
    }
    let queried = dashboard_metrics(&dir);
    assert_eq!(
        queried.iter().map(String::as_str).collect::<Vec<_>>(),
        DASHBOARD_METRICS
    );

    // a manager holding its Lease on the real apiserver, the custom metrics registered and one
    // successful and one failed reconcile recorded
    let plane = ControlPlane::start().await.expect("control plane starts");
    record_ran(Ran::Apiserver);
    let port = free_port();
    let options = ManagerOptions::default()
        .metrics_secure(false)
        .metrics_bind_address(format!("127.0.0.1:{port}"))
        .health_probe_bind_address("0")
        .leader_elect(true)
        .leader_election_namespace("default");
    let mut manager = Manager::with_client(options, "crew", plane.client()).expect("manager");
    // a controller whose reconciles take the ConfigMaps of `default` out of its work queue once
    // the manager leads
    let settings = ConfigMap {
        metadata: ObjectMeta {
            name: Some("crew-settings".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::<ConfigMap>::namespaced(plane.client(), "default")
        .create(&PostParams::default(), &settings)
        .await
        .expect("the ConfigMap is created");
    add_configmap_controller(&mut manager, plane.client());
    let voyages = Counter::<u64>::default();
    let sailing = Gauge::<i64>::default();
    let duration = Histogram::new([0.5, 1.0, 5.0]);
    {
        let metrics = manager.metrics();
        let mut registry = metrics.registry();
        registry.register("crew_voyages", "Voyages begun", voyages.clone());
        registry.register("crew_ships_sailing", "Ships at sea", sailing.clone());
        registry.register(
            "crew_voyage_duration_seconds",
            "Length of a voyage",
            duration.clone(),
        );
    }
    voyages.inc();
    sailing.set(3);
    duration.observe(0.7);
    for result in [ReconcileResult::Success, ReconcileResult::Error] {
        manager
            .metrics()
            .reconcile_started("captain")
            .finish(result);
    }
    let stop = manager.shutdown_token();
    tokio::spawn(async move {
        if let Err(e) = manager.run().await {
            panic!("the manager failed: {e}");
        }
    });
    // served: a sample line of the name, once the manager leads
    let serves = |body: &str, name: &str| {
        body.lines()
            .any(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let body = loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            let answer = get_http(port, "/metrics").await;
            assert_eq!(answer.status, 200, "{answer:?}");
            let worked = sample(
                &answer.body,
                &format!(
                    r#"workqueue_work_duration_seconds_count{{name="{QUEUE_NAME}",controller="{QUEUE_NAME}"}}"#
                ),
            );
            if answer
                .body
                .lines()
                .any(|l| l.starts_with("leader_election_master_status{") && l.ends_with(" 1"))
                && worked.is_some_and(|n| n >= 1.0)
            {
                break answer.body;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the manager never led, never served /metrics, or its controller reconciled nothing"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    stop.cancel();
    // the queue's objects were added and taken by their reconciles
    let labels = format!(r#"{{name="{QUEUE_NAME}",controller="{QUEUE_NAME}"}}"#);
    let adds = sample(&body, &format!("workqueue_adds_total{labels}"));
    assert!(adds.is_some_and(|n| n >= 1.0), "adds {adds:?}\n{body}");
    let waited = sample(
        &body,
        &format!("workqueue_queue_duration_seconds_count{labels}"),
    );
    assert!(waited.is_some_and(|n| n >= 1.0), "waits {waited:?}\n{body}");
    let missing: Vec<&String> = queried.iter().filter(|m| !serves(&body, m)).collect();
    println!(
        "compared {} metric names the dashboards query with the manager's /metrics",
        queried.len()
    );
    assert!(missing.is_empty(), "not served: {missing:?}\n{body}");
}
