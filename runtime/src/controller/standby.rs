//! Warm standby: the cache of a controller made by `generation_changed` is filled and kept in
//! sync from the moment the controller is made, by a task of its own, on every replica, leading
//! or not. The controller, once its manager leads and runs it, starts from the cache as it is:
//! its objects as one relist (so each wakes the controller once), then the events the watch
//! applies from then on. A replica that takes the Lease over reconciles at once, without a
//! list of its own first.

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
    let (fill, filled) = watch::channel(false);
    let task = tokio::spawn(async move {
        futures::pin_mut!(events);
        while let Some(item) = events.next().await {
            match item {
                Ok(event) => {
                    store.apply(&event);
                    if matches!(event, Event::InitDone) {
                        fill.send_replace(true);
                    }
                    // nobody follows before the controller runs: the event is dropped
                    let _ = applied.send(Arc::new(event));
                }
                Err(error) => tracing::warn!(%error, "watch failed; retrying"),
            }
        }
    });
    let state = Following {
        sender,
        receiver: None,
        filled,
        reader,
        relisting: None,
        _task: AbortOnDrop(task.abort_handle()),
    };
    futures::stream::unfold(state, |mut state| async move {
        let event = state.next().await?;
        Some((Ok(event), state))
    })
}

struct Following<K: Resource + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    sender: broadcast::Sender<Arc<Event<K>>>,
    receiver: Option<broadcast::Receiver<Arc<Event<K>>>>,
    /// Whether the cache was filled by a first list.
    filled: watch::Receiver<bool>,
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
        let Some(receiver) = self.receiver.as_mut() else {
            // first: follow the task's events, then take the cache as it is once filled
            // (an event sent in between comes again after it, and wakes nothing new)
            self.receiver = Some(self.sender.subscribe());
            // not the store's own `wait_until_ready`: it wakes one waiter only, and the
            // controller waits on it too
            self.filled.wait_for(|filled| *filled).await.ok()?;
            self.relisting = Some(self.reader.state().into_iter());
            return Some(Event::Init);
        };
        match receiver.recv().await {
            Ok(event) => Some(event.as_ref().clone()),
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(
                    missed,
                    "the controller fell behind its watch; starting again from the cache"
                );
                self.relisting = Some(self.reader.state().into_iter());
                Some(Event::Init)
            }
            Err(broadcast::error::RecvError::Closed) => None,
        }
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
}
