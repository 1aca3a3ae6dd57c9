//! Warm standby: the cache of a controller made by `generation_changed` is filled and kept in
//! sync from the moment the controller is made, by a task of its own, on every replica, leading
//! or not. The controller, once its manager leads and runs it, starts from the cache as it is:
//! its objects as one relist (so each wakes the controller once), then the events the watch
//! applies from then on. A replica that takes the Lease over reconciles at once, without a
//! list of its own first.
//!
//! The watch's lists (the first, and each relist after its resource version expired) reach
//! the controller only once the cache holds them, as one relist from the cache: kube's store
//! keeps a list's objects aside until the list is done, so a reconcile woken by one of them
//! before would read the object as it was before the list (an older generation, already
//! Ready) and do nothing, and the newer generation would wake nothing again.
//! [`settled`] does the same for a controller without standby.

use std::sync::Arc;

use futures::{Stream, StreamExt};
use kube::Resource;
use kube::runtime::reflector::Store;
use kube::runtime::watcher::{self, Event};
use std::hash::Hash;
use tokio::sync::{broadcast, watch};

use super::store::Compacting;

/// How many events the controller may fall behind the watch before it starts again from the
/// cache (as a relist, which wakes only the objects whose generation it has not seen).
const BEHIND: usize = 1024;

/// How many cached objects a relist sends before it lets the controller run.
const RELIST_BATCH: usize = 64;

/// Aborts the watch's task when the controller that follows it is dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Spawns a task applying `events` to `store` (the cache, read by `reader`) from now on; returns
/// the events the controller follows: when first polled, once the cache is filled, its objects
/// as one relist, then each event the task applied since. Call it inside a tokio runtime.
pub(crate) fn follow<K, S>(
    events: S,
    mut store: Compacting<K>,
    reader: Store<K>,
) -> impl Stream<Item = watcher::Result<Event<K>>> + Send
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Send + Sync,
    S: Stream<Item = watcher::Result<Event<K>>> + Send + 'static,
{
    let (sender, _) = broadcast::channel::<Arc<Event<K>>>(BEHIND);
    let applied = sender.clone();
    let (fill, filled) = watch::channel(0u64);
    let task = tokio::spawn(async move {
        futures::pin_mut!(events);
        while let Some(item) = events.next().await {
            match item {
                Ok(event) => {
                    store.apply(&event);
                    match event {
                        // a list's objects enter the cache together, at its end (the store
                        // keeps them aside until then): a reconcile woken by one before would
                        // read the object as it was before the list
                        Event::Init | Event::InitApply(_) => {}
                        // the list is in the cache: the controller takes it from there
                        // (`Init` tells it to)
                        Event::InitDone => {
                            fill.send_modify(|fills| *fills += 1);
                            let _ = applied.send(Arc::new(Event::Init));
                        }
                        // nobody follows before the controller runs: the event is dropped
                        event => {
                            let _ = applied.send(Arc::new(event));
                        }
                    }
                }
                Err(error) => tracing::warn!(%error, "watch failed; retrying"),
            }
        }
    });
    let state = Following {
        sender,
        receiver: None,
        filled,
        taken: 0,
        reader,
        relisting: None,
        _task: AbortOnDrop(task.abort_handle()),
    };
    futures::stream::unfold(state, |mut state| async move {
        let event = state.next().await?;
        Some((Ok(event), state))
    })
}

/// Applies `events` to `store` (the cache, read by `reader`) and passes them on, but a list's
/// objects only once the cache holds them: its `Init` at once, then, after its `InitDone`, the
/// cached objects as `InitApply` and an `InitDone` (what [`follow`] does for a standby cache).
pub(crate) fn settled<K, S>(
    events: S,
    store: Compacting<K>,
    reader: Store<K>,
) -> impl Stream<Item = watcher::Result<Event<K>>> + Send
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Send + Sync,
    S: Stream<Item = watcher::Result<Event<K>>> + Send + 'static,
{
    struct Settling<K: Resource + Clone + 'static, S>
    where
        K::DynamicType: Eq + Hash + Clone,
    {
        events: std::pin::Pin<Box<S>>,
        store: Compacting<K>,
        reader: Store<K>,
        relisting: Option<std::vec::IntoIter<Arc<K>>>,
    }
    let state = Settling {
        events: Box::pin(events),
        store,
        reader,
        relisting: None,
    };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(objects) = state.relisting.as_mut() {
                let event = match objects.next() {
                    Some(obj) => Event::InitApply(obj.as_ref().clone()),
                    None => {
                        state.relisting = None;
                        Event::InitDone
                    }
                };
                return Some((Ok(event), state));
            }
            match state.events.next().await? {
                Ok(event) => {
                    state.store.apply(&event);
                    match event {
                        Event::InitApply(_) => {}
                        Event::InitDone => {
                            state.relisting = Some(state.reader.state().into_iter());
                        }
                        event => return Some((Ok(event), state)),
                    }
                }
                Err(error) => return Some((Err(error), state)),
            }
        }
    })
}

struct Following<K: Resource + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    sender: broadcast::Sender<Arc<Event<K>>>,
    receiver: Option<broadcast::Receiver<Arc<Event<K>>>>,
    /// How many lists have filled the cache so far.
    filled: watch::Receiver<u64>,
    /// How many lists the cache held when the controller last took it.
    taken: u64,
    reader: Store<K>,
    /// The cached objects still to send as a relist, shared with the cache: each is copied
    /// only when it is sent, so a relist does not hold the cache twice.
    relisting: Option<std::vec::IntoIter<Arc<K>>>,
    _task: AbortOnDrop,
}

impl<K> Following<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    async fn next(&mut self) -> Option<Event<K>> {
        if let Some(objects) = self.relisting.as_mut() {
            // a pause now and then, so that the controller starts on the first objects while
            // the rest are still to come (kube's scheduler takes all that is ready first)
            if objects.len() % RELIST_BATCH == 0 {
                tokio::task::yield_now().await;
            }
            return Some(match objects.next() {
                Some(obj) => Event::InitApply(obj.as_ref().clone()),
                None => {
                    self.relisting = None;
                    Event::InitDone
                }
            });
        }
        if self.receiver.is_none() {
            // first: follow the task's events, then take the cache as it is once filled
            // (an event sent in between comes again after it, and wakes nothing new)
            self.receiver = Some(self.sender.subscribe());
            // not the store's own `wait_until_ready`: it wakes one waiter only, and the
            // controller waits on it too
            self.filled.wait_for(|fills| *fills > 0).await.ok()?;
            return Some(self.take_cache());
        }
        loop {
            let receiver = self.receiver.as_mut()?;
            match receiver.recv().await {
                // a list reached the cache: take it, unless it was there when last taken
                Ok(event) if matches!(event.as_ref(), Event::Init) => {
                    if *self.filled.borrow() > self.taken {
                        return Some(self.take_cache());
                    }
                }
                Ok(event) => return Some(event.as_ref().clone()),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::debug!(
                        missed,
                        "the controller fell behind its watch; starting again from the cache"
                    );
                    return Some(self.take_cache());
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// Starts sending the cached objects as one relist; returns its `Init`.
    fn take_cache(&mut self) -> Event<K> {
        self.taken = *self.filled.borrow();
        self.relisting = Some(self.reader.state().into_iter());
        Event::Init
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::generation_changed_from;
    use crate::controller::tests::config_map;
    use crate::watch::Source;
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::controller::Action;
    use kube::runtime::watcher;
    use kube::{Api, ResourceExt};
    use std::collections::BTreeSet;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    /// Waits up to 4 s for `done`.
    async fn eventually(done: impl Fn() -> bool) -> bool {
        for _ in 0..200 {
            if done() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        done()
    }

    #[tokio::test]
    async fn a_standby_cache_fills_before_the_controller_runs_and_feeds_it_once_run() {
        let fake = crate::fake::FakeApi::new();
        for name in ["a", "b"] {
            fake.seed(&config_map("default", name));
        }
        let api: Api<ConfigMap> = Api::namespaced(fake.client(), "default");
        let cold = generation_changed_from(
            Source::new(api.clone(), watcher::Config::default()).standby(false),
        );
        let warm = generation_changed_from(Source::new(api, watcher::Config::default()));
        let (cold_store, warm_store) = (cold.store(), warm.store());
        let names =
            || -> BTreeSet<String> { warm_store.state().iter().map(|o| o.name_any()).collect() };
        let both = BTreeSet::from(["a".to_owned(), "b".to_owned()]);
        assert!(
            eventually(|| names() == both).await,
            "the standby cache filled: {:?}",
            names()
        );
        assert!(
            cold_store.is_empty(),
            "a cache without standby waits for its controller"
        );
        drop(cold);

        // a change while on standby is in the cache; once run, each object wakes the controller
        fake.seed(&config_map("default", "c"));
        let all = BTreeSet::from(["a".to_owned(), "b".to_owned(), "c".to_owned()]);
        assert!(eventually(|| names() == all).await, "{:?}", names());
        let reconciled = Arc::new(Mutex::new(Vec::new()));
        let run = warm.run(
            |obj: Arc<ConfigMap>, seen: Arc<Mutex<Vec<String>>>| async move {
                seen.lock().expect("lock").push(obj.name_any());
                Ok::<_, kube::Error>(Action::await_change())
            },
            |_, _, _| Action::await_change(),
            reconciled.clone(),
        );
        let task = tokio::spawn(run.for_each(|_| std::future::ready(())));
        let seen = || reconciled.lock().expect("lock").clone();
        assert!(eventually(|| seen().len() >= 3).await, "{:?}", seen());
        // then it follows the watch
        fake.seed(&config_map("default", "d"));
        assert!(
            eventually(|| seen().contains(&"d".to_owned())).await,
            "{:?}",
            seen()
        );
        task.abort();
        let mut once = seen();
        once.sort();
        assert_eq!(once, ["a", "b", "c", "d"], "each object woke it once");
    }

    /// A scripted watch: the events sent on the returned sender, in order.
    fn scripted() -> (
        tokio::sync::mpsc::UnboundedSender<watcher::Result<watcher::Event<ConfigMap>>>,
        impl futures::Stream<Item = watcher::Result<watcher::Event<ConfigMap>>> + Send + 'static,
    ) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let events = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|event| (event, rx))
        });
        (tx, events)
    }

    fn at_generation(generation: i64) -> ConfigMap {
        let mut map = config_map("default", "a");
        map.metadata.generation = Some(generation);
        map.metadata.resource_version = Some(generation.to_string());
        map
    }

    /// The generation of the object an event carries, if it carries one.
    fn generation_of(event: &watcher::Event<ConfigMap>) -> Option<i64> {
        match event {
            watcher::Event::Apply(obj) | watcher::Event::InitApply(obj) => obj.metadata.generation,
            _ => None,
        }
    }

    #[tokio::test]
    async fn a_relisted_object_reaches_the_controller_only_once_the_cache_holds_it() {
        use kube::runtime::reflector::{self, ObjectRef};
        use kube::runtime::watcher::Event;

        let (tx, events) = scripted();
        let (reader, writer) = reflector::store();
        let follower = super::follow(events, super::Compacting::new(writer), reader.clone());
        futures::pin_mut!(follower);
        let key = ObjectRef::<ConfigMap>::new("a").within("default");
        let cached = || reader.get(&key).and_then(|obj| obj.metadata.generation);
        for event in [
            Event::Init,
            Event::InitApply(at_generation(1)),
            Event::InitDone,
        ] {
            tx.send(Ok(event)).expect("send");
        }
        let mut first = Vec::new();
        while first.len() < 3 {
            first.push(follower.next().await.expect("an event").expect("ok"));
        }
        assert_eq!(
            first.iter().filter_map(generation_of).collect::<Vec<_>>(),
            [1]
        );

        // a relist (the watch's resource version expired: 410 Gone) brings generation 2; the
        // cache holds it only once the relist is done, so nothing about it may reach the
        // controller before: a reconcile would read generation 1 from the cache and find it
        // Ready, and generation 2 would wake nothing again
        tx.send(Ok(Event::Init)).expect("send");
        tx.send(Ok(Event::InitApply(at_generation(2))))
            .expect("send");
        let early = tokio::time::timeout(Duration::from_millis(300), async {
            loop {
                let event = follower.next().await.expect("an event").expect("ok");
                if let Some(generation) = generation_of(&event)
                    && Some(generation) != cached()
                {
                    return (generation, cached());
                }
            }
        })
        .await;
        if let Ok((generation, in_cache)) = early {
            panic!(
                "generation {generation} reached the controller while the cache held {in_cache:?}"
            );
        }
        tx.send(Ok(Event::InitDone)).expect("send");
        let (generation, in_cache) = tokio::time::timeout(Duration::from_secs(4), async {
            loop {
                let event = follower.next().await.expect("an event").expect("ok");
                if let Some(generation) = generation_of(&event)
                    && generation == 2
                {
                    return (generation, cached());
                }
            }
        })
        .await
        .expect("the relisted object reaches the controller");
        assert_eq!((generation, in_cache), (2, Some(2)));
    }

    #[tokio::test]
    async fn without_standby_a_list_is_passed_on_once_the_cache_holds_it() {
        use kube::runtime::reflector::{self, ObjectRef};
        use kube::runtime::watcher::Event;

        let (tx, events) = scripted();
        let (reader, writer) = reflector::store();
        let settled = super::settled(events, super::Compacting::new(writer), reader.clone());
        futures::pin_mut!(settled);
        let key = ObjectRef::<ConfigMap>::new("a").within("default");
        let cached = || reader.get(&key).and_then(|obj| obj.metadata.generation);
        let mut seen = Vec::new();
        for generation in [1, 2] {
            tx.send(Ok(Event::Init)).expect("send");
            tx.send(Ok(Event::InitApply(at_generation(generation))))
                .expect("send");
            let first = settled.next().await.expect("an event").expect("ok");
            assert!(
                matches!(first, Event::Init),
                "the list's Init comes at once"
            );
            let early = tokio::time::timeout(Duration::from_millis(200), settled.next()).await;
            assert!(early.is_err(), "nothing before the list is done");
            tx.send(Ok(Event::InitDone)).expect("send");
            loop {
                let event = settled.next().await.expect("an event").expect("ok");
                if let Some(g) = generation_of(&event) {
                    seen.push((g, cached()));
                }
                if matches!(event, Event::InitDone) {
                    break;
                }
            }
        }
        assert_eq!(seen, [(1, Some(1)), (2, Some(2))]);
        let mut changed = at_generation(3);
        changed.metadata.resource_version = Some("30".to_owned());
        tx.send(Ok(Event::Apply(changed))).expect("send");
        let event = settled.next().await.expect("an event").expect("ok");
        assert_eq!((generation_of(&event), cached()), (Some(3), Some(3)));
    }
}
