//! controller-runtime's work-queue metrics for one controller: the object keys waiting to be
//! reconciled, as kube's controller queues them.
//!
//! kube's controller keeps its queue to itself, so the queue is followed from its two ends: the
//! trigger stream of a controller made by
//! [`generation_changed_from`](crate::controller::generation_changed_from) with
//! [`Source::queue`](crate::watch::Source::queue) adds the keys it wakes the controller for, and
//! [`Retries::in_queue`](crate::controller::Retries::in_queue) marks the start and end of each
//! reconcile and counts its requeues. Like kube's scheduler (and client-go's work queue), a key
//! waits once however often it is triggered, and a key triggered while its reconcile runs waits
//! for the next one.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;

use crate::tables::shrink_emptied;
use xxhash_rust::xxh3::xxh3_64;

/// controller-runtime's work-queue histogram buckets: 10 ns to 1000 s, by tens.
pub(super) const QUEUE_BUCKETS: [f64; 12] = [
    1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0,
];

/// The metrics of one queue, each with the labels `name` and `controller` (the controller's
/// name), `workqueue_depth` also with `priority=""`.
pub(super) struct Series {
    pub(super) depth: Gauge,
    pub(super) adds: Counter,
    pub(super) retries: Counter,
    pub(super) queue_duration: Histogram,
    pub(super) work_duration: Histogram,
    pub(super) unfinished: Gauge<f64, AtomicU64>,
    pub(super) longest: Gauge<f64, AtomicU64>,
}

/// Where a key is.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// Waiting for its reconcile since it was first triggered.
    Waiting(Instant),
    /// In its reconcile since `since`; `again`: triggered again meanwhile, first at that time.
    Running {
        since: Instant,
        again: Option<Instant>,
    },
}

impl Slot {
    /// Forgets the wait of a key whose object is gone.
    fn forget(&mut self) -> Forgotten {
        match self {
            Slot::Waiting(_) => Forgotten::Wait,
            Slot::Running { again, .. } => match again.take() {
                Some(_) => Forgotten::Again,
                None => Forgotten::Nothing,
            },
        }
    }
}

/// What [`Slot::forget`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forgotten {
    /// The key did not wait.
    Nothing,
    /// The key waited for a reconcile: its slot goes.
    Wait,
    /// The key was triggered again while its reconcile runs: that trigger is dropped, the slot
    /// stays.
    Again,
}

struct Inner {
    controller: String,
    /// By [`key_digest`]: a waiting object costs its slot and 8 bytes, whatever its name.
    keys: Mutex<HashMap<u64, Slot>>,
    series: Series,
}

/// The work queue of one controller, for its metrics (`workqueue_depth`,
/// `workqueue_adds_total`, `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
/// `workqueue_retries_total`, `workqueue_unfinished_work_seconds`,
/// `workqueue_longest_running_processor_seconds`); cheap to clone. Get it from
/// [`Metrics::queue`](super::Metrics::queue).
#[derive(Clone)]
pub struct Queue {
    inner: Arc<Inner>,
}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("controller", &self.inner.controller)
            .field("depth", &self.depth())
            .finish_non_exhaustive()
    }
}

impl Queue {
    pub(super) fn new(controller: &str, series: Series) -> Self {
        Self {
            inner: Arc::new(Inner {
                controller: controller.to_owned(),
                keys: Mutex::default(),
                series,
            }),
        }
    }

    /// The controller's name, the `name` and `controller` labels.
    pub fn controller(&self) -> &str {
        &self.inner.controller
    }

    fn keys(&self) -> MutexGuard<'_, HashMap<u64, Slot>> {
        self.inner
            .keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A trigger of `key` (`namespace/name`): it waits for a reconcile, unless it waits already.
    /// Counted in `workqueue_adds_total` and `workqueue_depth` when it did not wait.
    pub fn add(&self, key: &str) {
        let now = Instant::now();
        let key = key_digest(key);
        let mut keys = self.keys();
        let added = match keys.get_mut(&key) {
            None => {
                keys.insert(key, Slot::Waiting(now));
                true
            }
            Some(Slot::Running { again, .. }) if again.is_none() => {
                *again = Some(now);
                true
            }
            Some(_) => false,
        };
        if added {
            self.inner.series.adds.inc();
            self.inner.series.depth.inc();
        }
    }

    /// `key` no longer waits: its object is gone, and kube's controller drops its request.
    pub fn forget(&self, key: &str) {
        let key = key_digest(key);
        let mut keys = self.keys();
        let forgotten = keys.get_mut(&key).map_or(Forgotten::Nothing, Slot::forget);
        if forgotten == Forgotten::Wait {
            keys.remove(&key);
            shrink_emptied(&mut keys);
        }
        if forgotten != Forgotten::Nothing {
            self.inner.series.depth.dec();
        }
    }

    /// Every waiting key but those of `kept` no longer waits (after a relist, `kept` are the
    /// keys of the objects listed).
    pub fn forget_all_but<I>(&self, kept: I)
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let kept: HashSet<u64> = kept.into_iter().map(|k| key_digest(k.as_ref())).collect();
        self.forget_where(|k| !kept.contains(&k));
    }

    /// The waiting keys for which `gone` holds no longer wait.
    fn forget_where(&self, mut gone: impl FnMut(u64) -> bool) {
        let mut keys = self.keys();
        let mut forgotten = 0i64;
        keys.retain(|&key, slot| {
            if !gone(key) {
                return true;
            }
            let forgot = slot.forget();
            if forgot != Forgotten::Nothing {
                forgotten += 1;
            }
            forgot != Forgotten::Wait
        });
        shrink_emptied(&mut keys);
        self.inner.series.depth.dec_by(forgotten);
    }

    /// The reconcile of `key` starts: it leaves the queue (its wait observed in
    /// `workqueue_queue_duration_seconds`). A key that did not wait, one requeued by its last
    /// reconcile or triggered past the queue (by `owns` or `watches`), is counted in
    /// `workqueue_adds_total` now. Finish the returned [`Processing`] when the reconcile ends.
    pub fn start(&self, key: &str) -> Processing {
        let now = Instant::now();
        let key = key_digest(key);
        let mut keys = self.keys();
        match keys.get(&key).copied() {
            Some(Slot::Waiting(since)) => {
                self.inner.series.depth.dec();
                let waited = now.saturating_duration_since(since).as_secs_f64();
                self.inner.series.queue_duration.observe(waited);
                keys.insert(
                    key,
                    Slot::Running {
                        since: now,
                        again: None,
                    },
                );
            }
            Some(Slot::Running { again, .. }) => {
                keys.insert(key, Slot::Running { since: now, again });
            }
            None => {
                self.inner.series.adds.inc();
                keys.insert(
                    key,
                    Slot::Running {
                        since: now,
                        again: None,
                    },
                );
            }
        }
        Processing {
            queue: self.clone(),
            key,
            since: now,
            done: false,
        }
    }

    /// A reconcile asked to be run again after a while (an error's backoff, a requeue after):
    /// `workqueue_retries_total`.
    pub fn retried(&self) {
        self.inner.series.retries.inc();
    }

    /// The keys waiting: `workqueue_depth`.
    pub fn depth(&self) -> i64 {
        self.inner.series.depth.get()
    }

    /// Sets `workqueue_unfinished_work_seconds` (the time the running reconciles have run so
    /// far, summed) and `workqueue_longest_running_processor_seconds` (the longest of them) to
    /// their values now.
    pub(super) fn refresh(&self) {
        let now = Instant::now();
        let (mut total, mut longest) = (0.0f64, 0.0f64);
        for slot in self.keys().values() {
            if let Slot::Running { since, .. } = slot {
                let ran = now.saturating_duration_since(*since).as_secs_f64();
                total += ran;
                longest = longest.max(ran);
            }
        }
        self.inner.series.unfinished.set(total);
        self.inner.series.longest.set(longest);
    }

    fn finish(&self, key: u64, since: Instant, requeue: bool) {
        let ran = since.elapsed().as_secs_f64();
        self.inner.series.work_duration.observe(ran);
        if requeue {
            self.retried();
        }
        let mut keys = self.keys();
        match keys.get(&key).copied() {
            Some(Slot::Running {
                again: Some(first), ..
            }) => {
                keys.insert(key, Slot::Waiting(first));
            }
            Some(Slot::Running { again: None, .. }) => {
                keys.remove(&key);
                shrink_emptied(&mut keys);
            }
            _ => {}
        }
    }
}

/// One reconcile of a key in its [`Queue`]; dropped unfinished (a reconcile cancelled at
/// shutdown), it ends as [`finish`](Self::finish) with no requeue.
#[derive(Debug)]
#[must_use = "call finish when the reconcile ends"]
pub struct Processing {
    queue: Queue,
    key: u64,
    since: Instant,
    done: bool,
}

impl Processing {
    /// The reconcile ended: its time goes to `workqueue_work_duration_seconds`; `requeue`: it
    /// asked to run again after a while (`workqueue_retries_total`). A key triggered while it
    /// ran waits again, from its first trigger.
    pub fn finish(mut self, requeue: bool) {
        self.done = true;
        self.queue.finish(self.key, self.since, requeue);
    }
}

impl Drop for Processing {
    fn drop(&mut self) {
        if !self.done {
            self.queue.finish(self.key, self.since, false);
        }
    }
}

/// A key's digest, which the queue keeps instead of the key.
fn key_digest(key: &str) -> u64 {
    xxh3_64(key.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::super::Metrics;

    /// The sample lines of `text` for the queue `memcached`.
    fn lines(text: &str) -> Vec<&str> {
        text.lines()
            .filter(|l| l.starts_with("workqueue_") && l.contains(r#"name="memcached""#))
            .collect()
    }

    #[test]
    fn a_queue_serves_controller_runtimes_series_from_the_start() {
        let m = Metrics::new();
        let _queue = m.queue("memcached");
        let text = m.encode().expect("encode");
        let served = lines(&text);
        for series in [
            r#"workqueue_depth{name="memcached",controller="memcached",priority=""} 0"#,
            r#"workqueue_adds_total{name="memcached",controller="memcached"} 0"#,
            r#"workqueue_retries_total{name="memcached",controller="memcached"} 0"#,
            r#"workqueue_unfinished_work_seconds{name="memcached",controller="memcached"} 0.0"#,
            r#"workqueue_longest_running_processor_seconds{name="memcached",controller="memcached"} 0.0"#,
            r#"workqueue_queue_duration_seconds_count{name="memcached",controller="memcached"} 0"#,
            r#"workqueue_work_duration_seconds_bucket{le="1e-8",name="memcached",controller="memcached"} 0"#,
            r#"workqueue_work_duration_seconds_bucket{le="1000.0",name="memcached",controller="memcached"} 0"#,
        ] {
            assert!(served.contains(&series), "{series} not in\n{text}");
        }
        assert!(
            text.contains("# TYPE workqueue_depth gauge")
                && text.contains("# TYPE workqueue_adds counter")
                && text.contains("# TYPE workqueue_queue_duration_seconds histogram"),
            "{text}"
        );
    }

    #[test]
    fn keys_wait_once_and_leave_when_started_or_gone() {
        let m = Metrics::new();
        let q = m.queue("memcached");
        q.add("ns/a");
        q.add("ns/a");
        q.add("ns/b");
        q.add("ns/c");
        assert_eq!(q.depth(), 3, "a triggered twice waits once");
        q.forget("ns/c");
        assert_eq!(q.depth(), 2, "c deleted before its reconcile");
        let a = q.start("ns/a");
        assert_eq!(q.depth(), 1);
        q.add("ns/a");
        q.add("ns/a");
        assert_eq!(
            q.depth(),
            2,
            "a triggered while running waits once for the next run"
        );
        let text = m.encode().expect("encode");
        let unfinished =
            r#"workqueue_unfinished_work_seconds{name="memcached",controller="memcached"} "#;
        assert!(
            text.lines()
                .any(|l| l.starts_with(unfinished) && !l.ends_with(" 0.0")),
            "a running reconcile counts as unfinished work:\n{text}"
        );
        a.finish(true);
        assert_eq!(q.depth(), 2, "a waits again after its run");
        q.forget("ns/b");
        assert_eq!(q.depth(), 1);
        q.start("ns/a").finish(false);
        // a requeued key's next reconcile passes no trigger: an add, no wait observed
        drop(q.start("ns/z"));
        assert_eq!(q.depth(), 0);
        let text = m.encode().expect("encode");
        for series in [
            r#"workqueue_adds_total{name="memcached",controller="memcached"} 5"#,
            r#"workqueue_retries_total{name="memcached",controller="memcached"} 1"#,
            r#"workqueue_queue_duration_seconds_count{name="memcached",controller="memcached"} 2"#,
            r#"workqueue_work_duration_seconds_count{name="memcached",controller="memcached"} 3"#,
            r#"workqueue_unfinished_work_seconds{name="memcached",controller="memcached"} 0.0"#,
        ] {
            assert!(lines(&text).contains(&series), "{series} not in\n{text}");
        }
    }

    /// The room of the keys a backlog left behind is given back once they are reconciled or
    /// gone.
    #[test]
    fn the_keys_table_gives_back_its_room_once_emptied() {
        let m = Metrics::new();
        let q = m.queue("memcached");
        let room = |q: &super::Queue| q.keys().capacity();
        for i in 0..1000 {
            q.add(&format!("ns/o{i}"));
        }
        assert!(room(&q) >= 1000, "{}", room(&q));
        for i in 0..500 {
            q.start(&format!("ns/o{i}")).finish(false);
        }
        q.forget_all_but(["ns/o999"]);
        assert_eq!(q.depth(), 1);
        assert!(room(&q) <= 16, "room for {} keys kept for 1", room(&q));
        q.start("ns/o999").finish(false);
        assert_eq!(room(&q), 0, "room kept with no key left");
    }
}
