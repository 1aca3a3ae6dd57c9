//! What every generated controller shares, so a scaffolded controller holds only what its user
//! owns: a controller woken only by changes of generation (not by its own status and finalizer
//! writes), retries with per-object exponential backoff, the finalizer in one patch, the `Ready`
//! condition by server-side apply, and events.

use std::collections::HashMap;
use std::fmt::{Debug, Display};
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt, TryStreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::events::{Event, EventType};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::manager::Queue;
use crate::shard::Shard;
use crate::tables::shrink_emptied;
use crate::watch::Source;
use tracing::Instrument;

mod gate;
mod metadata;
mod queued;
mod rebuild;
mod standby;
mod store;
mod wakes;

pub use metadata::{owns_metadata, watches_metadata};

/// The predicates a watch stream can be filtered with before it wakes a controller (kube's,
/// controller-runtime's `GenerationChangedPredicate` and its kin), for users' own controllers.
pub use kube::runtime::{Predicate, PredicateConfig, predicates};

/// A controller for `K` woken when an object is first seen, when its `metadata.generation`
/// changes (a spec edit; the apiserver also bumps it when it marks an object with finalizers
/// for deletion) and by the `Action` its reconcile returns, but not by updates that leave the
/// generation as it was: the controller's own status and finalizer writes, or anyone's label and
/// annotation edits. Objects without a generation (a `ConfigMap`) wake it on every change of
/// resource version. Deletions of objects without finalizers are not delivered; `owns` and
/// `watches` on the returned controller add their triggers as usual ([`owns_metadata`] and
/// [`watches_metadata`] add them with a cache of the other kind's metadata only). Its initial
/// list is streamed where the apiserver offers it, else paged ([`Lists`](crate::watch::Lists)).
/// The objects it caches and hands to the reconcile carry no `managedFields`; to tell a new
/// generation it keeps two numbers per object (a digest of its namespace, name and uid, and its
/// generation's hash), and forgets an object once the watch reports it deleted; once deletions
/// have left fewer than a quarter of the most objects the cache held, the cache is rebuilt for
/// what is left (kube's keeps the room it grew to). Its cache is kept warm on standby from the
/// moment it is made ([`generation_changed_from`]). At most [`CONCURRENT_RECONCILES`]
/// reconciles run at once; `with_config` on the returned controller sets another bound.
pub fn generation_changed<K>(api: Api<K>, config: watcher::Config) -> Controller<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Unpin,
{
    generation_changed_in_shard(api, config, Shard::ALL)
}

/// [`generation_changed`] for the objects of one [`Shard`]: it lists, watches and caches only
/// them ([`shard::watcher`](crate::shard::watcher): by the apiserver's shard selector where it
/// honours it, else dropped on arrival), and the others do not wake it. Triggers added with
/// `owns` and `watches` wake an owner whatever its shard, so a reconcile that uses them starts
/// with `if !shard.owns(&obj)` (the scaffold's does).
pub fn generation_changed_in_shard<K>(
    api: Api<K>,
    config: watcher::Config,
    shard: Shard,
) -> Controller<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Unpin,
{
    generation_changed_from(Source::new(api, config).shard(shard))
}

/// [`generation_changed`] for what `source` says: its shard, how its lists are made (streamed
/// by default, [`Lists`](crate::watch::Lists)) and the transforms its objects go through
/// before the cache ([`Source::transform`]).
///
/// Warm standby ([`Source::standby`], on by default): called inside a tokio runtime, it starts
/// the watch that fills the cache at once, in a task of its own, so a replica that does not
/// lead (whose manager has not started the controller) keeps its cache in sync. Once run, the
/// controller first takes the cached objects as they are (each wakes it once), then follows
/// the watch; the task stops when the controller is dropped. With standby off, or outside a
/// runtime, the watch starts when the controller first runs.
///
/// Work queue ([`Source::queue`]): each object the watch wakes the controller for is added to
/// the queue's keys, counted once while it waits; an object the watch reports deleted (or a
/// relist no longer holds) no longer waits.
pub fn generation_changed_from<K>(source: Source<K>) -> Controller<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Unpin,
{
    let (trigger, reader, _) = triggers(source, false);
    controller_for(trigger, reader)
}

/// Runs the controller [`generation_changed_from`] makes for `source`, configured by
/// `configure` (which is given the controller as made, and may add `owns`, `watches`, a
/// shutdown signal, another `Config`), with `reconcile`, `error_policy` and `ctx` as
/// `Controller::run` takes them; returns the stream `run` returns.
///
/// Once a mass deletion has emptied its cache, and no reconcile runs, the controller is built
/// again (`configure` called again) on the same cache and the same watch: kube's controller
/// keeps in tables that never shrink the room it grew to for the objects waiting their turn
/// (room for the largest backlog), and a new one starts small. Nothing
/// waiting is lost: what the old controller held named objects the cache no longer holds, and
/// the watch's next events go to the new one. It is checked every second while the controller
/// has been woken more than 64 times since it was built. The watches `configure` adds (`owns`,
/// `watches`) are made again with each build.
///
/// A backlog (objects woken faster than they are reconciled) waits in a compact queue of this
/// controller's, in the order its objects were woken, each once: kube's controller is handed
/// at most 64 objects whose reconcile has not started, and its scheduler, which keeps a request
/// of several hundred bytes per object it holds and the room it grew to, stays small. The work
/// queue's depth counts the objects waiting in either.
pub fn run_generation_changed<K, Ctx, Fut, E>(
    source: Source<K>,
    configure: impl Fn(Controller<K>) -> Controller<K> + Send + Sync + 'static,
    reconcile: impl Fn(Arc<K>, Arc<Ctx>) -> Fut + Clone + Send + Sync + 'static,
    error_policy: impl Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Clone + Send + Sync + 'static,
    ctx: Arc<Ctx>,
) -> impl Stream<Item = Result<(ObjectRef<K>, Action), controller::Error<E, watcher::Error>>> + Send
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Debug + Unpin + Send + Sync,
    Ctx: Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: std::error::Error + Send + 'static,
{
    let (trigger, reader, gate) = triggers(source, true);
    let lender = rebuild::Lender::new(trigger);
    let woken = lender.taken();
    let running = rebuild::InFlight::default();
    let counted = running.clone();
    let cache = reader.clone();
    let build = move || {
        let counted = counted.clone();
        let reconcile = reconcile.clone();
        let gate = gate.clone();
        let counting = move |obj: Arc<K>, ctx: Arc<Ctx>| {
            let run = counted.enter();
            if let Some(gate) = &gate {
                gate.started(&obj);
            }
            let work = reconcile(obj, ctx);
            async move {
                let result = work.await;
                drop(run);
                result
            }
        };
        configure(controller_for(lender.lend().boxed(), cache.clone())).run(
            counting,
            error_policy.clone(),
            ctx.clone(),
        )
    };
    let rebuilding = rebuild::Rebuilding::new(build, woken, move || reader.is_empty(), running);
    futures::stream::unfold(rebuilding, |mut rebuilding| async move {
        let item = rebuilding.next().await?;
        Some((item, rebuilding))
    })
}

/// What wakes a controller for `source`: the objects its watch's events wake it for, once the
/// cache (read by the returned store) holds them; `gated`, through a [`gate::Gate`] (returned),
/// whose reconciles must tell it they started.
#[allow(clippy::type_complexity)]
fn triggers<K>(
    mut source: Source<K>,
    gated: bool,
) -> (
    BoxStream<'static, watcher::Result<K>>,
    reflector::Store<K>,
    Option<gate::Gate<K>>,
)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Unpin,
{
    let (reader, writer) = reflector::store();
    let store = store::Compacting::new(writer);
    // on standby only inside a runtime, where the watch's task can be spawned
    let standby = source.is_standby() && tokio::runtime::Handle::try_current().is_ok();
    let queue = source.take_queue();
    // the cache keeps objects without `managedFields`, which no reconcile reads and which are
    // often the larger part of an object (an update sent without them keeps the stored ones),
    // and as the source's transforms left them
    let events = source.events().default_backoff();
    let events = if standby {
        standby::follow(events, store, reader.clone()).boxed()
    } else {
        standby::settled(events, store, reader.clone()).boxed()
    };
    let gate = gated.then(|| gate::Gate::new(reader.clone()));
    let woken = woken(events, reader.clone(), queue, gate.clone());
    let trigger = match &gate {
        Some(gate) => gate::Gated::new(woken, gate.clone()).boxed(),
        None => woken,
    };
    (trigger, reader, gate)
}

/// The objects `events` wake the controller for, whose cache `reader` reads already holds them
/// (the standby task or [`standby::settled`] drives it), adding each to `queue`, and telling
/// `gate` of the objects gone.
fn woken<K>(
    events: BoxStream<'static, watcher::Result<watcher::Event<K>>>,
    reader: reflector::Store<K>,
    queue: Option<Queue>,
    gate: Option<gate::Gate<K>>,
) -> BoxStream<'static, watcher::Result<K>>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Unpin,
{
    let mut wakes = wakes::Wakes::default();
    let queued = queue.map(|queue| queued::Queued::new(queue, reader));
    events
        // objects first seen or seen with another generation (kube's `predicate_filter` with
        // `generation.fallback(resource_version)`, forgetting deleted objects)
        .try_filter_map(move |event| {
            if let Some(queued) = &queued {
                queued.forget_gone(&event);
            }
            if let Some(gate) = &gate {
                gate.forget_gone(&event);
            }
            let woke = wakes.wake(event);
            if let (Some(queued), Some(obj)) = (&queued, &woke) {
                queued.add(obj);
            }
            std::future::ready(Ok(woke))
        })
        .boxed()
}

/// The controller woken by `trigger`, reading the cache `reader`.
fn controller_for<K>(
    trigger: BoxStream<'static, watcher::Result<K>>,
    reader: reflector::Store<K>,
) -> Controller<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Unpin,
{
    Controller::for_stream(trigger, reader)
        .with_config(controller::Config::default().concurrency(CONCURRENT_RECONCILES))
}

/// How many reconciles a controller made by [`generation_changed`] runs at once. kube's own
/// default is no bound: a backlog of a thousand objects then starts a thousand reconciles, and
/// their requests, at once; the process's memory peaks with them, and the apiserver answers
/// many with 429 Too Many Requests, which kube's client retries. Go's controller-runtime runs
/// one at a time by default; a few more keep the apiserver busy. Each running reconcile holds a
/// connection of kube's client, which stays open, idle, until the apiserver closes it after 90 s
/// (kube's client sets no timer to close idle ones itself), so the bound also caps the idle
/// connections left behind.
pub const CONCURRENT_RECONCILES: u16 = 8;

/// Whether `obj` carries `finalizer`.
pub fn has_finalizer<K: Resource>(obj: &K, finalizer: &str) -> bool {
    obj.finalizers().iter().any(|f| f == finalizer)
}

/// Adds `finalizer` to `obj` with one JSON patch, unless it is there already. The patch tests
/// the finalizers it read, so a concurrent change of them fails it with a conflict (retried by
/// the error policy) instead of being overwritten. Returns whether it wrote.
pub async fn add_finalizer<K>(api: &Api<K>, obj: &K, finalizer: &str) -> kube::Result<bool>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    if has_finalizer(obj, finalizer) {
        return Ok(false);
    }
    let patch = match &obj.meta().finalizers {
        Some(current) if !current.is_empty() => serde_json::json!([
            { "op": "test", "path": "/metadata/finalizers", "value": current },
            { "op": "add", "path": "/metadata/finalizers/-", "value": finalizer },
        ]),
        _ => serde_json::json!([
            { "op": "test", "path": "/metadata/finalizers", "value": null },
            { "op": "add", "path": "/metadata/finalizers", "value": [finalizer] },
        ]),
    };
    json_patch(api, obj, patch).await?;
    Ok(true)
}

/// Removes `finalizer` from `obj` with one JSON patch that tests it is still at the index read.
/// Returns whether it wrote.
pub async fn remove_finalizer<K>(api: &Api<K>, obj: &K, finalizer: &str) -> kube::Result<bool>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let Some(index) = obj.finalizers().iter().position(|f| f == finalizer) else {
        return Ok(false);
    };
    let path = format!("/metadata/finalizers/{index}");
    let patch = serde_json::json!([
        { "op": "test", "path": path, "value": finalizer },
        { "op": "remove", "path": path },
    ]);
    json_patch(api, obj, patch).await?;
    Ok(true)
}

async fn json_patch<K>(api: &Api<K>, obj: &K, patch: serde_json::Value) -> kube::Result<()>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let patch: json_patch::Patch =
        serde_json::from_value(patch).map_err(kube::Error::SerdeError)?;
    api.patch(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::<()>::Json(patch),
    )
    .await?;
    Ok(())
}

/// Applies `conditions` as the object's `status.conditions` by server-side apply of the status
/// subresource, as `field_manager`: one request, whatever the status held before.
pub async fn apply_conditions<K>(
    api: &Api<K>,
    obj: &K,
    field_manager: &str,
    conditions: &[Condition],
) -> kube::Result<K>
where
    K: Resource + Clone + DeserializeOwned + Debug,
    K::DynamicType: Default,
{
    let dt = K::DynamicType::default();
    let body = serde_json::json!({
        "apiVersion": K::api_version(&dt),
        "kind": K::kind(&dt),
        "status": { "conditions": conditions },
    });
    let params = PatchParams::apply(field_manager).force();
    api.patch_status(&obj.name_any(), &params, &Patch::Apply(body))
        .await
}

/// The first retry delay after a failed reconcile.
pub const FIRST_RETRY: Duration = Duration::from_secs(5);
/// The longest retry delay.
pub const MAX_RETRY: Duration = Duration::from_secs(300);

/// The delay before retry number `failures` (1-based): 5s, 10s, 20s ... capped at 5m.
pub fn backoff(failures: u32) -> Duration {
    let exponent = failures.saturating_sub(1).min(6);
    (FIRST_RETRY * (1u32 << exponent)).min(MAX_RETRY)
}

/// `namespace/name` of an object (`/name` for a cluster-scoped one), as logs name it.
pub fn object_key<K: Resource>(obj: &K) -> String {
    queued::object_key(obj)
}

/// Consecutive failures per object: a failed reconcile is retried after [`backoff`] of its
/// count, and a successful one forgets it. [`in_queue`](Self::in_queue) also follows each
/// reconcile in the controller's work queue.
#[derive(Debug, Default)]
pub struct Retries {
    failures: Mutex<HashMap<String, u32>>,
    queue: Option<Queue>,
}

impl Retries {
    /// Retries that also follow the reconciles in `queue` (give the same queue to the
    /// controller's [`Source::queue`]): [`track`](Self::track) takes the object's key out of
    /// the queue when the reconcile starts and counts its work when it ends, and a requeue (by
    /// [`after_failure`](Self::after_failure), or an `Ok` action other than
    /// `Action::await_change()`) counts as a retry.
    pub fn in_queue(queue: Queue) -> Self {
        Self {
            failures: Mutex::default(),
            queue: Some(queue),
        }
    }

    /// Counts one more failure of `obj`, logs `error`, and says when to try again. Call it
    /// from the controller's error policy.
    pub fn after_failure<K: Resource>(&self, obj: &K, error: &dyn Display) -> Action {
        let key = object_key(obj);
        let failures = {
            let mut all = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
            let count = all.entry(key.clone()).or_insert(0);
            *count = count.saturating_add(1);
            *count
        };
        let delay = backoff(failures);
        if let Some(queue) = &self.queue {
            queue.retried();
        }
        tracing::warn!(object = %key, %error, failures, ?delay, "reconcile failed; retrying");
        Action::requeue(delay)
    }

    /// Awaits one reconcile of `obj`; on success its failures are forgotten. In a queue
    /// ([`in_queue`](Self::in_queue)), the reconcile is followed there.
    ///
    /// The reconcile runs in the span `reconcile{object=<namespace>/<name>}`, so every line it
    /// logs names the object.
    pub async fn track<K: Resource, E>(
        &self,
        obj: &K,
        reconcile: impl Future<Output = Result<Action, E>>,
    ) -> Result<Action, E> {
        let key = object_key(obj);
        let processing = self.queue.as_ref().map(|queue| queue.start(&key));
        let span = tracing::info_span!("reconcile", object = %key);
        let result = reconcile.instrument(span).await;
        if let Some(processing) = processing {
            let requeue = matches!(&result, Ok(action) if *action != Action::await_change());
            processing.finish(requeue);
        }
        if result.is_ok() {
            let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
            if failures.remove(&key).is_some() {
                shrink_emptied(&mut failures);
            }
        }
        result
    }

    /// The consecutive failures of `obj` so far.
    pub fn failures<K: Resource>(&self, obj: &K) -> u32 {
        self.failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&object_key(obj))
            .copied()
            .unwrap_or(0)
    }
}

/// The condition type controllers report readiness with.
pub const READY: &str = "Ready";

/// Whether `conditions` hold `Ready=True` for the object's current `generation`.
pub fn is_ready(conditions: &[Condition], generation: Option<i64>) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == READY && c.status == "True" && c.observed_generation == generation)
}

/// A `Ready=True` condition for `generation`, stamped now.
pub fn ready(reason: &str, message: String, generation: Option<i64>) -> Condition {
    Condition {
        type_: READY.to_owned(),
        status: "True".to_owned(),
        reason: reason.to_owned(),
        message,
        observed_generation: generation,
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::now()),
    }
}

/// A merge patch setting `status.conditions`.
pub fn conditions_patch(conditions: &[Condition]) -> serde_json::Value {
    serde_json::json!({ "status": { "conditions": conditions } })
}

/// A `Normal` event: `reason` in CamelCase, what happened in `note`, the `action` taken.
pub fn normal_event(reason: &str, note: String, action: &str) -> Event {
    Event {
        type_: EventType::Normal,
        reason: reason.to_owned(),
        note: Some(note),
        action: action.to_owned(),
        secondary: None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use std::sync::Arc;

    /// A ConfigMap `namespace/name`, the object the runtime's unit tests key by.
    pub(crate) fn config_map(namespace: &str, name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn backoff_doubles_from_five_seconds_and_is_capped_at_five_minutes() {
        assert_eq!(backoff(1), Duration::from_secs(5));
        assert_eq!(backoff(2), Duration::from_secs(10));
        assert_eq!(backoff(4), Duration::from_secs(40));
        assert_eq!(backoff(7), Duration::from_secs(300));
        assert_eq!(backoff(u32::MAX), Duration::from_secs(300));
    }

    #[tokio::test]
    async fn failures_count_per_object_and_a_success_forgets_them() {
        let retries = Retries::default();
        let (a, b) = (config_map("ns", "a"), config_map("ns", "b"));
        assert_eq!(
            retries.after_failure(&a, &"boom"),
            Action::requeue(Duration::from_secs(5))
        );
        assert_eq!(
            retries.after_failure(&a, &"boom"),
            Action::requeue(Duration::from_secs(10))
        );
        assert_eq!(
            retries.after_failure(&b, &"boom"),
            Action::requeue(Duration::from_secs(5))
        );
        assert_eq!(retries.failures(&a), 2);
        let failed: Result<Action, &str> = retries.track(&a, async { Err("again") }).await;
        assert!(failed.is_err());
        assert_eq!(retries.failures(&a), 2);
        let done: Result<Action, &str> = retries
            .track(&a, async { Ok(Action::await_change()) })
            .await;
        assert_eq!(done, Ok(Action::await_change()));
        assert_eq!(retries.failures(&a), 0);
        assert_eq!(retries.failures(&b), 1);
    }

    #[tokio::test]
    async fn the_failures_table_gives_back_its_room_once_every_object_succeeded() {
        let retries = Retries::default();
        let objects: Vec<ConfigMap> = (0..1000)
            .map(|i| config_map("ns", &format!("o{i}")))
            .collect();
        for obj in &objects {
            retries.after_failure(obj, &"boom");
        }
        let room = || retries.failures.lock().expect("lock").capacity();
        assert!(room() >= 1000, "{}", room());
        for obj in &objects {
            let done: Result<Action, &str> = retries
                .track(obj, async { Ok(Action::await_change()) })
                .await;
            assert!(done.is_ok());
        }
        assert_eq!(room(), 0, "room kept with no failure left");
    }

    #[test]
    fn ready_holds_only_for_the_observed_generation() {
        let c = ready("Reconciled", "done".into(), Some(3));
        assert_eq!((c.type_.as_str(), c.status.as_str()), ("Ready", "True"));
        assert!(is_ready(std::slice::from_ref(&c), Some(3)));
        assert!(!is_ready(std::slice::from_ref(&c), Some(4)));
        assert!(!is_ready(&[], Some(3)));
        assert_eq!(
            conditions_patch(&[c])["status"]["conditions"][0]["reason"],
            "Reconciled"
        );
    }

    #[tokio::test]
    async fn a_controller_of_one_shard_caches_and_reconciles_only_its_objects() {
        use crate::shard::tests::uid;
        use futures::StreamExt;
        use std::collections::BTreeSet;
        // the fake sends every object: the client keeps to the shard
        let fake = crate::fake::FakeApi::new();
        let shard = Shard::new(1, 3).expect("shard");
        let mut mine = BTreeSet::new();
        for i in 0..30 {
            let mut cm = config_map("default", &format!("cm-{i}"));
            cm.metadata.uid = Some(uid(i));
            if shard.owns(&cm) {
                mine.insert(cm.name_any());
            }
            fake.seed(&cm);
        }
        assert!((3..27).contains(&mine.len()), "shard 1 of 3 owns {mine:?}");
        let api: Api<ConfigMap> = Api::namespaced(fake.client(), "default");
        let controller = generation_changed_in_shard(api, watcher::Config::default(), shard);
        let store = controller.store();
        let reconciled = Arc::new(Mutex::new(BTreeSet::new()));
        let run = controller.run(
            |obj: Arc<ConfigMap>, seen: Arc<Mutex<BTreeSet<String>>>| async move {
                seen.lock().expect("lock").insert(obj.name_any());
                Ok::<_, kube::Error>(Action::await_change())
            },
            |_, _, _| Action::await_change(),
            reconciled.clone(),
        );
        let task = tokio::spawn(run.for_each(|_| std::future::ready(())));
        let names = |s: &reflector::Store<ConfigMap>| -> BTreeSet<String> {
            s.state().iter().map(|o| o.name_any()).collect()
        };
        for _ in 0..200 {
            if *reconciled.lock().expect("lock") == mine {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        task.abort();
        assert_eq!(*reconciled.lock().expect("lock"), mine);
        assert_eq!(names(&store), mine);
    }

    #[test]
    fn object_keys_name_namespace_and_name() {
        assert_eq!(object_key(&config_map("ns", "a")), "ns/a");
    }
}
