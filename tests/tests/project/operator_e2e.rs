//! The generated operator, end to end against a real kube-apiserver: a project scaffolded by
//! `init` and `create api`, with `make manifests` and `cargo build`, runs its manager binary as a
//! child process.
//!
//! - As `system:masters`: the sample gets the finalizer, a `Ready=True` condition and an event;
//!   the manager holds its Lease; deleting the sample runs the finalizer. A second replica waits
//!   (holds no Lease, reconciles nothing) until the first stops on SIGTERM and releases the
//!   Lease, then takes over within one (jittered) retry period. A third waits in turn; the
//!   second is SIGKILLed; objects created and changed while nobody leads are reconciled by the
//!   third, which takes the Lease no sooner than the lease duration after the killed replica's
//!   last renewal and no later than one retry period after that (the timings are the manager's
//!   `--help` defaults). The Lease, watched throughout, changes holder strictly in turn, and
//!   every reconcile each replica logs lies within its own term: no two replicas reconcile at once.
//! - As the generated ServiceAccount, bound only to what `kubectl kustomize config/default`
//!   yields from `config/rbac`, on an apiserver that audits that account: create, a spec change,
//!   status, finalizer, delete, events (created, then patched as a series) and leader election
//!   (create, renew, release) all succeed, the audit log holds no denied request, and every verb
//!   on every resource of every role bound to the account allowed at least one request (by the
//!   authorizer's own reason) or is in [`UNUSED_GRANTS`] with its reason; a row there that no
//!   longer applies fails. With the `<plural>/status` rule removed the sample never becomes
//!   Ready, the log shows the forbidden error and the audit log the denied request, so the test
//!   can fail.
//!
//! - Under load, as `system:masters`: [`LOAD_OBJECTS`] objects, half present when the manager
//!   starts and half created while it runs, all become Ready and are then deleted. A watch of
//!   every object shows each becoming `Ready` exactly once and being deleted once; the manager's
//!   log shows every reconcile finished, no object reconciled twice at once, exactly two
//!   reconciles that did not fail per object (its creation and its deletion: a key queued twice
//!   would show a third) and every failed reconcile followed by another.
//!
//! Generated projects share `target/generated-projects`. Without the control-plane binaries,
//! `make` or `kubectl` the tests report the skip (see `tools::skip_or_fail`); in CI they fail
//! instead.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use kube::runtime::{WatchStreamExt, watcher};
use operator_gen_envtest::{ControlPlane, Settings, require_assets};
use operator_gen_runtime::manager::{JITTER_FACTOR, parse_duration};
use operator_gen_tests::audit::{self, UnusedGrant};
use operator_gen_tests::cli;
use operator_gen_tests::integrity::{self, Recorder, ready_for_generation};
use operator_gen_tests::operator::{
    ManagerProcess, ManagerSettings, Project, eventually, flag_default, log_field,
    scaffold_and_build, shell,
};
use operator_gen_tests::takeover::{self, LeaseVersion, Replica, Term};
use operator_gen_tests::tools::{Ran, record_ran};

const PROJECT: &str = "e2e-op";
const API_ARGS: &str = "--group crew --version v1 --kind Captain";
const SYSTEM_NAMESPACE: &str = "e2e-op-system";
const LEASE: &str = "e2e-op-leader";
const GROUP: &str = "crew.my.domain";
const PLURAL: &str = "captains";
const FINALIZER: &str = "crew.my.domain/finalizer";
const CONTROLLER: &str = "captain";
const SAMPLE_FILE: &str = "config/samples/crew_v1_captain.yaml";
const SAMPLE_NAMESPACE: &str = "default";
const SERVICE_ACCOUNT: &str = "e2e-op-controller-manager";
const MANAGER_ROLE: &str = "e2e-op-manager-role";
const FIELD_MANAGER: &str = "operator-e2e";

/// How long one expected outcome may take on a loaded two-core machine.
const TIMEOUT: Duration = Duration::from_secs(60);

/// What a take-over may take beyond the leader-election timings: the API round trips between
/// a write and the replica that reads it (the old holder's last renewal, the new holder's read
/// and write), and a late timer, on a loaded two-core machine.
const ROUND_TRIPS: Duration = Duration::from_secs(1);

/// Panics with `error` and the logs of `managers`.
fn fail(error: &str, managers: &[&ManagerProcess]) -> ! {
    let logs: Vec<String> = managers
        .iter()
        .map(|m| format!("--- manager pid {} log ---\n{}", m.pid(), m.log()))
        .collect();
    panic!("{error}\n{}", logs.join("\n"));
}

/// The running control plane with the project's CRDs and system namespace.
struct Cluster {
    plane: ControlPlane,
    client: kube::Client,
    captains: Api<DynamicObject>,
}

impl Cluster {
    async fn start(project: &Project, settings: Settings) -> Cluster {
        let plane = ControlPlane::start_with(settings)
            .await
            .expect("the control plane starts");
        let client = plane.client();
        let crds = project.crds();
        plane
            .install_crds(&crds, TIMEOUT)
            .await
            .expect("the generated CRDs are Established");
        let resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(GROUP, "v1", "Captain"),
            PLURAL,
        );
        let captains = Api::namespaced_with(client.clone(), SAMPLE_NAMESPACE, &resource);
        Cluster {
            plane,
            client,
            captains,
        }
    }

    async fn create_namespace(&self, name: &str) {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let ns = Namespace {
            metadata: kube::api::ObjectMeta {
                name: Some(name.to_owned()),
                ..Default::default()
            },
            ..Default::default()
        };
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .unwrap_or_else(|e| panic!("cannot create namespace {name}: {e}"));
    }

    /// Creates the project's sample under `name`.
    async fn create_sample(&self, project: &Project, name: &str) {
        let text = std::fs::read_to_string(project.dir.join(SAMPLE_FILE)).expect("sample");
        let mut sample: DynamicObject = serde_saphyr::from_str(&text).expect("sample yaml");
        sample.metadata.name = Some(name.to_owned());
        sample.metadata.namespace = Some(SAMPLE_NAMESPACE.to_owned());
        self.captains
            .create(&PostParams::default(), &sample)
            .await
            .unwrap_or_else(|e| panic!("the apiserver rejects {SAMPLE_FILE}: {e}"));
    }

    /// Changes the spec of `name` (the scaffold's example field `spec.foo`), which raises its
    /// generation.
    async fn change_spec(&self, name: &str, value: &str) {
        let patch = serde_json::json!({ "spec": { "foo": value } });
        self.captains
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap_or_else(|e| panic!("cannot change the spec of {name}: {e}"));
    }

    /// The Lease's holder and renew time.
    async fn lease(&self) -> Result<(String, Option<Timestamp>), String> {
        let leases: Api<Lease> = Api::namespaced(self.client.clone(), SYSTEM_NAMESPACE);
        let lease = leases.get(LEASE).await.map_err(|e| e.to_string())?;
        let spec = lease.spec.unwrap_or_default();
        let holder = spec
            .holder_identity
            .filter(|h| !h.is_empty())
            .ok_or("the lease has no holder")?;
        Ok((holder, spec.renew_time.map(|t| t.0)))
    }

    /// Waits until the Lease is held by the replica `pod_name`; returns the holder identity,
    /// checked against the identity the replica logged.
    async fn wait_leader(&self, pod_name: &str, manager: &ManagerProcess) -> String {
        let prefix = format!("{pod_name}_");
        let holder = eventually(&format!("{pod_name} holds {LEASE}"), TIMEOUT, || async {
            let (holder, _) = self.lease().await?;
            if holder.starts_with(&prefix) {
                Ok(holder)
            } else {
                Err(format!("holder is {holder}"))
            }
        })
        .await
        .unwrap_or_else(|e| fail(&e, &[manager]));
        let logged = eventually("the acquisition is logged", TIMEOUT, || async {
            log_field(&manager.log(), "successfully acquired lease", "identity")
                .ok_or_else(|| "no `successfully acquired lease` line".to_owned())
        })
        .await
        .unwrap_or_else(|e| fail(&e, &[manager]));
        assert_eq!(
            holder, logged,
            "the Lease holder is not the manager's identity"
        );
        holder
    }

    /// Waits until the object `name` carries the finalizer and `Ready=True` for its current
    /// generation, and an events.k8s.io/v1 Event from the controller is about it.
    async fn wait_reconciled(&self, name: &str, manager: &ManagerProcess) {
        eventually(
            &format!("{name} is Ready with the finalizer"),
            TIMEOUT,
            || async {
                let obj = self.captains.get(name).await.map_err(|e| e.to_string())?;
                let finalizers = obj.metadata.finalizers.clone().unwrap_or_default();
                if !finalizers.iter().any(|f| f == FINALIZER) {
                    return Err(format!("finalizers: {finalizers:?}"));
                }
                if ready_for_generation(&obj) {
                    Ok(())
                } else {
                    Err(format!(
                        "generation {:?}, status: {}",
                        obj.metadata.generation, obj.data["status"]
                    ))
                }
            },
        )
        .await
        .unwrap_or_else(|e| fail(&e, &[manager]));
        self.wait_event(name, "Reconciled", 1, manager).await;
    }

    /// Waits for an Event from the controller about `name` with `reason`, observed at least
    /// `count` times (an event repeated is patched as a series).
    async fn wait_event(&self, name: &str, reason: &str, count: i32, manager: &ManagerProcess) {
        let events: Api<Event> = Api::namespaced(self.client.clone(), SAMPLE_NAMESPACE);
        eventually(
            &format!("a {reason} event about {name}, seen {count} times"),
            TIMEOUT,
            || async {
                let list = events
                    .list(&ListParams::default())
                    .await
                    .map_err(|e| e.to_string())?;
                let found = list.items.iter().any(|e| {
                    let about = e.regarding.as_ref();
                    let seen = e.series.as_ref().map_or(1, |s| s.count);
                    about.and_then(|r| r.name.as_deref()) == Some(name)
                        && about.and_then(|r| r.kind.as_deref()) == Some("Captain")
                        && e.reason.as_deref() == Some(reason)
                        && e.reporting_controller.as_deref() == Some(CONTROLLER)
                        && seen >= count
                });
                if found {
                    Ok(())
                } else {
                    Err(format!("{} events, none matching", list.items.len()))
                }
            },
        )
        .await
        .unwrap_or_else(|e| fail(&e, &[manager]));
    }

    /// Deletes `name` and waits until it is gone, with the controller's cleanup event recorded.
    async fn delete_and_wait_gone(&self, name: &str, manager: &ManagerProcess) {
        self.captains
            .delete(name, &DeleteParams::default())
            .await
            .unwrap_or_else(|e| panic!("cannot delete {name}: {e}"));
        eventually(&format!("{name} is gone"), TIMEOUT, || async {
            match self.captains.get_opt(name).await {
                Ok(None) => Ok(()),
                Ok(Some(obj)) => Err(format!("finalizers: {:?}", obj.metadata.finalizers)),
                Err(e) => Err(e.to_string()),
            }
        })
        .await
        .unwrap_or_else(|e| fail(&e, &[manager]));
        self.wait_event(name, "Deleting", 1, manager).await;
    }

    fn manager_settings(&self, project: &Project, kubeconfig: &Path, pod: &str) -> ManagerSettings {
        ManagerSettings {
            binary: project.manager.clone(),
            kubeconfig: kubeconfig.to_owned(),
            pod_name: pod.to_owned(),
            pod_namespace: SYSTEM_NAMESPACE.to_owned(),
            log: self.plane.dir().join(format!("{pod}.log")),
            args: Vec::new(),
        }
    }
}

/// The reconciles the manager counted, whatever their result.
fn reconciles(manager: &ManagerProcess) -> f64 {
    let body = manager
        .metrics()
        .unwrap_or_else(|e| fail(&format!("no metrics: {e}"), &[manager]));
    let prefix = format!("controller_runtime_reconcile_total{{controller=\"{CONTROLLER}\",");
    body.lines()
        .filter(|l| l.starts_with(&prefix))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .sum()
}

fn leader_status(manager: &ManagerProcess) -> Result<f64, String> {
    let body = manager.metrics()?;
    operator_gen_tests::operator::metric_value(
        &body,
        &format!("leader_election_master_status{{name=\"{LEASE}\"}}"),
    )
    .ok_or_else(|| "no leader_election_master_status sample".to_owned())
}

/// Waits until `manager` runs as a backup: it serves metrics, tries for the Lease, leads not.
async fn wait_backup(manager: &ManagerProcess, others: &[&ManagerProcess]) {
    eventually("the new replica is a backup", TIMEOUT, || async {
        let status = leader_status(manager)?;
        let log = manager.log();
        if status == 0.0 && log.contains("attempting to acquire leader lease") {
            Ok(())
        } else {
            Err(format!("leader status {status}"))
        }
    })
    .await
    .unwrap_or_else(|e| fail(&e, &[others, &[manager]].concat()));
}

/// Scaffolds and builds the project, or `None` when `make` is missing outside CI.
fn build_project(parent: &Path) -> Option<Project> {
    if !cli::require_tool("make", &["--version"], cli::INSTALL_MAKE) {
        return None;
    }
    Some(scaffold_and_build(parent, PROJECT, API_ARGS))
}

/// The leader-election timings the manager runs with: its `--help` defaults.
struct LeaderTimings {
    lease_duration: Duration,
    retry_period: Duration,
}

impl LeaderTimings {
    fn of(manager: &Path) -> LeaderTimings {
        let flag = |name: &str| {
            let value = flag_default(manager, name);
            parse_duration(&value).unwrap_or_else(|e| panic!("--{name} default {value:?}: {e}"))
        };
        LeaderTimings {
            lease_duration: flag("leader-election-lease-duration"),
            retry_period: flag("leader-election-retry-period"),
        }
    }

    /// The longest wait of a candidate between two attempts: the retry period jittered as
    /// client-go's.
    fn longest_retry(&self) -> Duration {
        self.retry_period.mul_f64(1.0 + JITTER_FACTOR)
    }
}

/// Every version of the Lease the apiserver stores, in order, from a watch started before
/// any replica runs.
struct LeaseWatch {
    versions: Arc<Mutex<Vec<(String, LeaseVersion)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl LeaseWatch {
    fn start(client: kube::Client) -> LeaseWatch {
        let versions: Arc<Mutex<Vec<(String, LeaseVersion)>>> = Arc::default();
        let api: Api<Lease> = Api::namespaced(client, SYSTEM_NAMESPACE);
        let config = watcher::Config::default().fields(&format!("metadata.name={LEASE}"));
        let seen = versions.clone();
        let task = tokio::spawn(async move {
            let mut stream =
                std::pin::pin!(watcher(api, config).default_backoff().applied_objects());
            while let Some(lease) = stream.next().await {
                let Ok(lease) = lease else { continue };
                let version = lease.metadata.resource_version.clone().unwrap_or_default();
                let spec = lease.spec.unwrap_or_default();
                let record = LeaseVersion {
                    holder: spec.holder_identity.filter(|h| !h.is_empty()),
                    acquired: spec.acquire_time.map(|t| t.0),
                    renewed: spec.renew_time.map(|t| t.0),
                    transitions: spec.lease_transitions.unwrap_or(0),
                };
                let mut all = seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                // a re-list repeats the current version
                if all.last().is_none_or(|(v, _)| *v != version) {
                    all.push((version, record));
                }
            }
        });
        LeaseWatch { versions, task }
    }

    fn versions(&self) -> Vec<LeaseVersion> {
        self.versions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|(_, v)| v.clone())
            .collect()
    }
}

impl Drop for LeaseWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `to - from`, as a `Duration` (zero when negative).
fn between(from: Timestamp, to: Timestamp) -> Duration {
    Duration::try_from(to.duration_since(from).max(SignedDuration::ZERO)).unwrap_or_default()
}

/// The replica's reconciles from its log, failing with the log when it cannot be read.
fn replica(pod: &str, manager: &ManagerProcess, stopped: Option<Timestamp>) -> Replica {
    let reconciles =
        takeover::reconciles(&manager.log(), CONTROLLER).unwrap_or_else(|e| fail(&e, &[manager]));
    Replica {
        pod: pod.to_owned(),
        reconciles,
        stopped,
    }
}

/// The objects `replica` reconciled.
fn reconciled_objects(replica: &Replica) -> Vec<&str> {
    let mut objects: Vec<&str> = replica
        .reconciles
        .iter()
        .map(|r| r.object.as_str())
        .collect();
    objects.sort_unstable();
    objects.dedup();
    objects
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_operator_reconciles_and_hands_over_on_sigterm_and_after_sigkill() {
    require_assets!();
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(project) = build_project(tmp.path()) else {
        return;
    };
    let timings = LeaderTimings::of(&project.manager);
    let cluster = Cluster::start(&project, Settings::default()).await;
    cluster.create_namespace(SYSTEM_NAMESPACE).await;
    let leases = LeaseWatch::start(cluster.client.clone());
    let admin = cluster.plane.kubeconfig().to_owned();

    let mut first = ManagerProcess::start(&cluster.manager_settings(&project, &admin, "replica-a"));
    cluster.create_sample(&project, "captain-sample").await;
    let leader = cluster.wait_leader("replica-a", &first).await;
    cluster.wait_reconciled("captain-sample", &first).await;
    cluster.delete_and_wait_gone("captain-sample", &first).await;

    // A second replica: it runs (serves metrics as a backup) but waits for the Lease.
    let mut second =
        ManagerProcess::start(&cluster.manager_settings(&project, &admin, "replica-b"));
    wait_backup(&second, &[&first]).await;
    let (_, renewed_before) = cluster.lease().await.expect("lease");
    // While both run, the first reconciles a new object and renews the Lease; the second
    // reconciles nothing and the Lease stays with the first.
    cluster.create_sample(&project, "captain-second").await;
    cluster.wait_reconciled("captain-second", &first).await;
    eventually("the first replica renews the Lease", TIMEOUT, || async {
        let (holder, renewed) = cluster.lease().await?;
        if holder != leader {
            return Err(format!("the lease moved to {holder}"));
        }
        if renewed > renewed_before {
            Ok(())
        } else {
            Err("not renewed yet".to_owned())
        }
    })
    .await
    .unwrap_or_else(|e| fail(&e, &[&first, &second]));
    assert_eq!(cluster.lease().await.expect("lease").0, leader);
    assert_eq!(leader_status(&second), Ok(0.0), "{}", second.log());
    assert_eq!(
        reconciles(&second),
        0.0,
        "the backup replica reconciled:\n{}",
        second.log()
    );
    assert!(reconciles(&first) >= 1.0);
    assert!(
        !second.log().contains("successfully acquired lease"),
        "{}",
        second.log()
    );

    // SIGTERM: the first shuts down cleanly and releases the Lease; the second takes over.
    first.terminate();
    let status = first.wait_exit(TIMEOUT);
    let first_stopped = Timestamp::now();
    assert!(status.success(), "SIGTERM exit: {status}\n{}", first.log());
    assert!(
        first.log().contains("released leader lease"),
        "{}",
        first.log()
    );
    let new_leader = cluster.wait_leader("replica-b", &second).await;
    assert_ne!(new_leader, leader);
    eventually("the new leader reconciles", TIMEOUT, || async {
        match (leader_status(&second)?, reconciles(&second)) {
            (1.0, n) if n >= 1.0 => Ok(()),
            other => Err(format!("leader status and reconciles: {other:?}")),
        }
    })
    .await
    .unwrap_or_else(|e| fail(&e, &[&second]));

    // A third replica waits; SIGKILL the leader: nothing releases the Lease.
    let third = ManagerProcess::start(&cluster.manager_settings(&project, &admin, "replica-c"));
    wait_backup(&third, &[&second]).await;
    let status = second.kill();
    let second_stopped = Timestamp::now();
    assert!(!status.success(), "SIGKILL exit: {status}");
    // While nobody leads: a new object, and a change to an existing one.
    cluster.create_sample(&project, "captain-gap").await;
    cluster
        .change_spec("captain-second", "changed-in-the-gap")
        .await;
    let gap_object = cluster.captains.get("captain-gap").await.expect("get");
    let (holder, _) = cluster.lease().await.expect("lease");
    assert!(
        holder == new_leader && gap_object.metadata.finalizers.is_none(),
        "while the killed replica's Lease is valid nobody reconciles: holder {holder}, \
         finalizers {:?}",
        gap_object.metadata.finalizers
    );
    let third_leader = cluster.wait_leader("replica-c", &third).await;
    cluster.wait_reconciled("captain-gap", &third).await;
    cluster.wait_reconciled("captain-second", &third).await;

    // The Lease's history: a, b, c in turn, each change counting one transition.
    let history = leases.versions();
    let terms: Vec<Term> = takeover::terms(&history)
        .unwrap_or_else(|e| fail(&format!("{e}\nhistory: {history:#?}"), &[&second, &third]));
    let holders: Vec<&str> = terms.iter().map(|t| t.holder.as_str()).collect();
    assert_eq!(
        holders,
        [leader.as_str(), new_leader.as_str(), third_leader.as_str()],
        "the Lease's holders"
    );
    let released = terms[0]
        .released
        .expect("the first replica released the Lease");
    let hand_over = between(released, terms[1].acquired);
    assert!(
        hand_over <= timings.longest_retry() + ROUND_TRIPS,
        "after SIGTERM the second replica took the Lease {hand_over:?} after its release, \
         more than one retry period ({:?}, jittered) and {ROUND_TRIPS:?}",
        timings.longest_retry()
    );
    let take_over = between(terms[1].last_renewed, terms[2].acquired);
    let from_kill = between(second_stopped, terms[2].acquired);
    assert!(
        take_over >= timings.lease_duration,
        "the third replica took the Lease {take_over:?} after the killed leader's last renewal, \
         before the lease duration {:?} ran out",
        timings.lease_duration
    );
    assert!(
        take_over <= timings.lease_duration + timings.longest_retry() + ROUND_TRIPS,
        "the third replica took the Lease {take_over:?} after the killed leader's last renewal, \
         more than the lease duration {:?} plus one retry period ({:?}, jittered) and \
         {ROUND_TRIPS:?}",
        timings.lease_duration,
        timings.longest_retry()
    );
    assert!(
        second_stopped < terms[2].acquired,
        "the killed replica had not exited when the third took over"
    );

    // No two replicas reconciled at once.
    let replicas = [
        replica("replica-a", &first, Some(first_stopped)),
        replica("replica-b", &second, Some(second_stopped)),
        replica("replica-c", &third, None),
    ];
    let reconciled: Vec<Vec<&str>> = replicas.iter().map(reconciled_objects).collect();
    assert_eq!(
        reconciled,
        [
            vec!["default/captain-sample", "default/captain-second"],
            vec!["default/captain-second"],
            vec!["default/captain-gap", "default/captain-second"],
        ],
        "the objects each replica reconciled"
    );
    if let Err(problems) = takeover::check_exclusive(&terms, &replicas) {
        fail(
            &format!("two replicas reconciled at once:\n{}", problems.join("\n")),
            &[&first, &second, &third],
        );
    }
    println!(
        "lease terms {holders:?}; hand-over after SIGTERM {hand_over:?}; take-over after SIGKILL \
         {take_over:?} after the last renewal ({from_kill:?} after the kill; lease duration \
         {:?}, retry period {:?}); reconciles per replica {:?}",
        timings.lease_duration,
        timings.retry_period,
        replicas
            .iter()
            .map(|r| r.reconciles.len())
            .collect::<Vec<_>>()
    );
    cluster.delete_and_wait_gone("captain-second", &third).await;
    record_ran(Ran::OperatorEndToEnd);
}

/// Applies every ServiceAccount, Role, ClusterRole and binding (and the Namespace) of `docs`
/// with server-side apply.
async fn apply_rbac(client: &kube::Client, docs: &[serde_json::Value]) {
    for doc in docs {
        let kind = doc["kind"].as_str().unwrap_or_default();
        let resource = match kind {
            "Namespace" => ApiResource::erase::<Namespace>(&()),
            "ServiceAccount" => ApiResource::erase::<ServiceAccount>(&()),
            "Role" => ApiResource::erase::<k8s_openapi::api::rbac::v1::Role>(&()),
            "ClusterRole" => ApiResource::erase::<k8s_openapi::api::rbac::v1::ClusterRole>(&()),
            "RoleBinding" => ApiResource::erase::<k8s_openapi::api::rbac::v1::RoleBinding>(&()),
            "ClusterRoleBinding" => {
                ApiResource::erase::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>(&())
            }
            _ => continue,
        };
        let obj: DynamicObject = serde_json::from_value(doc.clone()).expect("object");
        let name = obj.metadata.name.clone().expect("name");
        let api: Api<DynamicObject> = match &obj.metadata.namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
            None => Api::all_with(client.clone(), &resource),
        };
        api.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&obj),
        )
        .await
        .unwrap_or_else(|e| panic!("cannot apply {kind} {name}: {e}"));
    }
}

/// Whether the ServiceAccount may `verb` captains (`subresource` when given) in the sample
/// namespace, as the apiserver's authorizer answers now.
async fn sa_may(client: &kube::Client, verb: &str, subresource: Option<&str>) -> bool {
    let reviews: Api<SubjectAccessReview> = Api::all(client.clone());
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(service_account_user()),
            groups: Some(vec![
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{SYSTEM_NAMESPACE}"),
                "system:authenticated".to_owned(),
            ]),
            resource_attributes: Some(ResourceAttributes {
                group: Some(GROUP.to_owned()),
                resource: Some(PLURAL.to_owned()),
                subresource: subresource.map(str::to_owned),
                verb: Some(verb.to_owned()),
                namespace: Some(SAMPLE_NAMESPACE.to_owned()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let answer = reviews
        .create(&PostParams::default(), &review)
        .await
        .expect("SubjectAccessReview");
    answer.status.is_some_and(|s| s.allowed)
}

fn service_account_user() -> String {
    format!("system:serviceaccount:{SYSTEM_NAMESPACE}:{SERVICE_ACCOUNT}")
}

/// Audits every request of the generated ServiceAccount (metadata: who, what, the answer and
/// the authorizer's reason), nothing else.
fn audit_policy() -> String {
    format!(
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n\
         - level: Metadata\n  users: [\"{}\"]\n- level: None\n",
        service_account_user()
    )
}

const MANAGER: &str = "ClusterRole e2e-op-manager-role";
const LEADER_ELECTION: &str = "Role e2e-op-system/e2e-op-leader-election-role";
const METRICS_AUTH: &str = "ClusterRole e2e-op-metrics-auth-role";

/// The grants bound to the generated ServiceAccount that no request of the scaffolded operator
/// uses, each with why. A row whose grant is used, or no longer granted, fails the test.
const UNUSED_GRANTS: &[UnusedGrant] = &[
    UnusedGrant {
        role: MANAGER,
        group: GROUP,
        resource: PLURAL,
        verb: "get",
        reason: "the controller reads captains from its watch; the marker grants get for the user's code",
    },
    UnusedGrant {
        role: MANAGER,
        group: GROUP,
        resource: PLURAL,
        verb: "list",
        reason: "the cache is filled by a watch asking for the initial events (verb watch); list is for the fallback to pages where the apiserver does not stream lists",
    },
    UnusedGrant {
        role: MANAGER,
        group: GROUP,
        resource: PLURAL,
        verb: "create",
        reason: "the scaffold never creates a captain; kubebuilder's default marker grants it for the user's code",
    },
    UnusedGrant {
        role: MANAGER,
        group: GROUP,
        resource: PLURAL,
        verb: "update",
        reason: "the finalizer is added and removed with a JSON patch (patch), never a full update",
    },
    UnusedGrant {
        role: MANAGER,
        group: GROUP,
        resource: PLURAL,
        verb: "delete",
        reason: "the scaffold never deletes a captain; kubebuilder's default marker grants it for the user's code",
    },
    UnusedGrant {
        role: MANAGER,
        group: GROUP,
        resource: "captains/status",
        verb: "get",
        reason: "status is read with the object from the watch, not from the status subresource",
    },
    UnusedGrant {
        role: MANAGER,
        group: GROUP,
        resource: "captains/status",
        verb: "update",
        reason: "the Ready condition is written by server-side apply (verb patch), never a full update",
    },
    UnusedGrant {
        role: MANAGER,
        group: GROUP,
        resource: "captains/finalizers",
        verb: "update",
        reason: "no request names the finalizers subresource: the OwnerReferencesPermissionEnforcement admission plugin checks it when an object owned by a captain blocks its deletion, and the scaffold creates none",
    },
    UnusedGrant {
        role: LEADER_ELECTION,
        group: "coordination.k8s.io",
        resource: "leases",
        verb: "watch",
        reason: "the elector polls its Lease every retry period (get) rather than watching it",
    },
    UnusedGrant {
        role: LEADER_ELECTION,
        group: "coordination.k8s.io",
        resource: "leases",
        verb: "patch",
        reason: "the elector writes the Lease with update, guarded by its resourceVersion, never a patch",
    },
    UnusedGrant {
        role: LEADER_ELECTION,
        group: "coordination.k8s.io",
        resource: "leases",
        verb: "delete",
        reason: "a released Lease is kept with an empty holder, as client-go's; nothing deletes it",
    },
    UnusedGrant {
        role: LEADER_ELECTION,
        group: "",
        resource: "events",
        verb: "create",
        reason: "the runtime's elector records no leader-election events (client-go's does, in the Lease's namespace)",
    },
    UnusedGrant {
        role: LEADER_ELECTION,
        group: "",
        resource: "events",
        verb: "patch",
        reason: "the runtime's elector records no leader-election events (client-go's does, in the Lease's namespace)",
    },
    UnusedGrant {
        role: LEADER_ELECTION,
        group: "events.k8s.io",
        resource: "events",
        verb: "create",
        reason: "the controller's events are about captains in their own namespaces, allowed by the manager role; the elector records none",
    },
    UnusedGrant {
        role: LEADER_ELECTION,
        group: "events.k8s.io",
        resource: "events",
        verb: "patch",
        reason: "the controller's events are about captains in their own namespaces, allowed by the manager role; the elector records none",
    },
    UnusedGrant {
        role: METRICS_AUTH,
        group: "authentication.k8s.io",
        resource: "tokenreviews",
        verb: "create",
        reason: "this test runs the manager with --metrics-secure=false to read its metrics without a token, so no scrape is authenticated (metrics_secure.rs proves the role serves secure metrics)",
    },
    UnusedGrant {
        role: METRICS_AUTH,
        group: "authorization.k8s.io",
        resource: "subjectaccessreviews",
        verb: "create",
        reason: "this test runs the manager with --metrics-secure=false to read its metrics without a token, so no scrape is authorized (metrics_secure.rs proves the role serves secure metrics)",
    },
];

/// The ServiceAccount's requests in the audit log so far.
fn audited_requests(cluster: &Cluster) -> Vec<audit::Request> {
    let path = cluster.plane.audit_log().expect("the control plane audits");
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read the audit log {}: {e}", path.display()));
    let user = service_account_user();
    audit::parse_log(&text)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter(|r| r.user == user)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_rbac_is_sufficient_and_each_grant_is_used_or_excepted() {
    require_assets!();
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(project) = build_project(tmp.path()) else {
        return;
    };
    if !cli::require_tool("kubectl", &["version", "--client"], cli::INSTALL_KUBECTL) {
        return;
    }
    let yaml = shell(&project.dir, "kubectl", &["kustomize", "config/default"]);
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&yaml).expect("kustomize yaml");
    let settings = Settings {
        audit_policy: Some(audit_policy()),
        ..Settings::default()
    };
    let cluster = Cluster::start(&project, settings).await;
    apply_rbac(&cluster.client, &docs).await;

    let accounts: Api<ServiceAccount> = Api::namespaced(cluster.client.clone(), SYSTEM_NAMESPACE);
    let token = accounts
        .create_token_request(SERVICE_ACCOUNT, &PostParams::default(), &Default::default())
        .await
        .expect("a token for the generated ServiceAccount")
        .status
        .and_then(|s| s.token)
        .expect("token");
    let kubeconfig = cluster.plane.dir().join("service-account.kubeconfig");
    operator_gen_tests::operator::token_kubeconfig(cluster.plane.kubeconfig(), &token, &kubeconfig);
    assert!(
        sa_may(&cluster.client, "patch", Some("status")).await,
        "the generated ClusterRole does not grant {PLURAL}/status"
    );

    // With exactly the generated RBAC, the operator does everything: leader election, create,
    // a spec change (status and event again, the event as a series), delete.
    let mut manager =
        ManagerProcess::start(&cluster.manager_settings(&project, &kubeconfig, "rbac-a"));
    cluster.create_sample(&project, "captain-sample").await;
    cluster.wait_leader("rbac-a", &manager).await;
    cluster.wait_reconciled("captain-sample", &manager).await;
    cluster.change_spec("captain-sample", "changed").await;
    cluster.wait_reconciled("captain-sample", &manager).await;
    cluster
        .wait_event("captain-sample", "Reconciled", 2, &manager)
        .await;
    cluster
        .delete_and_wait_gone("captain-sample", &manager)
        .await;
    assert!(
        !manager.log().contains("forbidden"),
        "the operator hit a forbidden error with the generated RBAC:\n{}",
        manager.log()
    );
    manager.terminate();
    let status = manager.wait_exit(TIMEOUT);
    assert!(
        status.success(),
        "SIGTERM exit: {status}\n{}",
        manager.log()
    );
    assert!(
        manager.log().contains("released leader lease"),
        "{}",
        manager.log()
    );

    // The apiserver's account of it: nothing denied, every grant used or excepted.
    let requests = audited_requests(&cluster);
    assert!(
        !requests.is_empty(),
        "the audit log holds no request of {SERVICE_ACCOUNT}"
    );
    let denied: Vec<String> = requests
        .iter()
        .filter(|r| r.denied())
        .map(ToString::to_string)
        .collect();
    assert!(
        denied.is_empty(),
        "the generated RBAC denied {} request(s):\n{}",
        denied.len(),
        denied.join("\n")
    );
    let grants = audit::grants_bound_to(&docs, SYSTEM_NAMESPACE, SERVICE_ACCOUNT)
        .unwrap_or_else(|e| panic!("{e}"));
    let other_roles: Vec<String> = requests
        .iter()
        .filter(|r| !r.resource.is_empty())
        .filter(|r| {
            r.allowed_by()
                .is_none_or(|role| !grants.iter().any(|g| g.role == role))
        })
        .map(ToString::to_string)
        .collect();
    assert!(
        other_roles.is_empty(),
        "requests not allowed by a generated role:\n{}",
        other_roles.join("\n")
    );
    let used = audit::used_grants(&requests, &grants);
    let found = audit::coverage(&grants, &used, UNUSED_GRANTS);
    let list = |grants: &[audit::Grant]| {
        grants
            .iter()
            .map(|g| format!("  {g}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        found.problems.is_empty(),
        "the generated RBAC against the audit log:\n{}\nused:\n{}",
        found.problems.join("\n"),
        list(&found.used)
    );
    println!(
        "RBAC by the audit log: {} requests of {SERVICE_ACCOUNT}, none denied; {} (role, \
         resource, verb) grants proven used, {} excepted\nused:\n{}\nexcepted:\n{}",
        requests.len(),
        found.used.len(),
        found.excepted.len(),
        list(&found.used),
        list(&found.excepted)
    );

    // Without the generated `<plural>/status` rule it cannot report Ready.
    let mut role = docs
        .iter()
        .find(|d| d["kind"] == "ClusterRole" && d["metadata"]["name"] == MANAGER_ROLE)
        .unwrap_or_else(|| panic!("kustomize yields no ClusterRole {MANAGER_ROLE}"))
        .clone();
    let status_resource = format!("{PLURAL}/status");
    let rules = role["rules"].as_array_mut().expect("rules");
    // the generated role grants the status subresource in a rule of its own
    let naming_status: Vec<&serde_json::Value> = rules
        .iter()
        .map(|r| &r["resources"])
        .filter(|r| {
            r.as_array()
                .is_some_and(|r| r.iter().any(|r| r == status_resource.as_str()))
        })
        .collect();
    assert_eq!(
        naming_status,
        [&serde_json::json!([status_resource])],
        "the rules naming {status_resource}"
    );
    rules.retain(|r| r["resources"] != serde_json::json!([status_resource]));
    apply_rbac(&cluster.client, &[role]).await;
    eventually("the status rule is revoked", TIMEOUT, || async {
        if sa_may(&cluster.client, "patch", Some("status")).await {
            Err("still allowed".to_owned())
        } else {
            Ok(())
        }
    })
    .await
    .expect("revoke");
    assert!(sa_may(&cluster.client, "patch", None).await);

    let manager = ManagerProcess::start(&cluster.manager_settings(&project, &kubeconfig, "rbac-b"));
    cluster.create_sample(&project, "captain-forbidden").await;
    cluster.wait_leader("rbac-b", &manager).await;
    // It runs and reconciles (the finalizer goes on), but the status patch is forbidden.
    eventually("the status patch is forbidden", TIMEOUT, || async {
        let obj = cluster
            .captains
            .get("captain-forbidden")
            .await
            .map_err(|e| e.to_string())?;
        let has_finalizer = obj
            .metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| f.iter().any(|f| f == FINALIZER));
        let log = manager.log();
        if has_finalizer && log.contains("forbidden") && log.contains(&status_resource) {
            Ok(())
        } else {
            Err(format!("finalizer {has_finalizer}"))
        }
    })
    .await
    .unwrap_or_else(|e| fail(&e, &[&manager]));
    // Past the first retry (5 s backoff), it still is not Ready.
    let not_ready = eventually(
        "captain-forbidden becomes Ready",
        Duration::from_secs(8),
        || async {
            let obj = cluster
                .captains
                .get("captain-forbidden")
                .await
                .map_err(|e| e.to_string())?;
            if ready_for_generation(&obj) {
                Ok(())
            } else {
                Err("not Ready".to_owned())
            }
        },
    )
    .await;
    assert!(
        not_ready.is_err(),
        "captain-forbidden became Ready without the {status_resource} rule:\n{}",
        manager.log()
    );
    let errors = manager
        .metric(&format!(
            "controller_runtime_reconcile_errors_total{{controller=\"{CONTROLLER}\"}}"
        ))
        .unwrap_or_else(|e| fail(&e, &[&manager]));
    assert!(
        errors >= 1.0,
        "no reconcile errors counted:\n{}",
        manager.log()
    );
    // The audit log names the denied request.
    let denied: Vec<String> = audited_requests(&cluster)
        .iter()
        .filter(|r| r.denied())
        .map(|r| format!("{} {} {}", r.verb, r.resource, r.name))
        .collect();
    assert!(
        denied
            .iter()
            .any(|d| d == &format!("patch {status_resource} captain-forbidden")),
        "the audit log does not show the denied status patch; denied: {denied:?}"
    );
    record_ran(Ran::OperatorEndToEnd);
}

/// How many objects the load test makes.
const LOAD_OBJECTS: usize = 300;

/// Creates the project's sample under each of `names`, 32 at a time.
async fn create_samples(cluster: &Cluster, project: &Project, names: &[String]) {
    futures::stream::iter(names)
        .map(|name| cluster.create_sample(project, name))
        .buffer_unordered(32)
        .collect::<Vec<()>>()
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_load_every_object_is_ready_once_and_no_reconcile_is_lost_or_doubled() {
    require_assets!();
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(project) = build_project(tmp.path()) else {
        return;
    };
    let cluster = Cluster::start(&project, Settings::default()).await;
    cluster.create_namespace(SYSTEM_NAMESPACE).await;
    let recorder = Recorder::start(cluster.captains.clone()).await;
    let names: Vec<String> = (0..LOAD_OBJECTS).map(|i| format!("load-{i:04}")).collect();
    let keys: Vec<String> = names
        .iter()
        .map(|n| format!("{SAMPLE_NAMESPACE}/{n}"))
        .collect();
    let (backlog, streamed) = names.split_at(LOAD_OBJECTS / 2);
    create_samples(&cluster, &project, backlog).await;
    let admin = cluster.plane.kubeconfig().to_owned();
    let manager = ManagerProcess::start(&cluster.manager_settings(&project, &admin, "replica-a"));
    create_samples(&cluster, &project, streamed).await;
    let load_timeout = TIMEOUT * 3;
    eventually(
        "every object Ready for its generation",
        load_timeout,
        || async {
            let list = cluster
                .captains
                .list(&ListParams::default())
                .await
                .map_err(|e| e.to_string())?;
            let waiting = list
                .items
                .iter()
                .filter(|o| !ready_for_generation(o))
                .count();
            if list.items.len() == LOAD_OBJECTS && waiting == 0 {
                Ok(())
            } else {
                Err(format!("{} objects, {waiting} not Ready", list.items.len()))
            }
        },
    )
    .await
    .unwrap_or_else(|e| fail(&e, &[&manager]));
    let cluster = &cluster;
    futures::stream::iter(&names)
        .map(|name| async move {
            cluster
                .captains
                .delete(name, &DeleteParams::default())
                .await
                .unwrap_or_else(|e| panic!("cannot delete {name}: {e}"));
        })
        .buffer_unordered(32)
        .collect::<Vec<()>>()
        .await;
    eventually(
        "the watch sees every object deleted",
        load_timeout,
        || async {
            let gone = recorder
                .histories()
                .values()
                .filter(|h| h.deleted > 0)
                .count();
            if gone == LOAD_OBJECTS {
                Ok(())
            } else {
                Err(format!("{gone} of {LOAD_OBJECTS} deleted"))
            }
        },
    )
    .await
    .unwrap_or_else(|e| fail(&e, &[&manager]));
    // the last reconciles' lines reach the log
    tokio::time::sleep(Duration::from_secs(2)).await;

    let mut problems = integrity::check_histories(&recorder.histories(), &keys);
    let log = manager.log();
    let runs = takeover::reconciles(&log, CONTROLLER);
    // the backlog wakes every object at once; the controller works on a bounded number
    let bound = usize::from(operator_gen_runtime::controller::CONCURRENT_RECONCILES);
    let most = runs
        .as_ref()
        .map_or(0, |runs| integrity::most_at_once(runs));
    if most > bound {
        problems.push(format!(
            "{most} reconciles ran at once, above the controller's bound of {bound}"
        ));
    }
    let counts = match runs
        .map_err(|e| vec![e])
        .and_then(|runs| integrity::check_reconciles(&runs, &keys, 2))
    {
        Ok(counts) => counts,
        Err(more) => {
            problems.extend(more);
            integrity::ReconcileCounts::default()
        }
    };
    if !problems.is_empty() {
        fail(
            &format!("nothing may be lost under load:\n{}", problems.join("\n")),
            &[&manager],
        );
    }
    record_ran(Ran::OperatorEndToEnd);
    println!(
        "under load: {LOAD_OBJECTS} objects ({} present at start) each Ready once and deleted once, {} reconciles, at most {most} at once, {} failed ones retried, the watch listed again {} times",
        backlog.len(),
        counts.reconciles,
        counts.retried_errors,
        recorder.relists()
    );
}
