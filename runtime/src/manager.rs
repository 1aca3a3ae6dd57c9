//! The manager a generated `src/main.rs` runs: client, metrics and probe servers, leader
//! election on a Lease, controllers started once leading, graceful shutdown on SIGTERM/SIGINT.
//!
//! It is the counterpart of controller-runtime's manager in kubebuilder's `cmd/main.go`:
//!
//! - [`ManagerOptions`] carries the same flags (`--metrics-bind-address`,
//!   `--health-probe-bind-address`, `--leader-elect`, ...) and is flattened into the binary's
//!   clap parser;
//! - `/healthz` and `/readyz` answer on the probe address, `/metrics` (OpenMetrics) on the
//!   metrics address, with controller-runtime's reconcile metrics ([`Metrics`]); by default
//!   (`--metrics-secure`) over HTTPS with the certificate in `--metrics-cert-path` or a
//!   self-signed one, and only to callers whose bearer token passes a TokenReview and who may
//!   `get` the non-resource URL `/metrics` (a SubjectAccessReview): 401 without a valid token,
//!   403 without the permission;
//! - with `--leader-elect`, controllers start only after the `coordination.k8s.io/v1` Lease
//!   `<project>-leader` is held; losing it makes [`Manager::run`] return
//!   [`Error::LeadershipLost`], so the process exits non-zero and restarts as a follower;
//! - the first SIGTERM or SIGINT fires [`Manager::shutdown_signal`], waits up to
//!   `--graceful-shutdown-timeout` for the controllers, releases the Lease and returns `Ok`;
//!   a second signal exits the process at once with status 1;
//! - once the reconciles timed by [`Metrics`] have been quiet for a second after work, freed
//!   memory is returned to the system ([`release_freed_memory`]; [`Manager::new`] first sets the
//!   allocator up for it, [`tune_allocator`]), so that a burst of objects,
//!   reconciled and deleted, does not leave the process holding its pages.
//!
//! # Example: `src/main.rs`
//!
//! ```no_run
//! use std::sync::Arc;
//! use clap::Parser;
//! use operator_gen_runtime::futures::StreamExt;
//! use operator_gen_runtime::kube::{Api, runtime::{Controller, controller::Action, watcher}};
//! use operator_gen_runtime::k8s_openapi::api::core::v1::ConfigMap;
//! use operator_gen_runtime::manager::{Manager, ManagerOptions, Metrics};
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     manager: ManagerOptions,
//! }
//!
//! struct Ctx { client: operator_gen_runtime::kube::Client, metrics: Metrics }
//!
//! async fn reconcile(obj: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, operator_gen_runtime::kube::Error> {
//!     ctx.metrics.observe("configmap", async { Ok(Action::await_change()) }).await
//! }
//!
//! fn error_policy(_: Arc<ConfigMap>, _: &operator_gen_runtime::kube::Error, _: Arc<Ctx>) -> Action {
//!     Action::requeue(std::time::Duration::from_secs(5))
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let cli = Cli::parse();
//!     let mut mgr = Manager::new(cli.manager, "myproject").await?;
//!
//!     let ctx = Arc::new(Ctx { client: mgr.client(), metrics: mgr.metrics() });
//!     let api: Api<ConfigMap> = mgr.watched_api();
//!     let controller = Controller::new(api, watcher::Config::default())
//!         .graceful_shutdown_on(mgr.shutdown_signal())
//!         .run(reconcile, error_policy, ctx);
//!     mgr.add_controller_stream("configmap", controller);
//!     // +operator-gen:scaffold:controllers
//!
//!     mgr.run().await?;
//!     Ok(())
//! }
//! ```

#[cfg(test)]
mod fake_api;
mod handoff;
mod leader;
mod memory;
mod metrics;
mod options;
mod queue;
mod serving;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;

use crate::events::{Recorder, Reporter};
use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt};
use kube::{Api, Client, Resource};
use tokio::task::JoinSet;

pub use crate::error::{Error, Result};
pub use crate::serve::Health;
pub use memory::{release_freed_memory, tune_allocator};
pub use metrics::{Metrics, OPENMETRICS_CONTENT_TYPE, ReconcileResult, ReconcileTimer};
pub use options::{
    DEFAULT_WEBHOOK_CERT_PATH, DEFAULT_WEBHOOK_PORT, ManagerOptions, POD_NAMESPACE_ENV,
    SERVICE_ACCOUNT_NAMESPACE_FILE, WATCH_NAMESPACE_ENV, parse_bind_address, parse_duration,
    watch_namespace,
};
pub use prometheus_client;
pub use queue::{Processing, Queue};
pub use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::serve::authz::Authorizer;
use crate::serve::http::{self, Server};
use handoff::{Gate, Group};
pub use leader::JITTER_FACTOR;
use leader::{LeaderElector, Timings};

/// Runs controllers behind leader election, with probe and metrics servers; see the
/// [module docs](self) for the `main.rs` it is made for.
pub struct Manager {
    name: String,
    options: ManagerOptions,
    client: Client,
    metrics: Metrics,
    health: Health,
    metrics_tls: Option<tokio_rustls::TlsAcceptor>,
    webhooks: Option<crate::webhook::WebhookServer>,
    stop: CancellationToken,
    controllers: Vec<(String, BoxFuture<'static, ()>)>,
}

impl fmt::Debug for Manager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Manager")
            .field("name", &self.name)
            .field("options", &self.options)
            .field(
                "controllers",
                &self.controllers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager named `name` (the project name) with a client from the environment
    /// (`KUBECONFIG`, `~/.kube/config`, or the in-cluster service account). It first sets the
    /// process's allocator up for a long run ([`tune_allocator`]).
    pub async fn new(options: ManagerOptions, name: &str) -> Result<Self> {
        options.validate()?;
        memory::tune_allocator();
        let client = Client::try_default().await.map_err(Error::Client)?;
        Self::with_client(options, name, client)
    }

    /// A manager around an existing client (tests, custom client configuration).
    pub fn with_client(options: ManagerOptions, name: &str, client: Client) -> Result<Self> {
        if name.trim().is_empty() {
            return Err(Error::EmptyName);
        }
        options.validate()?;
        let metrics_tls = if options.metrics_secure && options.metrics_addr()?.is_some() {
            Some(serving::tls_acceptor(&options)?)
        } else {
            None
        };
        Ok(Self {
            name: name.trim().to_owned(),
            options,
            client,
            metrics: Metrics::new(),
            health: Health::default(),
            metrics_tls,
            webhooks: None,
            stop: CancellationToken::new(),
            controllers: Vec::new(),
        })
    }

    /// The manager's name (the project name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The settings the manager runs with.
    pub fn options(&self) -> &ManagerOptions {
        &self.options
    }

    /// The shard this replica set reconciles (`--shard-index` of `--shard-count`); give it to
    /// [`controller::generation_changed_in_shard`](crate::controller::generation_changed_in_shard).
    pub fn shard(&self) -> crate::shard::Shard {
        self.options.shard()
    }

    /// The Kubernetes client; cheap to clone.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The metrics handle served on `/metrics`; cheap to clone.
    pub fn metrics(&self) -> Metrics {
        self.metrics.clone()
    }

    /// The readiness state served on `/readyz`.
    pub fn health(&self) -> Health {
        self.health.clone()
    }

    /// An event recorder reporting as `controller`, instance `$POD_NAME` when set (see
    /// [`events`](crate::events)).
    pub fn recorder(&self, controller: &str) -> Recorder {
        let reporter = Reporter {
            controller: controller.to_owned(),
            instance: std::env::var("POD_NAME").ok().filter(|p| !p.is_empty()),
        };
        Recorder::new(self.client.clone(), reporter)
    }

    /// An `Api` for a namespaced kind over the watched namespace: `$WATCH_NAMESPACE` when set,
    /// else all namespaces.
    pub fn watched_api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        match watch_namespace() {
            Some(ns) => Api::namespaced(self.client.clone(), &ns),
            None => Api::all(self.client.clone()),
        }
    }

    /// A future that completes when the manager shuts down; pass it to kube-runtime's
    /// `Controller::graceful_shutdown_on`.
    pub fn shutdown_signal(&self) -> WaitForCancellationFutureOwned {
        self.stop.clone().cancelled_owned()
    }

    /// The token behind [`shutdown_signal`](Self::shutdown_signal); cancelling it shuts the
    /// manager down as a signal would.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Serves `server`'s webhooks on `--webhook-port` with the certificate in
    /// `--webhook-cert-path`, on every replica from the start (not only on the leader); `/readyz`
    /// answers 503 while it is not serving. A second call replaces the first server.
    pub fn add_webhook_server(&mut self, server: crate::webhook::WebhookServer) -> &mut Self {
        self.webhooks = Some(server);
        self
    }

    /// Adds a controller: a future started once the manager leads, which should run until
    /// [`shutdown_signal`](Self::shutdown_signal) fires.
    pub fn add_controller(
        &mut self,
        name: impl Into<String>,
        controller: impl Future<Output = ()> + Send + 'static,
    ) -> &mut Self {
        self.controllers.push((name.into(), controller.boxed()));
        self
    }

    /// Adds a controller given as the stream `Controller::run` returns; failed reconciles are
    /// logged at `warn`.
    pub fn add_controller_stream<T, E>(
        &mut self,
        name: impl Into<String>,
        stream: impl Stream<Item = std::result::Result<T, E>> + Send + 'static,
    ) -> &mut Self
    where
        T: fmt::Debug + Send + 'static,
        E: std::error::Error + Send + 'static,
    {
        let name = name.into();
        let label = name.clone();
        let fut = stream.for_each(move |item| {
            match item {
                Ok(obj) => tracing::debug!(controller = %label, object = ?obj, "reconciled"),
                Err(e) => tracing::warn!(controller = %label, error = %e, "reconcile failed"),
            }
            futures::future::ready(())
        });
        self.add_controller(name, fut)
    }

    /// Serves probes and metrics, waits for leadership if enabled, runs the controllers, and
    /// shuts down on SIGTERM/SIGINT or [`shutdown_token`](Self::shutdown_token).
    ///
    /// Returns `Ok` after a requested shutdown, and an error when a server cannot bind, when
    /// leadership is lost, or when a controller stops or panics on its own.
    pub async fn run(self) -> Result<()> {
        let Self {
            name,
            options,
            client,
            metrics,
            health,
            metrics_tls,
            webhooks,
            stop,
            controllers,
        } = self;

        let servers_stop = CancellationToken::new();
        let mut servers = JoinSet::new();
        let started = async {
            if let Some(addr) = options.health_probe_addr()? {
                let listener = http::bind("health-probe", addr).await?;
                tracing::info!(addr = %addr, "serving health probes on /healthz and /readyz");
                servers.spawn(http::serve(
                    listener,
                    Server::plain(health.clone()),
                    servers_stop.clone(),
                ));
            }
            if let Some(addr) = options.metrics_addr()? {
                let listener = http::bind("metrics", addr).await?;
                let secure = metrics_tls.is_some();
                tracing::info!(addr = %addr, secure, "serving metrics on /metrics");
                let server = Server {
                    routes: metrics.clone(),
                    auth: secure.then(|| Authorizer::new(client.clone())),
                    tls: metrics_tls,
                    serving: None,
                };
                servers.spawn(http::serve(listener, server, servers_stop.clone()));
            }
            if let Some(webhooks) = webhooks {
                let addr = options.webhook_addr();
                let paths = webhooks.paths();
                let bound = webhooks
                    .bind(addr, &options.webhook_certs(), Some(&health))
                    .await?;
                tracing::info!(addr = %addr, ?paths, "serving webhooks");
                servers.spawn(bound.run(servers_stop.clone()));
            }
            // freed memory goes back to the system when the reconciles have gone quiet
            servers.spawn(memory::release_when_idle(
                metrics.activity(),
                memory::QUIET,
                memory::release_freed_memory,
                servers_stop.clone(),
            ));
            spawn_signal_handler(stop.clone())
        }
        .await;

        let result = match started {
            Ok(()) => {
                health.set_ready(true);
                let elector = options.leader_elect.then(|| {
                    LeaderElector::new(
                        client,
                        options.lease_namespace(),
                        options.lease_name(&name),
                        leader::identity(),
                        Timings {
                            lease_duration: options.leader_election_lease_duration,
                            renew_deadline: options.leader_election_renew_deadline,
                            retry_period: options.leader_election_retry_period,
                        },
                        metrics,
                    )
                    .in_group(Group {
                        base: options.lease_base(&name),
                        shard: options.shard(),
                    })
                });
                run_controllers(elector, controllers, &stop, &options).await
            }
            Err(e) => Err(e),
        };

        health.set_ready(false);
        stop.cancel();
        servers_stop.cancel();
        while servers.join_next().await.is_some() {}
        match &result {
            Ok(()) => tracing::info!(manager = %name, "manager stopped"),
            Err(e) => tracing::error!(manager = %name, error = %e, "manager stopped"),
        }
        result
    }
}

/// Holds the Lease, then waits until no replica of an overlapping shard reconciles
/// ([`handoff`]); `false` when `stop` fired first.
async fn lead(elector: &mut LeaderElector, stop: &CancellationToken) -> bool {
    loop {
        if !elector.acquire(stop).await {
            tracing::info!("shutdown requested before the leader lease was acquired");
            return false;
        }
        match elector.gate(stop).await {
            Gate::Proceed => return true,
            Gate::Stopped => {
                tracing::info!("shutdown requested while waiting for overlapping shards");
                elector.release().await;
                return false;
            }
            // its own Lease was lost while it waited: it tries for it again
            Gate::Lost => {}
        }
    }
}

/// Leads (if electing), runs the controllers until `stop`, stops them gracefully, releases.
async fn run_controllers(
    mut elector: Option<LeaderElector>,
    controllers: Vec<(String, BoxFuture<'static, ()>)>,
    stop: &CancellationToken,
    options: &ManagerOptions,
) -> Result<()> {
    if let Some(e) = elector.as_mut()
        && !lead(e, stop).await
    {
        return Ok(());
    }

    let mut tasks = JoinSet::new();
    let mut names = HashMap::new();
    for (name, fut) in controllers {
        tracing::info!(controller = %name, "starting controller");
        let handle = tasks.spawn(fut);
        names.insert(handle.id(), name);
    }
    let name_of = |id: &tokio::task::Id| names.get(id).cloned().unwrap_or_default();

    let renew_stop = CancellationToken::new();
    let mut renew = Box::pin(async {
        match elector.as_mut() {
            Some(e) => e.hold(&renew_stop).await,
            None => {
                renew_stop.cancelled().await;
                Ok(())
            }
        }
    });

    // Run until a shutdown request, a lost lease, or a controller ending on its own.
    let mut outcome = Ok(());
    let mut lost = false;
    tokio::select! {
        // A controller ends soon after the shutdown signal (`graceful_shutdown_on`): when both
        // are ready, the signal decides, so a requested stop is never taken for a failure.
        biased;
        () = stop.cancelled() => tracing::info!("stopping controllers"),
        res = &mut renew => {
            lost = true;
            outcome = res.and(Ok(()));
        }
        Some(joined) = tasks.join_next_with_id() => {
            outcome = Err(match joined {
                Ok((id, ())) => Error::ControllerStopped(name_of(&id)),
                Err(e) => Error::ControllerPanicked(name_of(&e.id())),
            });
            stop.cancel();
        }
    }

    if lost {
        // Another replica may lead already: stop reconciling at once.
        tasks.shutdown().await;
        return outcome;
    }

    // Graceful stop: controllers see the shutdown signal; keep renewing meanwhile.
    let deadline = tokio::time::sleep(options.graceful_shutdown_timeout);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            joined = tasks.join_next_with_id() => match joined {
                None => break,
                Some(Ok((id, ()))) => tracing::info!(controller = %name_of(&id), "controller stopped"),
                Some(Err(e)) => {
                    let name = name_of(&e.id());
                    tracing::error!(controller = %name, error = %e, "controller failed while stopping");
                    if outcome.is_ok() && e.is_panic() {
                        outcome = Err(Error::ControllerPanicked(name));
                    }
                }
            },
            res = &mut renew => {
                tasks.shutdown().await;
                return res.and(outcome);
            }
            () = &mut deadline => {
                tracing::warn!(timeout = ?options.graceful_shutdown_timeout, "controllers did not stop in time; aborting them");
                tasks.shutdown().await;
                break;
            }
        }
    }

    renew_stop.cancel();
    let renewed = renew.await;
    if let Some(e) = elector.as_mut() {
        e.release().await;
    }
    renewed.and(outcome)
}

/// Cancels `stop` on the first SIGTERM/SIGINT and exits with status 1 on the second.
fn spawn_signal_handler(stop: CancellationToken) -> Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).map_err(Error::Signal)?;
        let mut int = signal(SignalKind::interrupt()).map_err(Error::Signal)?;
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
                () = stop.cancelled() => return,
            }
            tracing::info!("shutdown signal received; stopping (send it again to exit at once)");
            stop.cancel();
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            tracing::error!("second shutdown signal received; exiting");
            std::process::exit(1);
        });
    }
    #[cfg(not(unix))]
    {
        tokio::spawn(async move {
            tokio::select! {
                r = tokio::signal::ctrl_c() => if r.is_err() { return },
                () = stop.cancelled() => return,
            }
            tracing::info!("shutdown signal received; stopping (send it again to exit at once)");
            stop.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(1);
            }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fake_api::FakeApi;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;
    use tokio::sync::mpsc;

    fn options() -> ManagerOptions {
        ManagerOptions {
            metrics_bind_address: "127.0.0.1:0".into(),
            health_probe_bind_address: "127.0.0.1:0".into(),
            graceful_shutdown_timeout: Duration::from_secs(5),
            ..ManagerOptions::default()
        }
    }

    fn electing() -> ManagerOptions {
        ManagerOptions {
            leader_elect: true,
            leader_election_namespace: Some("ns".into()),
            leader_election_lease_duration: Duration::from_secs(1),
            leader_election_renew_deadline: Duration::from_millis(500),
            leader_election_retry_period: Duration::from_millis(100),
            ..options()
        }
    }

    /// A controller that reports its start on `started` and runs until the shutdown signal.
    fn controller(
        mgr: &Manager,
        started: mpsc::UnboundedSender<&'static str>,
        name: &'static str,
        stopped: Arc<AtomicBool>,
    ) -> impl Future<Output = ()> + Send + 'static {
        let signal = mgr.shutdown_signal();
        async move {
            let _ = started.send(name);
            signal.await;
            stopped.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn rejects_an_empty_name_and_bad_options() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let _guard = rt.enter();
        let client = FakeApi::default().client();
        assert!(matches!(
            Manager::with_client(options(), " ", client.clone()),
            Err(Error::EmptyName)
        ));
        let bad = options().health_probe_bind_address("nope");
        assert!(matches!(
            Manager::with_client(bad, "p", client),
            Err(Error::BindAddress { .. })
        ));
    }

    #[tokio::test]
    async fn runs_controllers_and_stops_them_on_shutdown() {
        let mut mgr =
            Manager::with_client(options(), "p", FakeApi::default().client()).expect("manager");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let stopped = Arc::new(AtomicBool::new(false));
        let c = controller(&mgr, tx, "c", stopped.clone());
        mgr.add_controller("c", c);
        let token = mgr.shutdown_token();
        let health = mgr.health();
        let run = tokio::spawn(mgr.run());
        assert_eq!(rx.recv().await, Some("c"));
        assert!(health.is_ready());
        token.cancel();
        let result = tokio::time::timeout(Duration::from_secs(5), run)
            .await
            .expect("stops")
            .expect("join");
        assert!(result.is_ok(), "{result:?}");
        assert!(
            stopped.load(Ordering::SeqCst),
            "controller saw the shutdown signal"
        );
        assert!(!health.is_ready());
    }

    /// A controller that ends as soon as the shutdown signal fires is a clean stop, however
    /// its end and the signal race (generated controllers use `graceful_shutdown_on`): here
    /// both are ready when the manager looks.
    #[tokio::test]
    async fn a_controller_ending_on_the_signal_is_a_clean_stop() {
        for _ in 0..20 {
            let mut mgr =
                Manager::with_client(options(), "p", FakeApi::default().client()).expect("manager");
            let token = mgr.shutdown_token();
            mgr.add_controller("c", async move { token.cancel() });
            let result = tokio::time::timeout(Duration::from_secs(5), mgr.run())
                .await
                .expect("stops");
            assert!(result.is_ok(), "{result:?}");
        }
    }

    #[tokio::test]
    async fn a_controller_that_returns_early_fails_the_manager() {
        let mut mgr =
            Manager::with_client(options(), "p", FakeApi::default().client()).expect("manager");
        mgr.add_controller("quitter", async {});
        let result = tokio::time::timeout(Duration::from_secs(5), mgr.run())
            .await
            .expect("stops");
        assert!(
            matches!(&result, Err(Error::ControllerStopped(n)) if n == "quitter"),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn a_stuck_controller_is_aborted_after_the_graceful_timeout() {
        let opts = ManagerOptions {
            graceful_shutdown_timeout: Duration::from_millis(200),
            ..options()
        };
        let mut mgr =
            Manager::with_client(opts, "p", FakeApi::default().client()).expect("manager");
        mgr.add_controller("stuck", std::future::pending());
        let token = mgr.shutdown_token();
        let run = tokio::spawn(mgr.run());
        tokio::time::sleep(Duration::from_millis(100)).await;
        token.cancel();
        let result = tokio::time::timeout(Duration::from_secs(3), run)
            .await
            .expect("stops")
            .expect("join");
        assert!(result.is_ok(), "{result:?}");
    }

    #[tokio::test]
    async fn a_follower_starts_its_controllers_only_after_the_leader_stops() {
        let api = FakeApi::default();
        let (tx, mut rx) = mpsc::unbounded_channel();

        let mut a = Manager::with_client(electing(), "p", api.client()).expect("manager a");
        let a_stopped = Arc::new(AtomicBool::new(false));
        let ca = controller(&a, tx.clone(), "a", a_stopped.clone());
        a.add_controller("c", ca);
        let a_token = a.shutdown_token();
        let a_run = tokio::spawn(a.run());
        assert_eq!(rx.recv().await, Some("a"));

        let mut b = Manager::with_client(electing(), "p", api.client()).expect("manager b");
        let b_health = b.health();
        let cb = controller(&b, tx, "b", Arc::new(AtomicBool::new(false)));
        b.add_controller("c", cb);
        let b_token = b.shutdown_token();
        let b_run = tokio::spawn(b.run());

        // b is ready (readiness does not wait for leadership) but does not reconcile
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(b_health.is_ready());
        assert!(
            rx.try_recv().is_err(),
            "b must not start controllers while a leads"
        );

        a_token.cancel();
        let a_result = tokio::time::timeout(Duration::from_secs(5), a_run)
            .await
            .expect("a stops")
            .expect("join");
        assert!(a_result.is_ok(), "{a_result:?}");
        assert!(a_stopped.load(Ordering::SeqCst));
        let next = tokio::time::timeout(Duration::from_secs(3), rx.recv())
            .await
            .expect("b takes over");
        assert_eq!(next, Some("b"));
        let holder = api
            .lease("ns", "p-leader")
            .and_then(|l| l.spec)
            .and_then(|s| s.holder_identity);
        assert!(holder.is_some_and(|h| !h.is_empty()));

        b_token.cancel();
        let b_result = tokio::time::timeout(Duration::from_secs(5), b_run)
            .await
            .expect("b stops")
            .expect("join");
        assert!(b_result.is_ok(), "{b_result:?}");
        let released = api
            .lease("ns", "p-leader")
            .and_then(|l| l.spec)
            .and_then(|s| s.holder_identity);
        assert_eq!(released, None, "b released the lease on shutdown");
    }

    /// A webhook server runs on a follower too, and is part of its readiness.
    #[tokio::test]
    async fn a_follower_serves_its_webhooks() {
        use k8s_openapi::api::core::v1::ConfigMap;
        struct Nothing;
        impl crate::webhook::Validator<ConfigMap> for Nothing {
            fn validate_create(
                &self,
                _: &ConfigMap,
            ) -> std::result::Result<crate::webhook::Warnings, crate::webhook::HookError>
            {
                Ok(Vec::new())
            }
        }
        let api = FakeApi::default();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut leader = Manager::with_client(electing(), "p", api.client()).expect("leader");
        let c = controller(&leader, tx, "leader", Arc::new(AtomicBool::new(false)));
        leader.add_controller("c", c);
        let leader_token = leader.shutdown_token();
        let leader_run = tokio::spawn(leader.run());
        assert_eq!(rx.recv().await, Some("leader"));

        let certs = tempfile::tempdir().expect("tempdir");
        let generated =
            rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("cert");
        std::fs::write(certs.path().join("tls.crt"), generated.cert.pem()).expect("write");
        std::fs::write(
            certs.path().join("tls.key"),
            generated.signing_key.serialize_pem(),
        )
        .expect("write");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let opts = electing()
            .webhook_port(port)
            .webhook_cert_path(certs.path());
        let mut follower = Manager::with_client(opts, "p", api.client()).expect("follower");
        let server = crate::webhook::WebhookServer::builder()
            .validator::<ConfigMap>(Nothing)
            .build()
            .expect("webhooks");
        follower.add_webhook_server(server);
        let health = follower.health();
        let token = follower.shutdown_token();
        let run = tokio::spawn(follower.run());
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !health.is_ready() {
            assert!(
                std::time::Instant::now() < deadline,
                "the follower never got ready"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok(),
            "the follower's webhook port accepts connections"
        );
        token.cancel();
        let result = tokio::time::timeout(Duration::from_secs(5), run)
            .await
            .expect("stops")
            .expect("join");
        assert!(result.is_ok(), "{result:?}");
        assert!(!health.is_ready());
        leader_token.cancel();
        let _ = leader_run.await;

        // without its certificate the manager does not start, naming the flag
        let empty = tempfile::tempdir().expect("tempdir");
        let mut mgr = Manager::with_client(
            options().webhook_port(port).webhook_cert_path(empty.path()),
            "p",
            api.client(),
        )
        .expect("manager");
        mgr.add_webhook_server(
            crate::webhook::WebhookServer::builder()
                .build()
                .expect("empty"),
        );
        let result = tokio::time::timeout(Duration::from_secs(5), mgr.run())
            .await
            .expect("stops");
        assert!(
            matches!(&result, Err(e @ Error::WebhookCert { .. }) if e.to_string().contains("--webhook-cert-path")),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn losing_the_lease_stops_the_manager_with_an_error() {
        let api = FakeApi::default();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut mgr = Manager::with_client(electing(), "p", api.client()).expect("manager");
        let c = controller(&mgr, tx, "c", Arc::new(AtomicBool::new(false)));
        mgr.add_controller("c", c);
        let run = tokio::spawn(mgr.run());
        assert_eq!(rx.recv().await, Some("c"));
        api.set_failing(true);
        let result = tokio::time::timeout(Duration::from_secs(5), run)
            .await
            .expect("stops")
            .expect("join");
        assert!(
            matches!(result, Err(Error::LeadershipLost { .. })),
            "{result:?}"
        );
    }
}
