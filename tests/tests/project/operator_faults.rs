//! The generated operator under faults, on a real kube-apiserver, under load: the project (with
//! a defaulting and a validating webhook, the defaulter filled in) runs its manager binary as a
//! child process with `--leader-elect`, as a ServiceAccount bound to `cluster-admin`, through a
//! TCP proxy in front of the apiserver. [`OBJECTS`] objects; once [`READY_BEFORE_FAULT`] are
//! Ready, the fault begins, and while it lasts (right after, when the apiserver is down) a third
//! of them get a new spec and a sixth are deleted.
//!
//! - `apiserver_restart_*`: with the manager's connections cut (so it misses the changes), the
//!   kube-apiserver is killed, etcd compacted at its current revision and the apiserver started
//!   again on the same address and etcd; then the connections are let through again. The
//!   manager's watch, resumed from a compacted revision, must list again (the audit log shows a
//!   second initial list of the ServiceAccount).
//! - `apiserver_unreachable_*`: the proxy closes every connection and each new one for
//!   [`OUTAGE`] (60 s).
//! - `throttled_*`: API priority and fairness puts the ServiceAccount in a priority level of its
//!   own (all but its Lease's requests) with one nominal share of a reduced server concurrency
//!   and `limitResponse: Reject`; the audit log shows requests of the ServiceAccount answered
//!   429 (kube's client retries them after their `Retry-After`).
//! - `webhook_certificate_*`: the webhook server's certificate is rotated (a new key, the same
//!   CA) while objects change through the webhooks (`failurePolicy: Fail`), and the new one is
//!   served; then an expired one is written: once the apiserver calls on a new connection,
//!   admission fails naming the expiry, and objects created then are refused; after a valid
//!   certificate is written they are created again.
//!
//! A manager that exits (its Lease lost past the renew deadline) is started again once the
//! fault ends, as its pod's kubelet would. In each case: by a watch of every
//! object, each is Ready at most once per generation and exactly once at its last generation
//! before deletion (those deleted during the fault may never have been reconciled) and deleted
//! once; all are gone at the end (their finalizer removed); the managers' logs show every
//! reconcile finished or cut short by its replica's exit, no object reconciled twice at once
//! (also across replicas), every failed reconcile tried again and at most
//! `CONCURRENT_RECONCILES` at once; each replica's peak resident memory (`VmHWM`) stays within
//! [`memory_bound`] of the manager's resident memory when the fault began. The time from the end
//! of the fault until every object is Ready at its generation (and the deleted ones gone) is
//! printed.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::flowcontrol::v1::{FlowSchema, PriorityLevelConfiguration};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use operator_gen_envtest::{ControlPlane, Settings, require_assets};
use operator_gen_tests::audit;
use operator_gen_tests::cli;
use operator_gen_tests::faults::{self, CutProxy, Memory};
use operator_gen_tests::integrity::{self, Recorder, ready_for_generation};
use operator_gen_tests::operator::{
    ManagerProcess, ManagerSettings, Project, eventually, free_port, scaffold_and_build_with,
    token_kubeconfig,
};
use operator_gen_tests::takeover::{self, Reconcile};
use operator_gen_tests::tools::{Ran, record_ran};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

const PROJECT: &str = "fault-op";
const API_ARGS: &str = "--group fleet --version v1 --kind Ship";
const GROUP: &str = "fleet.my.domain";
const KIND: &str = "Ship";
const PLURAL: &str = "ships";
const CONTROLLER: &str = "ship";
const SAMPLE_FILE: &str = "config/samples/fleet_v1_ship.yaml";
const NAMESPACE: &str = "default";
const SYSTEM_NAMESPACE: &str = "fault-op-system";
const SERVICE_ACCOUNT: &str = "fault-operator";
/// What the user's defaulter sets `spec.foo` to when it is not set.
const DEFAULTED: &str = "defaulted";
/// How many objects the certificate case creates only after the expired certificate is
/// replaced (each refused while it is served).
const LATE: usize = 12;

/// How many objects each case makes.
const OBJECTS: usize = 120;

/// How long the apiserver is unreachable (the issue's number).
const OUTAGE: Duration = Duration::from_secs(60);

/// How long one expected outcome may take on a loaded two-core machine.
const TIMEOUT: Duration = Duration::from_secs(180);

/// Past the time the webhook server closes a connection idle for (its header read timeout,
/// 10 s).
const IDLE_CLOSE: Duration = Duration::from_secs(11);

/// How many objects are Ready before a fault begins: the rest still wait for their reconcile.
const READY_BEFORE_FAULT: usize = 10;

/// The most peak resident memory allowed, from the resident memory when the fault began: twice
/// that and 32 MiB. The manager holds the cache of [`OBJECTS`] small objects; a relist builds a
/// second copy while the first is dropped, and the reconciles' requests come and go.
fn memory_bound(before: Memory) -> u64 {
    before.rss_kib * 2 + 32 * 1024
}

fn user() -> String {
    format!("system:serviceaccount:{SYSTEM_NAMESPACE}:{SERVICE_ACCOUNT}")
}

/// The project, scaffolded and built once for every case of this file (under the target's temp
/// dir, replaced on each run); `None` when `make` is missing outside CI.
fn project() -> Option<&'static Project> {
    static PROJECT_BUILT: OnceLock<Option<Project>> = OnceLock::new();
    PROJECT_BUILT
        .get_or_init(|| {
            if !cli::require_tool("make", &["--version"], cli::INSTALL_MAKE) {
                return None;
            }
            let parent = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("operator-faults");
            let _ = std::fs::remove_dir_all(&parent);
            std::fs::create_dir_all(&parent).expect("create the project parent");
            let commands = [
                format!("create api {API_ARGS}"),
                format!("create webhook {API_ARGS} --defaulting --programmatic-validation"),
            ];
            let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
            Some(scaffold_and_build_with(
                &parent,
                PROJECT,
                &commands,
                |dir| {
                    // the user's defaulter: `spec.foo` when it is not set
                    let hooks = dir.join("src/webhook/v1/ship.rs");
                    let text = std::fs::read_to_string(&hooks).expect("the scaffolded webhook");
                    let todo = "        // TODO(user): set the defaults of your fields on `obj`.\n";
                    assert!(text.contains(todo), "{} lacks {todo:?}", hooks.display());
                    let code = format!(
                        "        obj.spec.foo.get_or_insert_with(|| {DEFAULTED:?}.to_owned());\n"
                    );
                    std::fs::write(&hooks, text.replacen(todo, &code, 1)).expect("write");
                },
            ))
        })
        .as_ref()
}

/// The fault a case injects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    Restart,
    Unreachable,
    Throttled,
    Certificates,
}

/// A running case: the control plane, the proxy the manager talks through, the watch of
/// every object and the manager replicas started so far (the last one current).
struct Case {
    fault: Fault,
    plane: ControlPlane,
    ships: Api<DynamicObject>,
    proxy: CutProxy,
    recorder: Recorder,
    kubeconfig: PathBuf,
    /// The webhook server's port and certificate directory (`tls.crt`, `tls.key`), and the CA
    /// that signs its certificates.
    webhook_port: u16,
    certs: PathBuf,
    ca: Authority,
    managers: Vec<ManagerProcess>,
    /// Each replica's peak resident memory (`VmHWM`, KiB), sampled every 200 ms while it runs.
    peaks: Vec<Arc<AtomicU64>>,
    names: Vec<String>,
}

impl Case {
    async fn start(fault: Fault, project: &Project) -> Case {
        let mut settings = Settings {
            audit_policy: Some(format!(
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n\
                 - level: Metadata\n  users: [\"{}\"]\n- level: None\n",
                user()
            )),
            ..Settings::default()
        };
        if fault == Fault::Throttled {
            // the server's concurrency, shared by the priority levels in proportion to their
            // nominal shares: the operator's level (1 share of about 250) gets one seat
            settings.apiserver_args = vec![
                "--max-requests-inflight=60".to_owned(),
                "--max-mutating-requests-inflight=30".to_owned(),
            ];
        }
        let plane = ControlPlane::start_with(settings)
            .await
            .expect("the control plane starts");
        let client = plane.client();
        let crds = project.crds();
        plane
            .install_crds(&crds, TIMEOUT)
            .await
            .expect("the generated CRDs are Established");
        let resource =
            ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, "v1", KIND), PLURAL);
        let ships = Api::namespaced_with(client.clone(), NAMESPACE, &resource);

        create(
            &Api::<Namespace>::all(client.clone()),
            serde_json::json!({ "metadata": { "name": SYSTEM_NAMESPACE } }),
        )
        .await;
        let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), SYSTEM_NAMESPACE);
        create(
            &accounts,
            serde_json::json!({ "metadata": { "name": SERVICE_ACCOUNT } }),
        )
        .await;
        create(
            &Api::<ClusterRoleBinding>::all(client.clone()),
            serde_json::json!({
                "metadata": { "name": "fault-operator-admin" },
                "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin" },
                "subjects": [{ "kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": SYSTEM_NAMESPACE }],
            }),
        )
        .await;
        if fault == Fault::Throttled {
            throttle(&client).await;
        }
        let token = accounts
            .create_token_request(SERVICE_ACCOUNT, &PostParams::default(), &Default::default())
            .await
            .expect("a token for the ServiceAccount")
            .status
            .and_then(|s| s.token)
            .expect("token");
        let upstream: SocketAddr = plane
            .server_url()
            .strip_prefix("https://")
            .and_then(|a| a.parse().ok())
            .expect("the apiserver's address");
        let proxy = CutProxy::start(upstream);
        let kubeconfig = plane.dir().join("operator.kubeconfig");
        token_kubeconfig(plane.kubeconfig(), &token, &kubeconfig);
        faults::redirect_kubeconfig(&kubeconfig, &format!("https://127.0.0.1:{}", proxy.port()));

        let recorder = Recorder::start(ships.clone()).await;
        let names: Vec<String> = (0..OBJECTS).map(|i| format!("ship-{i:04}")).collect();
        let certs = plane.dir().join("webhook-certs");
        std::fs::create_dir_all(&certs).expect("the certificate directory");
        let ca = Authority::new();
        ca.issue(&certs, false);
        Case {
            fault,
            plane,
            ships,
            proxy,
            recorder,
            kubeconfig,
            webhook_port: free_port(),
            certs,
            ca,
            managers: Vec::new(),
            peaks: Vec::new(),
            names,
        }
    }

    /// Creates the project's sample under each of `names`; panics when one is refused.
    async fn create(&self, project: &Project, names: &[String]) {
        let text = std::fs::read_to_string(project.dir.join(SAMPLE_FILE)).expect("sample");
        let sample: DynamicObject = serde_saphyr::from_str(&text).expect("sample yaml");
        futures::stream::iter(names)
            .map(|name| {
                let ships = self.ships.clone();
                let object = sample_named(&sample, name);
                async move {
                    ships
                        .create(&PostParams::default(), &object)
                        .await
                        .unwrap_or_else(|e| panic!("the apiserver rejects {SAMPLE_FILE}: {e}"));
                }
            })
            .buffer_unordered(32)
            .collect::<Vec<()>>()
            .await;
    }

    fn start_manager(&mut self, project: &Project) {
        let pod = format!("replica-{}", self.managers.len());
        let settings = ManagerSettings {
            binary: project.manager.clone(),
            kubeconfig: self.kubeconfig.clone(),
            pod_name: pod.clone(),
            pod_namespace: SYSTEM_NAMESPACE.to_owned(),
            log: self.plane.dir().join(format!("{pod}.log")),
            args: vec![
                format!("--webhook-port={}", self.webhook_port),
                format!("--webhook-cert-path={}", self.certs.display()),
            ],
        };
        let manager = ManagerProcess::start(&settings);
        let peak = Arc::new(AtomicU64::new(0));
        let (pid, sampled) = (manager.pid(), peak.clone());
        tokio::spawn(async move {
            while let Ok(memory) = faults::memory(pid) {
                sampled.fetch_max(memory.peak_kib, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        self.peaks.push(peak);
        self.managers.push(manager);
    }

    fn manager(&self) -> &ManagerProcess {
        self.managers.last().expect("a manager runs")
    }

    fn fail(&self, error: &str) -> ! {
        let logs: Vec<String> = self
            .managers
            .iter()
            .map(|m| format!("--- manager pid {} log ---\n{}", m.pid(), m.log()))
            .collect();
        let watches: Vec<String> = self
            .audited()
            .iter()
            .filter(|r| r.resource == PLURAL && (r.verb == "watch" || r.verb == "list"))
            .map(ToString::to_string)
            .collect();
        panic!(
            "{:?}: {error}\nthe operator's lists and watches of {PLURAL}:\n{}\n{}",
            self.fault,
            watches.join("\n"),
            logs.join("\n")
        );
    }

    /// How many objects are Ready at their generation.
    async fn ready(&self) -> Result<usize, String> {
        let list = self
            .ships
            .list(&ListParams::default())
            .await
            .map_err(|e| e.to_string())?;
        Ok(list
            .items
            .iter()
            .filter(|o| ready_for_generation(o))
            .count())
    }

    /// Changes the spec of the first third of the objects (a new generation each) and deletes
    /// the sixth after the first half; returns the deleted ones' names.
    async fn change_and_delete(&self) -> Vec<String> {
        let ships = &self.ships;
        let changed = &self.names[..OBJECTS / 3];
        let deleted = &self.names[OBJECTS / 2..OBJECTS / 2 + OBJECTS / 6];
        futures::stream::iter(changed)
            .map(|name| async move {
                let patch = serde_json::json!({ "spec": { "foo": "changed under a fault" } });
                ships
                    .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .unwrap_or_else(|e| panic!("cannot change the spec of {name}: {e}"));
            })
            .buffer_unordered(16)
            .collect::<Vec<()>>()
            .await;
        futures::stream::iter(deleted)
            .map(|name| async move {
                ships
                    .delete(name, &DeleteParams::default())
                    .await
                    .unwrap_or_else(|e| panic!("cannot delete {name}: {e}"));
            })
            .buffer_unordered(16)
            .collect::<Vec<()>>()
            .await;
        deleted.to_vec()
    }

    /// Whether every object left is Ready at its generation and none of `deleted` exists; if
    /// not, which are not.
    async fn settled(&self, deleted: &[String]) -> Result<(), String> {
        let expected = OBJECTS - deleted.len();
        {
            let list = self
                .ships
                .list(&ListParams::default())
                .await
                .map_err(|e| e.to_string())?;
            let waiting: Vec<String> = list
                .items
                .iter()
                .filter(|o| !ready_for_generation(o))
                .map(|o| {
                    format!(
                        "{} generation {:?} status {}",
                        integrity::key(o),
                        o.metadata.generation,
                        o.data["status"]
                    )
                })
                .collect();
            if list.items.len() == expected && waiting.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "{} objects, {} not Ready:\n{}",
                    list.items.len(),
                    waiting.len(),
                    waiting.join("\n")
                ))
            }
        }
    }

    /// The ServiceAccount's requests in the audit log so far.
    fn audited(&self) -> Vec<audit::Request> {
        let path = self.plane.audit_log().expect("the control plane audits");
        let text = std::fs::read_to_string(path).expect("the audit log");
        audit::parse_log(&text)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .filter(|r| r.user == user())
            .collect()
    }
}

async fn create<K>(api: &Api<K>, value: serde_json::Value)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object: K = serde_json::from_value(value).expect("a valid object");
    api.create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| panic!("cannot create {object:?}: {e}"));
}

/// A priority level with one nominal share, nothing lent or borrowed, that rejects what it
/// cannot run at once; and a flow schema sending the ServiceAccount's requests to it (of its
/// kind, core and events.k8s.io: all but its Lease's), ahead of the suggested schemas. Waits
/// until the apiserver uses it.
async fn throttle(client: &kube::Client) {
    create(
        &Api::<PriorityLevelConfiguration>::all(client.clone()),
        serde_json::json!({
            "metadata": { "name": "fault-operator" },
            "spec": {
                "type": "Limited",
                "limited": {
                    "nominalConcurrencyShares": 1,
                    "lendablePercent": 0,
                    "borrowingLimitPercent": 0,
                    "limitResponse": { "type": "Reject" }
                }
            }
        }),
    )
    .await;
    let schemas = Api::<FlowSchema>::all(client.clone());
    create(
        &schemas,
        serde_json::json!({
            "metadata": { "name": "fault-operator" },
            "spec": {
                "priorityLevelConfiguration": { "name": "fault-operator" },
                "matchingPrecedence": 50,
                "distinguisherMethod": { "type": "ByUser" },
                "rules": [{
                    "subjects": [{
                        "kind": "ServiceAccount",
                        "serviceAccount": { "name": SERVICE_ACCOUNT, "namespace": SYSTEM_NAMESPACE }
                    }],
                    // all but the Lease's requests, so that it keeps leading
                    "resourceRules": [{
                        "verbs": ["*"], "apiGroups": [GROUP, "", "events.k8s.io"],
                        "resources": ["*"], "namespaces": ["*"], "clusterScope": true
                    }],
                    "nonResourceRules": [{ "verbs": ["*"], "nonResourceURLs": ["*"] }]
                }]
            }
        }),
    )
    .await;
    eventually("the flow schema is in use", TIMEOUT, || async {
        let schema = schemas
            .get("fault-operator")
            .await
            .map_err(|e| e.to_string())?;
        let dangling = schema
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .into_iter()
            .find(|c| c.type_ == "Dangling")
            .and_then(|c| c.status);
        if dangling.as_deref() == Some("False") {
            Ok(())
        } else {
            Err(format!("Dangling: {dangling:?}"))
        }
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
}

/// The project's sample.
fn sample(project: &Project) -> DynamicObject {
    let text = std::fs::read_to_string(project.dir.join(SAMPLE_FILE)).expect("sample");
    serde_saphyr::from_str(&text).expect("sample yaml")
}

/// `sample` named `name` in [`NAMESPACE`].
fn sample_named(sample: &DynamicObject, name: &str) -> DynamicObject {
    let mut object = sample.clone();
    object.metadata.name = Some(name.to_owned());
    object.metadata.namespace = Some(NAMESPACE.to_owned());
    object
}

/// A CA that issues the webhook server's certificates.
struct Authority {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    pem: String,
}

impl Authority {
    fn new() -> Authority {
        let key = rcgen::KeyPair::generate().expect("CA key");
        let mut params = rcgen::CertificateParams::default();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "fault-op webhook ca");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let pem = params.self_signed(&key).expect("CA certificate").pem();
        Authority {
            issuer: rcgen::Issuer::new(params, key),
            pem,
        }
    }

    /// Writes a new key and a certificate for 127.0.0.1 signed by the CA to `dir` (`tls.key`,
    /// then `tls.crt`, as a rotated Secret appears); expired in 2001 when `expired`. Returns the
    /// certificate (PEM).
    fn issue(&self, dir: &std::path::Path, expired: bool) -> String {
        let key = rcgen::KeyPair::generate().expect("serving key");
        let mut params = rcgen::CertificateParams::default();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "fault-op webhook");
        params.subject_alt_names = vec![rcgen::SanType::IpAddress(std::net::IpAddr::V4(
            std::net::Ipv4Addr::LOCALHOST,
        ))];
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        if expired {
            params.not_before = rcgen::date_time_ymd(2000, 1, 1);
            params.not_after = rcgen::date_time_ymd(2001, 1, 1);
        }
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("serving certificate")
            .pem();
        std::fs::write(dir.join("tls.key"), key.serialize_pem()).expect("write tls.key");
        std::fs::write(dir.join("tls.crt"), &cert).expect("write tls.crt");
        cert
    }
}

/// The DER of a PEM certificate.
fn der(pem: &str) -> Vec<u8> {
    CertificateDer::from_pem_slice(pem.as_bytes())
        .expect("certificate PEM")
        .to_vec()
}

/// The leaf certificate (DER) the webhook server on `port` presents to a client trusting `ca`
/// and checking the name 127.0.0.1, or why the handshake failed.
async fn presented(port: u16, ca: &str) -> Result<Vec<u8>, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca.as_bytes()).expect("CA PEM"))
        .expect("trust the CA");
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    let name = ServerName::try_from("127.0.0.1").expect("server name");
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    tls.get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| chain.first())
        .map(|leaf| leaf.to_vec())
        .ok_or_else(|| "no certificate presented".to_owned())
}

/// A dry-run create of an object without `spec.foo` named `name`, through the webhooks: the
/// `spec.foo` the defaulter set, or why it was refused.
async fn admitted(ships: &Api<DynamicObject>, name: &str) -> Result<String, String> {
    let object: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": format!("{GROUP}/v1"),
        "kind": KIND,
        "metadata": { "name": name, "namespace": NAMESPACE },
        "spec": {},
    }))
    .expect("object");
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let created = ships
        .create(&params, &object)
        .await
        .map_err(|e| e.to_string())?;
    Ok(created.data["spec"]["foo"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

/// Registers the webhook configurations `make manifests` wrote, each webhook calling the
/// manager's URL on its path with the CA's bundle (what kustomize and cert-manager do in a
/// cluster), and waits until a dry-run create is defaulted.
async fn register_webhooks(case: &Case, project: &Project) {
    let text = std::fs::read_to_string(project.dir.join("config/webhook/manifests.yaml"))
        .expect("webhook manifests");
    let base = format!("https://127.0.0.1:{}", case.webhook_port);
    let bundle = serde_json::to_value(ByteString(case.ca.pem.as_bytes().to_vec())).expect("ca");
    let client = case.plane.client();
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&text).expect("webhook manifests");
    for mut doc in docs {
        for hook in doc["webhooks"].as_array_mut().expect("webhooks") {
            assert_eq!(
                hook["failurePolicy"], "Fail",
                "the scaffold's failurePolicy"
            );
            let path = hook["clientConfig"]["service"]["path"]
                .as_str()
                .expect("path")
                .to_owned();
            hook["clientConfig"] =
                serde_json::json!({ "url": format!("{base}{path}"), "caBundle": bundle });
        }
        match doc["kind"].as_str() {
            Some("MutatingWebhookConfiguration") => {
                create(
                    &Api::<MutatingWebhookConfiguration>::all(client.clone()),
                    doc,
                )
                .await;
            }
            Some("ValidatingWebhookConfiguration") => {
                create(
                    &Api::<ValidatingWebhookConfiguration>::all(client.clone()),
                    doc,
                )
                .await;
            }
            other => panic!("unexpected object {other:?} in config/webhook/manifests.yaml"),
        }
    }
    eventually("the webhooks are called", TIMEOUT, || async {
        match admitted(&case.ships, "probe").await? {
            value if value == DEFAULTED => Ok(()),
            value => Err(format!("spec.foo {value:?}")),
        }
    })
    .await
    .unwrap_or_else(|e| case.fail(&e));
}

/// The reconciles in a replica's log; when the replica exited, one it left unfinished counts
/// as failed at the log's last line (another replica must run it again).
fn replica_reconciles(manager: &mut ManagerProcess) -> Result<Vec<Reconcile>, String> {
    let log = manager.log();
    let mut runs = takeover::reconciles(&log, CONTROLLER)?;
    if manager.exited().is_some() {
        let last = log
            .lines()
            .rev()
            .find_map(|l| l.split_whitespace().next()?.parse().ok());
        for run in runs.iter_mut().filter(|r| r.finished.is_none()) {
            run.finished = last.or(Some(run.started));
            run.result = Some("error".to_owned());
        }
    }
    Ok(runs)
}

async fn run_case(fault: Fault) {
    require_assets!();
    let Some(project) = project() else {
        return;
    };
    let mut case = Case::start(fault, project).await;
    let late = case.names[OBJECTS - LATE..].to_vec();
    if fault == Fault::Certificates {
        case.start_manager(project);
        register_webhooks(&case, project).await;
        case.create(project, &case.names[..OBJECTS - LATE]).await;
    } else {
        case.create(project, &case.names).await;
        case.start_manager(project);
    }

    // mid-load: some objects Ready, the rest waiting
    let ready_at_fault = eventually("the first objects are Ready", TIMEOUT, || async {
        match case.ready().await? {
            n if n >= READY_BEFORE_FAULT => Ok(n),
            n => Err(format!("{n} Ready")),
        }
    })
    .await
    .unwrap_or_else(|e| case.fail(&e));
    let before = faults::memory(case.manager().pid()).unwrap_or_else(|e| case.fail(&e));
    let started = Instant::now();
    let mut compacted = None;
    let mut rotation = None;
    let mut expired_refusal = None;
    let mut refused_creates = 0;
    let deleted = match fault {
        Fault::Restart => {
            // the manager misses the changes (its connections cut), so the revision it would
            // resume its watch from is older than the compaction: the restarted apiserver
            // answers 410 Gone and the watch must list again
            case.proxy.cut();
            let deleted = case.change_and_delete().await;
            case.plane.stop_apiserver();
            compacted = Some(faults::compact_etcd(case.plane.etcd_url()).expect("compact etcd"));
            case.plane
                .start_apiserver()
                .await
                .unwrap_or_else(|e| case.fail(&format!("the apiserver starts again: {e}")));
            case.proxy.restore();
            deleted
        }
        Fault::Unreachable => {
            case.proxy.cut();
            let deleted = case.change_and_delete().await;
            tokio::time::sleep(OUTAGE.saturating_sub(started.elapsed())).await;
            case.proxy.restore();
            deleted
        }
        // the throttle is on from the start
        Fault::Throttled => case.change_and_delete().await,
        Fault::Certificates => {
            // rotated: a new key pair from the same CA, while objects change through the
            // webhooks (failurePolicy Fail: a failed call would fail the change)
            let rotated = der(&case.ca.issue(&case.certs, false));
            let deleted = case.change_and_delete().await;
            eventually("the rotated certificate is served", TIMEOUT, || async {
                let leaf = presented(case.webhook_port, &case.ca.pem).await?;
                if leaf == rotated {
                    Ok(())
                } else {
                    Err("the certificate before the rotation".to_owned())
                }
            })
            .await
            .unwrap_or_else(|e| case.fail(&e));
            let defaulted = admitted(&case.ships, "after-rotation")
                .await
                .unwrap_or_else(|e| case.fail(&format!("after the rotation: {e}")));
            assert_eq!(
                defaulted, DEFAULTED,
                "defaulted through the rotated certificate"
            );
            rotation = Some(started.elapsed());
            // expired: once served, the apiserver refuses to call the webhook on a new
            // connection, so admission fails (failurePolicy Fail)
            case.ca.issue(&case.certs, true);
            eventually("the expired certificate is served", TIMEOUT, || async {
                match presented(case.webhook_port, &case.ca.pem).await {
                    Err(e) if e.to_lowercase().contains("expired") => Ok(()),
                    Err(e) => Err(e),
                    Ok(_) => Err("a valid certificate".to_owned()),
                }
            })
            .await
            .unwrap_or_else(|e| case.fail(&e));
            // a connection the apiserver opened before keeps its session; the webhook server
            // closes one idle for 10 s, so the apiserver's next call opens a new one
            let refusal = eventually(
                "admission fails on the expired certificate",
                TIMEOUT,
                || async {
                    tokio::time::sleep(IDLE_CLOSE).await;
                    match admitted(&case.ships, "while-expired").await {
                        Err(e) if e.contains("expired") => Ok(e),
                        Err(e) => Err(e),
                        Ok(_) => Err("admitted".to_owned()),
                    }
                },
            )
            .await
            .unwrap_or_else(|e| case.fail(&e));
            expired_refusal = Some(refusal);
            for name in &late {
                let object = sample_named(&sample(project), name);
                match case.ships.create(&PostParams::default(), &object).await {
                    Err(e) if e.to_string().contains("expired") => refused_creates += 1,
                    Err(e) => case.fail(&format!("creating {name} failed otherwise: {e}")),
                    Ok(_) => {}
                }
            }
            case.ca.issue(&case.certs, false);
            deleted
        }
    };
    let fault_time = started.elapsed();
    let ended = Instant::now();
    if fault == Fault::Certificates {
        // each object refused while the expired certificate was served is created now
        for name in &late {
            let object = sample_named(&sample(project), name);
            eventually(&format!("{name} is admitted again"), TIMEOUT, || async {
                match case.ships.create(&PostParams::default(), &object).await {
                    Ok(_) => Ok(()),
                    Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
                    Err(e) => Err(e.to_string()),
                }
            })
            .await
            .unwrap_or_else(|e| case.fail(&e));
        }
    }
    // until every object is Ready at its generation; a manager that exited (its Lease lost) is
    // started again, as its pod would be
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(status) = case.managers.last_mut().expect("a manager").exited() {
            println!("{fault:?}: the manager exited ({status}); starting it again");
            tokio::task::block_in_place(|| case.start_manager(project));
        }
        match case.settled(&deleted).await {
            Ok(()) => break,
            Err(e) if Instant::now() >= deadline => {
                case.fail(&format!("every object Ready for its generation: {e}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
    let recovery = ended.elapsed();
    // a zombie's /proc entry has no memory lines: the exited replica's sampler has stopped
    let peaks: Vec<u64> = case
        .peaks
        .iter()
        .map(|p| p.load(Ordering::SeqCst))
        .collect();

    // the end of the load: everything deleted, every finalizer removed
    let ships = &case.ships;
    futures::stream::iter(case.names.iter().filter(|n| !deleted.contains(n)))
        .map(|name| async move {
            ships
                .delete(name, &DeleteParams::default())
                .await
                .unwrap_or_else(|e| panic!("cannot delete {name}: {e}"));
        })
        .buffer_unordered(32)
        .collect::<Vec<()>>()
        .await;
    eventually("every object is gone", TIMEOUT, || async {
        let left = ships
            .list(&ListParams::default())
            .await
            .map_err(|e| e.to_string())?
            .items
            .len();
        let seen = case
            .recorder
            .histories()
            .values()
            .filter(|h| h.deleted > 0)
            .count();
        if left == 0 && seen == OBJECTS {
            Ok(())
        } else {
            Err(format!("{left} left, {seen} deletions seen"))
        }
    })
    .await
    .unwrap_or_else(|e| case.fail(&e));
    // the last reconciles' lines reach the log
    tokio::time::sleep(Duration::from_secs(2)).await;

    let keys: Vec<String> = case
        .names
        .iter()
        .map(|n| format!("{NAMESPACE}/{n}"))
        .collect();
    let deleted_early: Vec<String> = deleted.iter().map(|n| format!("{NAMESPACE}/{n}")).collect();
    let mut problems =
        integrity::check_generations(&case.recorder.histories(), &keys, &deleted_early);
    let mut runs = Vec::new();
    let bound = usize::from(operator_gen_runtime::controller::CONCURRENT_RECONCILES);
    let mut most = 0;
    let mut managers = std::mem::take(&mut case.managers);
    for manager in &mut managers {
        match replica_reconciles(manager) {
            Ok(replica) => {
                most = most.max(integrity::most_at_once(&replica));
                runs.extend(replica);
            }
            Err(e) => problems.push(e),
        }
    }
    case.managers = managers;
    if most > bound {
        problems.push(format!(
            "{most} reconciles ran at once, above the controller's bound of {bound}"
        ));
    }
    let counts = match integrity::check_reconciles_under_faults(&runs, &keys, &deleted_early) {
        Ok(counts) => counts,
        Err(more) => {
            problems.extend(more);
            integrity::ReconcileCounts::default()
        }
    };
    let memory_limit = memory_bound(before);
    for peak in &peaks {
        if *peak > memory_limit {
            problems.push(format!(
                "peak resident memory {peak} KiB above {memory_limit} KiB (twice the {} KiB at the fault, and 32 MiB)",
                before.rss_kib
            ));
        }
    }

    // the fault's own evidence, from the apiserver's audit log
    let audited = case.audited();
    let initial_lists = audited
        .iter()
        .filter(|r| r.resource == PLURAL)
        .filter(|r| {
            (r.verb == "watch" && r.uri.contains("sendInitialEvents=true")) || r.verb == "list"
        })
        .count();
    let throttled = audited.iter().filter(|r| r.code == Some(429)).count();
    match fault {
        Fault::Restart if initial_lists < 2 => problems.push(format!(
            "the audit log shows {initial_lists} initial list(s) of {PLURAL} by the operator: its watch never listed again"
        )),
        Fault::Throttled if throttled == 0 => {
            problems.push("the audit log shows no request of the operator answered 429".to_owned());
        }
        _ => {}
    }
    if fault == Fault::Certificates && refused_creates == 0 {
        problems.push(format!(
            "none of the {LATE} objects created while the expired certificate was served was refused"
        ));
    }
    if fault == Fault::Unreachable && case.proxy.refused() == 0 {
        problems.push("nothing tried to connect while the apiserver was unreachable".to_owned());
    }
    if !problems.is_empty() {
        case.fail(&format!(
            "nothing may be lost under the fault:\n{}",
            problems.join("\n")
        ));
    }
    record_ran(Ran::OperatorEndToEnd);
    let peak = peaks.iter().max().copied().unwrap_or_default();
    let expired_refusal = expired_refusal.map(|e| {
        let from = e.find("x509:").unwrap_or(0);
        e[from..].split(':').take(2).collect::<Vec<_>>().join(":")
    });
    if let (Some(rotation), Some(refusal)) = (rotation, &expired_refusal) {
        println!(
            "{fault:?}: the rotated certificate was served {:.1}s after it was written, every change meanwhile admitted; with the expired one {refused_creates} of {LATE} creates were refused ({refusal})",
            rotation.as_secs_f64()
        );
    }
    let lasted = if fault == Fault::Throttled {
        format!(
            "throttled throughout, the changes made in {:.1}s",
            fault_time.as_secs_f64()
        )
    } else {
        format!("fault {:.1}s", fault_time.as_secs_f64())
    };
    println!(
        "{fault:?}: {OBJECTS} objects ({ready_at_fault} Ready when the fault began, {} changed and {} deleted during it), {lasted}, recovered in {:.1}s; {} reconciles, at most {most} at once, {} failed ones retried; {} manager replica(s); {initial_lists} initial lists by the operator, {throttled} requests answered 429, {} connections refused while cut{}; resident memory {} KiB at the fault, peak {peak} KiB (bound {memory_limit} KiB); the test's watch listed again {} times",
        OBJECTS / 3,
        deleted.len(),
        recovery.as_secs_f64(),
        counts.reconciles,
        counts.retried_errors,
        case.managers.len(),
        case.proxy.refused(),
        compacted.map_or(String::new(), |r| format!(
            ", etcd compacted at revision {r}"
        )),
        before.rss_kib,
        case.recorder.relists(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apiserver_restart_with_etcd_compacted_loses_nothing() {
    run_case(Fault::Restart).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apiserver_unreachable_for_60s_loses_nothing() {
    run_case(Fault::Unreachable).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throttled_with_429_loses_nothing() {
    run_case(Fault::Throttled).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_certificate_rotated_then_expired_loses_nothing() {
    run_case(Fault::Certificates).await;
}
