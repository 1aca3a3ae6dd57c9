//! Prometheus metrics: the manager's registry and controller-runtime's reconcile and
//! work-queue metrics.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use kube::runtime::controller::Action;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::memory::Activity;
use super::queue::{QUEUE_BUCKETS, Queue, Series};
use crate::error::{Error, Result};

/// The content type of [`Metrics::encode`]'s output.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// controller-runtime's `controller_runtime_reconcile_time_seconds` buckets.
const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// How one reconcile ended; the `result` label of `controller_runtime_reconcile_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReconcileResult {
    /// The reconciler returned `Ok(Action::await_change())`.
    Success,
    /// The reconciler asked to be called again right away.
    Requeue,
    /// The reconciler returned `Ok(Action::requeue(after))`.
    RequeueAfter,
    /// The reconciler returned an error.
    Error,
}

impl ReconcileResult {
    /// The label value controller-runtime uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Requeue => "requeue",
            Self::RequeueAfter => "requeue_after",
            Self::Error => "error",
        }
    }

    /// Classifies a kube-runtime reconcile result.
    pub fn of<E>(result: &Result<Action, E>) -> Self {
        match result {
            Err(_) => Self::Error,
            Ok(action) if *action == Action::await_change() => Self::Success,
            Ok(_) => Self::RequeueAfter,
        }
    }
}

impl fmt::Display for ReconcileResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerResultLabels {
    controller: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NameLabels {
    name: String,
}

/// The labels of the work-queue metrics: controller-runtime names the queue after its
/// controller, in both.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    name: String,
    controller: String,
}

/// `workqueue_depth`'s labels; `priority` is empty, as for controller-runtime's queue without
/// priorities.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DepthLabels {
    name: String,
    controller: String,
    priority: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;
type SecondsGauge = Gauge<f64, AtomicU64>;

fn reconcile_histogram() -> Histogram {
    Histogram::new(RECONCILE_TIME_BUCKETS)
}

fn queue_histogram() -> Histogram {
    Histogram::new(QUEUE_BUCKETS)
}

/// controller-runtime's work-queue metric families.
struct QueueFamilies {
    depth: Family<DepthLabels, Gauge>,
    adds: Family<QueueLabels, Counter>,
    retries: Family<QueueLabels, Counter>,
    queue_duration: HistogramFamily<QueueLabels>,
    work_duration: HistogramFamily<QueueLabels>,
    unfinished: Family<QueueLabels, SecondsGauge>,
    longest: Family<QueueLabels, SecondsGauge>,
}

impl QueueFamilies {
    /// The families, registered in `registry` under controller-runtime's names and help texts.
    fn register(registry: &mut Registry) -> Self {
        let families = Self {
            depth: Family::default(),
            adds: Family::default(),
            retries: Family::default(),
            queue_duration: Family::new_with_constructor(queue_histogram as fn() -> Histogram),
            work_duration: Family::new_with_constructor(queue_histogram as fn() -> Histogram),
            unfinished: Family::default(),
            longest: Family::default(),
        };
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue by workqueue and priority",
            families.depth.clone(),
        );
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            families.adds.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            families.queue_duration.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            families.work_duration.clone(),
        );
        registry.register(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
            families.unfinished.clone(),
        );
        registry.register(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            families.longest.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)",
            families.retries.clone(),
        );
        families
    }

    /// The series of the queue of `controller`.
    fn series(&self, controller: &str) -> Series {
        let labels = QueueLabels {
            name: controller.to_owned(),
            controller: controller.to_owned(),
        };
        let depth = DepthLabels {
            name: controller.to_owned(),
            controller: controller.to_owned(),
            priority: String::new(),
        };
        Series {
            depth: self.depth.get_or_create(&depth).clone(),
            adds: self.adds.get_or_create(&labels).clone(),
            retries: self.retries.get_or_create(&labels).clone(),
            queue_duration: self.queue_duration.get_or_create(&labels).clone(),
            work_duration: self.work_duration.get_or_create(&labels).clone(),
            unfinished: self.unfinished.get_or_create(&labels).clone(),
            longest: self.longest.get_or_create(&labels).clone(),
        }
    }
}

struct Inner {
    registry: Mutex<Registry>,
    reconcile_total: Family<ControllerResultLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_time: HistogramFamily<ControllerLabels>,
    active_workers: Family<ControllerLabels, Gauge>,
    leader_status: Family<NameLabels, Gauge>,
    queue_families: QueueFamilies,
    queues: Mutex<BTreeMap<String, Queue>>,
    activity: Arc<Activity>,
}

/// A cheap-clone handle on the manager's Prometheus registry and reconcile metrics.
///
/// Put it in the controller's context and time each reconcile:
///
/// ```
/// # use operator_gen_runtime::manager::Metrics;
/// # use operator_gen_runtime::kube::runtime::controller::Action;
/// let metrics = Metrics::new();
/// let timer = metrics.reconcile_started("memcached");
/// let result: Result<Action, std::io::Error> = Ok(Action::await_change());
/// timer.finish_with(&result);
/// assert!(metrics.encode().unwrap().contains("controller_runtime_reconcile_total"));
/// ```
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh registry with the reconcile metrics registered.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let reconcile_total = Family::<ControllerResultLabels, Counter>::default();
        let reconcile_errors = Family::<ControllerLabels, Counter>::default();
        let reconcile_time: HistogramFamily<ControllerLabels> =
            Family::new_with_constructor(reconcile_histogram as fn() -> Histogram);
        let active_workers = Family::<ControllerLabels, Gauge>::default();
        let leader_status = Family::<NameLabels, Gauge>::default();
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            reconcile_total.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            reconcile_errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            active_workers.clone(),
        );
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
            leader_status.clone(),
        );
        let queue_families = QueueFamilies::register(&mut registry);
        Self {
            inner: Arc::new(Inner {
                registry: Mutex::new(registry),
                reconcile_total,
                reconcile_errors,
                reconcile_time,
                active_workers,
                leader_status,
                queue_families,
                queues: Mutex::default(),
                activity: Arc::default(),
            }),
        }
    }

    /// The reconciles timed by this handle, started and ended.
    pub(crate) fn activity(&self) -> Arc<Activity> {
        self.inner.activity.clone()
    }

    /// Starts timing one reconcile of `controller`; finish it with [`ReconcileTimer::finish`].
    /// Until the timer is finished or dropped, the reconcile counts as running: in
    /// `controller_runtime_active_workers{controller}`, and for the manager, which returns
    /// freed memory only when none is (see [`Manager::run`](super::Manager::run)).
    pub fn reconcile_started(&self, controller: &str) -> ReconcileTimer {
        self.inner.activity.started();
        self.workers(controller).inc();
        ReconcileTimer {
            metrics: self.clone(),
            controller: controller.to_owned(),
            started: Instant::now(),
        }
    }

    /// Runs one reconcile future and records its duration and result.
    ///
    /// Its start and end are logged at `debug` (`reconcile started`, `reconcile finished` with
    /// the result and the time taken), so `RUST_LOG=info,operator_gen_runtime=debug` shows
    /// when, and on which replica, each reconcile ran.
    pub async fn observe<E>(
        &self,
        controller: &str,
        reconcile: impl Future<Output = Result<Action, E>>,
    ) -> Result<Action, E> {
        tracing::debug!(controller, "reconcile started");
        let timer = self.reconcile_started(controller);
        let result = reconcile.await;
        let elapsed = timer.started.elapsed();
        tracing::debug!(
            controller,
            result = ReconcileResult::of(&result).as_str(),
            ?elapsed,
            "reconcile finished"
        );
        timer.finish_with(&result);
        result
    }

    /// Records one finished reconcile.
    pub fn record(&self, controller: &str, result: ReconcileResult, seconds: f64) {
        let controller = controller.to_owned();
        self.inner
            .reconcile_total
            .get_or_create(&ControllerResultLabels {
                controller: controller.clone(),
                result: result.as_str().to_owned(),
            })
            .inc();
        if result == ReconcileResult::Error {
            self.inner
                .reconcile_errors
                .get_or_create(&ControllerLabels {
                    controller: controller.clone(),
                })
                .inc();
        }
        self.inner
            .reconcile_time
            .get_or_create(&ControllerLabels { controller })
            .observe(seconds);
    }

    /// `controller_runtime_active_workers{controller}`.
    fn workers(&self, controller: &str) -> Gauge {
        self.inner
            .active_workers
            .get_or_create(&ControllerLabels {
                controller: controller.to_owned(),
            })
            .clone()
    }

    /// Sets `leader_election_master_status{name}`.
    pub(crate) fn set_leader(&self, lease: &str, leader: bool) {
        self.inner
            .leader_status
            .get_or_create(&NameLabels {
                name: lease.to_owned(),
            })
            .set(i64::from(leader));
    }

    /// The work queue of `controller`, made on first use (its metrics are served from then
    /// on, at zero); every call with the same name gives the same queue. Give it to the
    /// controller's [`Source::queue`](crate::watch::Source::queue) and
    /// [`Retries::in_queue`](crate::controller::Retries::in_queue).
    pub fn queue(&self, controller: &str) -> Queue {
        let mut queues = self
            .inner
            .queues
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        queues
            .entry(controller.to_owned())
            .or_insert_with(|| Queue::new(controller, self.inner.queue_families.series(controller)))
            .clone()
    }

    /// Locks the registry so that the operator can register its own metrics.
    pub fn registry(&self) -> MutexGuard<'_, Registry> {
        self.inner
            .registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The registry in OpenMetrics text format ([`OPENMETRICS_CONTENT_TYPE`]).
    pub fn encode(&self) -> Result<String> {
        for queue in self
            .inner
            .queues
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
        {
            queue.refresh();
        }
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry())
            .map_err(Error::Encode)?;
        Ok(out)
    }
}

/// Times one reconcile; dropping it without [`finish`](Self::finish) records nothing (but
/// ends the reconcile as the manager's idle watch counts them).
#[derive(Debug)]
#[must_use = "call finish or finish_with to record the reconcile"]
pub struct ReconcileTimer {
    metrics: Metrics,
    controller: String,
    started: Instant,
}

impl ReconcileTimer {
    /// Records the reconcile with an explicit result.
    pub fn finish(self, result: ReconcileResult) {
        let seconds = self.started.elapsed().as_secs_f64();
        self.metrics.record(&self.controller, result, seconds);
    }

    /// Records the reconcile, classifying a kube-runtime result.
    pub fn finish_with<E>(self, result: &Result<Action, E>) {
        self.finish(ReconcileResult::of(result));
    }
}

impl Drop for ReconcileTimer {
    fn drop(&mut self) {
        self.metrics.workers(&self.controller).dec();
        self.metrics.inner.activity.ended();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn encoding_contains_reconcile_metrics_after_a_reconcile() {
        let m = Metrics::new();
        m.reconcile_started("memcached")
            .finish(ReconcileResult::Success);
        let err: Result<Action, &str> = Err("boom");
        m.reconcile_started("memcached").finish_with(&err);
        let text = m.encode().expect("encode");
        assert!(
            text.contains(
                r#"controller_runtime_reconcile_total{controller="memcached",result="success"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"controller_runtime_reconcile_total{controller="memcached",result="error"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"controller_runtime_reconcile_errors_total{controller="memcached"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"controller_runtime_reconcile_time_seconds_count{controller="memcached"} 2"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"controller_runtime_reconcile_time_seconds_bucket{le="0.005",controller="memcached"}"#),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn active_workers_count_the_running_reconciles() {
        let m = Metrics::new();
        let first = m.reconcile_started("memcached");
        let second = m.reconcile_started("memcached");
        let running = m.encode().expect("encode");
        assert!(
            running.contains(r#"controller_runtime_active_workers{controller="memcached"} 2"#),
            "{running}"
        );
        first.finish(ReconcileResult::Success);
        drop(second);
        let idle = m.encode().expect("encode");
        assert!(
            idle.contains(r#"controller_runtime_active_workers{controller="memcached"} 0"#),
            "{idle}"
        );
    }

    #[test]
    fn result_classification() {
        let ok: Result<Action, ()> = Ok(Action::await_change());
        assert_eq!(ReconcileResult::of(&ok), ReconcileResult::Success);
        let later: Result<Action, ()> = Ok(Action::requeue(Duration::from_secs(300)));
        assert_eq!(ReconcileResult::of(&later), ReconcileResult::RequeueAfter);
        let err: Result<Action, ()> = Err(());
        assert_eq!(ReconcileResult::of(&err), ReconcileResult::Error);
    }

    #[tokio::test]
    async fn observe_records_and_passes_through() {
        let m = Metrics::new();
        let out = m
            .observe("c", async {
                Ok::<_, ()>(Action::requeue(Duration::from_secs(1)))
            })
            .await;
        assert!(out.is_ok());
        let text = m.encode().expect("encode");
        assert!(text.contains(r#"result="requeue_after"} 1"#), "{text}");
    }

    #[test]
    fn own_metrics_can_be_registered() {
        let m = Metrics::new();
        let c = Counter::<u64>::default();
        m.registry()
            .register("memcached_pods_created", "Pods created", c.clone());
        c.inc();
        assert!(
            m.encode()
                .expect("encode")
                .contains("memcached_pods_created_total 1")
        );
    }
}
