//! The keys a controller made by `generation_changed` is woken for, added to its work queue
//! ([`Queue`]), and forgotten when their objects are gone before a reconcile took them.

use kube::Resource;
use kube::runtime::reflector::Store;
use kube::runtime::watcher::Event;
use std::hash::Hash;

use crate::manager::Queue;
use kube::ResourceExt;

/// An object's key in the queue and in [`Retries`](super::Retries): `namespace/name`
/// (`/name` for a cluster-scoped one), as logs name it.
pub(super) fn object_key<K: Resource>(obj: &K) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

/// A queue and the cache its controller's reconciles read objects from.
pub(super) struct Queued<K: Resource + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    queue: Queue,
    reader: Store<K>,
}

impl<K> Queued<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    pub(super) fn new(queue: Queue, reader: Store<K>) -> Self {
        Self { queue, reader }
    }

    /// The object `obj` woke the controller: its key waits.
    pub(super) fn add(&self, obj: &K) {
        self.queue.add(&object_key(obj));
    }

    /// Before `event` is looked at: an object it reports deleted, or (at the end of a relist)
    /// the waiting objects the cache no longer holds, no longer wait; kube's controller finds
    /// no object for their requests and runs no reconcile.
    pub(super) fn forget_gone(&self, event: &Event<K>) {
        match event {
            Event::Delete(obj) => self.queue.forget(&object_key(obj)),
            Event::InitDone => self.queue.forget_all_but(
                self.reader
                    .state()
                    .iter()
                    .map(|obj| object_key(obj.as_ref())),
            ),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::tests::config_map;
    use crate::controller::{Retries, generation_changed_from};
    use crate::manager::{Metrics, Queue};
    use crate::watch::Source;
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Patch, PatchParams};
    use kube::runtime::controller::{Action, Config};
    use kube::runtime::watcher;
    use kube::{Api, ResourceExt};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use tokio::sync::Semaphore;

    /// Waits up to 4 s for `done`.
    async fn eventually(mut done: impl FnMut() -> bool) -> bool {
        for _ in 0..200 {
            if done() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        done()
    }

    /// The value of the sample `series` (name and labels as served) in `text`.
    fn sample(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
            .and_then(|v| v.parse().ok())
    }

    /// What the test reads from `/metrics` for the queue `configmap`, in the order named.
    const SERIES: [&str; 6] = [
        r#"workqueue_depth{name="configmap",controller="configmap",priority=""}"#,
        r#"workqueue_adds_total{name="configmap",controller="configmap"}"#,
        r#"workqueue_queue_duration_seconds_count{name="configmap",controller="configmap"}"#,
        r#"workqueue_work_duration_seconds_count{name="configmap",controller="configmap"}"#,
        r#"workqueue_retries_total{name="configmap",controller="configmap"}"#,
        r#"workqueue_longest_running_processor_seconds{name="configmap",controller="configmap"}"#,
    ];

    /// Depth, adds, queue durations observed, work durations observed and retries, as served.
    fn served(metrics: &Metrics) -> [f64; 5] {
        let text = metrics.encode().expect("encode");
        std::array::from_fn(|i| {
            sample(&text, SERIES[i]).unwrap_or_else(|| panic!("{} not served:\n{text}", SERIES[i]))
        })
    }

    struct Ctx {
        retries: Retries,
        gate: Semaphore,
        started: Mutex<Vec<String>>,
    }

    /// A controller of the ConfigMaps `names` (seeded in `default`) on the fake API, with the
    /// work queue `configmap`, running one reconcile at a time. Each reconcile records its start
    /// and is held until `ctx.gate` lets it go; `c`'s first fails.
    struct World {
        api: Api<ConfigMap>,
        metrics: Metrics,
        queue: Queue,
        ctx: Arc<Ctx>,
        task: tokio::task::JoinHandle<()>,
    }

    impl World {
        fn start(names: &[&str]) -> World {
            let fake = crate::fake::FakeApi::new();
            for name in names {
                fake.seed(&config_map("default", name));
            }
            let api: Api<ConfigMap> = Api::namespaced(fake.client(), "default");
            let metrics = Metrics::new();
            let queue = metrics.queue("configmap");
            let source = Source::new(api.clone(), watcher::Config::default()).queue(queue.clone());
            let ctx = Arc::new(Ctx {
                retries: Retries::in_queue(queue.clone()),
                gate: Semaphore::new(0),
                started: Mutex::default(),
            });
            let run = generation_changed_from(source)
                .with_config(Config::default().concurrency(1))
                .run(
                    |obj: Arc<ConfigMap>, ctx: Arc<Ctx>| async move {
                        let work = async {
                            let name = obj.name_any();
                            let first = {
                                let mut started = ctx.started.lock().expect("lock");
                                started.push(name.clone());
                                started.iter().filter(|n| **n == name).count() == 1
                            };
                            ctx.gate.acquire().await.expect("gate").forget();
                            if name == "c" && first {
                                return Err(kube::Error::LinesCodecMaxLineLengthExceeded);
                            }
                            Ok(Action::await_change())
                        };
                        ctx.retries.track(obj.as_ref(), work).await
                    },
                    |obj, error, ctx| ctx.retries.after_failure(obj.as_ref(), error),
                    ctx.clone(),
                );
            let task = tokio::spawn(run.for_each(|_| std::future::ready(())));
            World {
                api,
                metrics,
                queue,
                ctx,
                task,
            }
        }

        /// The keys whose reconciles started, in order.
        fn started(&self) -> Vec<String> {
            self.ctx.started.lock().expect("lock").clone()
        }
    }

    /// One reconcile at a time, each held until the test lets it go: the keys triggered
    /// meanwhile wait, once each; `c` fails once, and its retry is counted.
    #[tokio::test]
    async fn the_queue_counts_the_keys_waiting_once_each_until_their_reconciles_take_them() {
        let world = World::start(&["a", "b", "c"]);
        let World {
            api,
            metrics,
            queue,
            ctx,
            task,
        } = &world;
        let started = || world.started();

        // one reconcile runs, held; the two other keys wait
        assert!(
            eventually(|| started().len() == 1 && served(metrics)[0] == 2.0).await,
            "started {:?}, served {:?}",
            started(),
            served(metrics)
        );
        assert_eq!(served(metrics), [2.0, 3.0, 1.0, 0.0, 0.0]);
        assert_eq!(queue.depth(), 2);
        let running = started()[0].clone();
        let waiting = ["a", "b", "c"]
            .into_iter()
            .find(|n| *n != running)
            .expect("a waiting key");
        // triggered again while waiting: still one key; triggered while running: it waits for
        // the next reconcile (the change of the running one is made last, so once it counts,
        // the other has been seen)
        for name in [waiting, running.as_str()] {
            let patch = Patch::Merge(serde_json::json!({ "data": { "v": "2" } }));
            api.patch(name, &PatchParams::default(), &patch)
                .await
                .expect("patched");
        }
        assert!(
            eventually(|| served(metrics)[1] == 4.0).await,
            "{:?}",
            served(metrics)
        );
        assert_eq!(served(metrics), [3.0, 4.0, 1.0, 0.0, 0.0]);
        let text = metrics.encode().expect("encode");
        let longest = sample(&text, SERIES[5]).expect("longest running served");
        assert!(longest > 0.0, "{text}");

        // let every reconcile go: a, b, c, and the one triggered while running again; c fails
        // once and is retried (after 5 s, past the test's end)
        ctx.gate.add_permits(100);
        assert!(
            eventually(|| served(metrics) == [0.0, 4.0, 4.0, 4.0, 1.0]).await,
            "{:?}, started {:?}",
            served(metrics),
            started()
        );
        task.abort();
        let mut all = started();
        all.sort();
        let mut expected = vec!["a", "b", "c", running.as_str()];
        expected.sort();
        assert_eq!(all, expected);
        let text = metrics.encode().expect("encode");
        assert_eq!(sample(&text, SERIES[5]), Some(0.0), "{text}");
        assert_eq!(queue.depth(), 0);
    }

    /// An object deleted while it waits leaves the queue: kube's controller finds no object for
    /// its request and runs no reconcile.
    #[tokio::test]
    async fn an_object_deleted_while_it_waits_leaves_the_queue() {
        let world = World::start(&["a", "b"]);
        let World {
            api,
            metrics,
            queue,
            ctx,
            task,
        } = &world;
        let started = || world.started();
        assert!(
            eventually(|| started().len() == 1 && queue.depth() == 1).await,
            "started {:?}, depth {}",
            started(),
            queue.depth()
        );
        let running = started()[0].clone();
        let waiting = if running == "a" { "b" } else { "a" };
        api.delete(waiting, &Default::default())
            .await
            .expect("deleted");
        assert!(eventually(|| queue.depth() == 0).await, "{queue:?}");
        ctx.gate.add_permits(100);
        assert!(
            eventually(|| served(metrics)[3] == 1.0).await,
            "{:?}",
            served(metrics)
        );
        // no reconcile of the deleted object follows
        tokio::time::sleep(Duration::from_millis(200)).await;
        task.abort();
        assert_eq!(started(), [running]);
        assert_eq!(served(metrics), [0.0, 2.0, 1.0, 1.0, 0.0]);
    }
}
