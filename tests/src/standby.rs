//! A leader's death and its successor's first reconciles, with two managers of the runtime in
//! one process electing a leader on a real apiserver's Lease: each runs one controller of a
//! namespace's ConfigMaps (`generation_changed_from`), warm (its cache kept on standby, the
//! default) or cold (`Source::standby(false)`). The leader is killed (its task aborted: the
//! Lease is not released, as when a process dies), and the follower takes the Lease once it
//! expires. Shared by the warm-standby test and the `standby` benchmark.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use operator_gen_runtime::controller::generation_changed_from;
use operator_gen_runtime::manager::{Manager, ManagerOptions};
use operator_gen_runtime::watch::Source;

/// The leader election's timings: Lease duration, renew deadline, retry period.
pub const LEASE: Duration = Duration::from_secs(3);
/// See [`LEASE`].
pub const RENEW: Duration = Duration::from_millis(1500);
/// See [`LEASE`].
pub const RETRY: Duration = Duration::from_millis(500);

/// A manager's options electing a leader in `default` on a Lease of duration `lease`, renewed
/// and retried as [`RENEW`] and [`RETRY`] say, its metrics and probes on ports of the system's
/// choosing, waiting `grace` for its controllers to stop.
pub fn elected(lease: Duration, grace: Duration) -> ManagerOptions {
    let mut options = ManagerOptions::default()
        .metrics_bind_address("0")
        .health_probe_bind_address("0")
        .leader_elect(true)
        .leader_election_namespace("default");
    options.leader_election_lease_duration = lease;
    options.leader_election_renew_deadline = RENEW;
    options.leader_election_retry_period = RETRY;
    options.graceful_shutdown_timeout = grace;
    options
}

/// How long any one wait may last.
const PATIENCE: Duration = Duration::from_secs(300);

/// Creates the namespace `name` on the apiserver of `client`.
pub async fn create_namespace(client: &Client, name: &str) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.to_owned());
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("create the namespace");
}

/// Creates `namespace` and `count` ConfigMaps `cm-00000` ... in it, 16 requests at a time.
pub async fn create_objects(client: &Client, namespace: &str, count: usize) {
    create_namespace(client, namespace).await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    futures::stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            async move {
                let mut cm = ConfigMap::default();
                cm.metadata.name = Some(format!("cm-{i:05}"));
                cm.data = Some([("key".to_owned(), format!("value {i}"))].into());
                api.create(&PostParams::default(), &cm).await.map(|_| ())
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await
        .expect("create the ConfigMaps");
}

/// One manager: its task, its controller's cache, when its controller started (it leads), and
/// each reconcile's object and time.
pub struct Replica {
    task: tokio::task::JoinHandle<()>,
    store: Store<ConfigMap>,
    led: Arc<Mutex<Option<Instant>>>,
    reconciles: Arc<Mutex<Vec<(String, Instant)>>>,
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Replica {
    /// Starts a manager named `name` electing on the Lease `<name>-leader` in `default`, with
    /// one controller of `namespace`'s ConfigMaps, its cache warm on standby or not.
    pub fn start(client: &Client, name: &str, namespace: &str, warm: bool) -> Replica {
        let options = elected(LEASE, Duration::from_secs(1));
        let mut mgr = Manager::with_client(options, name, client.clone()).expect("a manager");
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
        let source = Source::new(api, watcher::Config::default()).standby(warm);
        let controller = generation_changed_from(source);
        let store = controller.store();
        let reconciles = Arc::new(Mutex::new(Vec::new()));
        let run = controller.graceful_shutdown_on(mgr.shutdown_signal()).run(
            |cm: Arc<ConfigMap>, seen: Arc<Mutex<Vec<(String, Instant)>>>| async move {
                seen.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((cm.name_any(), Instant::now()));
                Ok::<_, kube::Error>(Action::await_change())
            },
            |_, _, _| Action::await_change(),
            reconciles.clone(),
        );
        let led = Arc::new(Mutex::new(None));
        let leading = led.clone();
        mgr.add_controller("configmap", async move {
            *leading.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
            run.for_each(|_| std::future::ready(())).await;
        });
        let task = tokio::spawn(async move {
            if let Err(error) = mgr.run().await {
                eprintln!("manager stopped: {error}");
            }
        });
        Replica {
            task,
            store,
            led,
            reconciles,
        }
    }

    /// How many objects its cache holds.
    pub fn cached(&self) -> usize {
        self.store.len()
    }

    /// When its controller started, if it did.
    pub fn led(&self) -> Option<Instant> {
        *self.led.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The objects it reconciled, and when it first reconciled any.
    pub fn reconciled(&self) -> (BTreeSet<String>, Option<Instant>) {
        let all = self
            .reconciles
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let names = all.iter().map(|(name, _)| name.clone()).collect();
        (names, all.iter().map(|(_, at)| *at).min())
    }

    /// Kills it: its task is aborted, the Lease is left as it was.
    pub fn kill(&self) {
        self.task.abort();
    }
}

/// Waits up to [`PATIENCE`] for `done`; `Err(what)` when it never was.
pub async fn wait_for(what: &str, done: impl Fn() -> bool) -> Result<(), String> {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}

/// What one hand-over measured.
#[derive(Clone, Debug)]
pub struct Takeover {
    /// Objects the follower had cached just before the leader was killed.
    pub cached_before: usize,
    /// Objects the follower had reconciled just before the leader was killed.
    pub reconciled_before: usize,
    /// From the kill until the follower's controller started (it took the Lease).
    pub kill_to_lead: Duration,
    /// From taking the Lease until its first reconcile.
    pub lead_to_first: Duration,
    /// From the kill until its first reconcile.
    pub kill_to_first: Duration,
    /// From taking the Lease until it had reconciled every object.
    pub lead_to_all: Duration,
}

/// Runs a leader and then a follower of the manager `name` over `namespace`'s `objects`
/// ConfigMaps (already created), both warm or both cold; waits until the leader reconciled
/// them all and the follower (warm) cached them all, kills the leader, and times the follower's
/// takeover until it reconciled them all.
pub async fn takeover(
    client: &Client,
    name: &str,
    namespace: &str,
    objects: usize,
    warm: bool,
) -> Result<Takeover, String> {
    let leader = Replica::start(client, name, namespace, warm);
    wait_for("the leader's reconciles", || {
        leader.reconciled().0.len() == objects
    })
    .await?;
    let follower = Replica::start(client, name, namespace, warm);
    if warm {
        wait_for("the follower's cache", || follower.cached() == objects).await?;
    } else {
        // it has tried for the Lease and found it held
        tokio::time::sleep(RETRY * 2).await;
    }
    let cached_before = follower.cached();
    let reconciled_before = follower.reconciled().0.len();
    if follower.led().is_some() {
        return Err("the follower led while the leader lived".to_owned());
    }
    let killed = Instant::now();
    leader.kill();
    wait_for("the follower's reconciles", || {
        follower.reconciled().0.len() == objects
    })
    .await?;
    let all = Instant::now();
    let led = follower
        .led()
        .ok_or("the follower reconciled without leading")?;
    let first = follower.reconciled().1.ok_or("no reconcile")?;
    Ok(Takeover {
        cached_before,
        reconciled_before,
        kill_to_lead: led.duration_since(killed),
        lead_to_first: first.duration_since(led),
        kill_to_first: first.duration_since(killed),
        lead_to_all: all.duration_since(led),
    })
}
