//! The generated operator, end to end against a real kube-apiserver: a project scaffolded by
//! `init` and `create api`, with `make manifests` and `cargo build`, runs its manager binary as a
//! child process.
//!
//! - As `system:masters`: the sample gets the finalizer, a `Ready=True` condition and an event;
//!   the manager holds its Lease; deleting the sample runs the finalizer. A second replica waits
//!   (holds no Lease, reconciles nothing) until the first stops on SIGTERM, then takes over.
//! - As the generated ServiceAccount, bound only to what `kubectl kustomize config/default`
//!   yields from `config/rbac`: the same outcomes, so the generated RBAC is sufficient; with the
//!   `<plural>/status` rule removed the sample never becomes Ready and the log shows the
//!   forbidden error, so the test can fail.
//!
//! Generated projects share `target/generated-projects`. Without the control-plane binaries,
//! `make` or `kubectl` the tests report the skip (see `tools::skip_or_fail`); in CI they fail
//! instead.

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_tests::cli;
use operator_gen_tests::operator::{
    ManagerProcess, ManagerSettings, Project, log_field, scaffold_and_build, shell,
};
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

/// Polls `check` every 250 ms until it returns `Ok`, for at most `timeout`; on timeout the error
/// names `what` and the last reason `check` gave.
async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        match check().await {
            Ok(value) => return Ok(value),
            Err(reason) if Instant::now() >= deadline => {
                return Err(format!("{what}: not within {timeout:?}; last: {reason}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}

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
    async fn start(project: &Project) -> Cluster {
        let plane = ControlPlane::start()
            .await
            .expect("the control plane starts");
        let client = plane.client();
        let mut crds = Vec::new();
        for entry in std::fs::read_dir(project.dir.join("config/crd/bases")).expect("crd bases") {
            let text = std::fs::read_to_string(entry.expect("dir entry").path()).expect("crd");
            let crd: CustomResourceDefinition = serde_saphyr::from_str(&text).expect("crd yaml");
            crds.push(crd);
        }
        assert!(!crds.is_empty(), "make manifests wrote no CRD");
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

    /// The Lease's holder and renew time.
    async fn lease(&self) -> Result<(String, Option<k8s_openapi::jiff::Timestamp>), String> {
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

    /// Waits until the object `name` carries the finalizer and `Ready=True`, and an
    /// events.k8s.io/v1 Event from the controller is about it.
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
                if ready(&obj) {
                    Ok(())
                } else {
                    Err(format!("status: {}", obj.data["status"]))
                }
            },
        )
        .await
        .unwrap_or_else(|e| fail(&e, &[manager]));
        self.wait_event(name, "Reconciled", manager).await;
    }

    async fn wait_event(&self, name: &str, reason: &str, manager: &ManagerProcess) {
        let events: Api<Event> = Api::namespaced(self.client.clone(), SAMPLE_NAMESPACE);
        eventually(
            &format!("a {reason} event about {name}"),
            TIMEOUT,
            || async {
                let list = events
                    .list(&ListParams::default())
                    .await
                    .map_err(|e| e.to_string())?;
                let found = list.items.iter().any(|e| {
                    let about = e.regarding.as_ref();
                    about.and_then(|r| r.name.as_deref()) == Some(name)
                        && about.and_then(|r| r.kind.as_deref()) == Some("Captain")
                        && e.reason.as_deref() == Some(reason)
                        && e.reporting_controller.as_deref() == Some(CONTROLLER)
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
        self.wait_event(name, "Deleting", manager).await;
    }

    fn manager_settings(&self, project: &Project, kubeconfig: &Path, pod: &str) -> ManagerSettings {
        ManagerSettings {
            binary: project.manager.clone(),
            kubeconfig: kubeconfig.to_owned(),
            pod_name: pod.to_owned(),
            pod_namespace: SYSTEM_NAMESPACE.to_owned(),
            log: self.plane.dir().join(format!("{pod}.log")),
        }
    }
}

fn ready(obj: &DynamicObject) -> bool {
    obj.data["status"]["conditions"]
        .as_array()
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
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

/// Scaffolds and builds the project, or `None` when `make` is missing outside CI.
fn build_project(parent: &Path) -> Option<Project> {
    if !cli::require_tool("make", &["--version"], cli::INSTALL_MAKE) {
        return None;
    }
    Some(scaffold_and_build(parent, PROJECT, API_ARGS))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_operator_reconciles_and_a_second_replica_waits_for_the_lease() {
    require_assets!();
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(project) = build_project(tmp.path()) else {
        return;
    };
    let cluster = Cluster::start(&project).await;
    cluster.create_namespace(SYSTEM_NAMESPACE).await;
    let admin = cluster.plane.kubeconfig().to_owned();

    let mut first = ManagerProcess::start(&cluster.manager_settings(&project, &admin, "replica-a"));
    cluster.create_sample(&project, "captain-sample").await;
    let leader = cluster.wait_leader("replica-a", &first).await;
    cluster.wait_reconciled("captain-sample", &first).await;
    cluster.delete_and_wait_gone("captain-sample", &first).await;

    // A second replica: it runs (serves metrics as a backup) but waits for the Lease.
    let second = ManagerProcess::start(&cluster.manager_settings(&project, &admin, "replica-b"));
    eventually("the second replica is a backup", TIMEOUT, || async {
        let status = leader_status(&second)?;
        let log = second.log();
        if status == 0.0 && log.contains("attempting to acquire leader lease") {
            Ok(())
        } else {
            Err(format!("leader status {status}"))
        }
    })
    .await
    .unwrap_or_else(|e| fail(&e, &[&first, &second]));
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
    cluster
        .delete_and_wait_gone("captain-second", &second)
        .await;
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
            user: Some(format!(
                "system:serviceaccount:{SYSTEM_NAMESPACE}:{SERVICE_ACCOUNT}"
            )),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_rbac_is_sufficient_and_necessary() {
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
    let cluster = Cluster::start(&project).await;
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

    // With exactly the generated RBAC, the operator does everything.
    let mut manager =
        ManagerProcess::start(&cluster.manager_settings(&project, &kubeconfig, "rbac-a"));
    cluster.create_sample(&project, "captain-sample").await;
    cluster.wait_leader("rbac-a", &manager).await;
    cluster.wait_reconciled("captain-sample", &manager).await;
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
            if ready(&obj) {
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
    record_ran(Ran::OperatorEndToEnd);
}
