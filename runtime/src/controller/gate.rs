//! Triggers held back until kube's controller is ready to start their reconciles, so that a
//! backlog waits in a compact queue of ours rather than in kube's scheduler.
//!
//! kube's controller takes every trigger its stream offers at once and keeps it, until a
//! reconcile slot is free, as a request holding copies of the object's name, namespace, uid and
//! resource version, in a hash set and a delay queue that keep the room they grew to. A hundred
//! thousand objects created faster than they are reconciled cost several hundred bytes each
//! there, as long as the backlog lasts and (the room) after. [`Gated`] takes the triggers as
//! they come (the watch behind them never waits) and hands kube at most [`HANDED`] objects whose
//! reconcile has not started yet; each waiting object costs an entry of 32 bytes in a queue and
//! one of 16 in a set, and shares the cached object itself. [`Gate::started`], called as a
//! reconcile starts, makes room for the next.
//!
//! An object is waiting or handed at most once: a trigger for it then changes nothing, since
//! the reconcile to come reads the object from the cache as it is by then. An object the watch
//! reports deleted, or that a relist no longer holds, stops waiting and no longer counts as
//! handed (kube's controller finds no object for its request and runs no reconcile).

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use futures::task::AtomicWaker;
use futures::{Stream, StreamExt};
use kube::Resource;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::{self, Event};

use super::wakes::object_digest;

/// How many objects kube's controller may hold whose reconcile has not started: enough to keep
/// every reconcile slot busy (at most [`CONCURRENT_RECONCILES`](super::CONCURRENT_RECONCILES) by
/// default), few enough that its scheduler stays small.
pub(crate) const HANDED: usize = 64;

/// How many triggers one poll takes from the stream before it hands one on and polls again.
const TAKE_AT_ONCE: usize = 1024;

/// The objects waiting and those handed to kube's controller; shared by the [`Gated`] stream,
/// the event filter that tells it of deletions and the reconciles that tell it they started.
pub(crate) struct Gate<K: Resource + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    state: Arc<Mutex<State<K>>>,
    /// The gated stream, woken when room is made.
    waker: Arc<AtomicWaker>,
    reader: Store<K>,
}

impl<K: Resource + 'static> Clone for Gate<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    fn clone(&self) -> Self {
        Self {
            state: self.state.clone(),
            waker: self.waker.clone(),
            reader: self.reader.clone(),
        }
    }
}

struct State<K> {
    /// Objects in the order they were woken; an entry whose digest is no longer in `held` was
    /// forgotten and is skipped.
    queue: VecDeque<(u128, Arc<K>)>,
    held: HashSet<u128>,
    /// Handed to kube's controller, reconcile not started: the object as it was handed.
    handed: HashMap<u128, Arc<K>>,
}

impl<K> Default for State<K> {
    fn default() -> Self {
        Self {
            queue: VecDeque::new(),
            held: HashSet::new(),
            handed: HashMap::new(),
        }
    }
}

impl<K> State<K> {
    /// Gives back the room of a queue emptied by a backlog.
    fn shrink_emptied(&mut self) {
        if self.held.is_empty() {
            self.queue = VecDeque::new();
            self.held = HashSet::new();
        }
    }
}

impl<K> Gate<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    /// A gate for the objects cached in `reader`.
    pub(crate) fn new(reader: Store<K>) -> Self {
        Self {
            state: Arc::default(),
            waker: Arc::default(),
            reader,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A reconcile of `obj` started: it is no longer handed, and the next may be. Nor does it
    /// wait: a trigger taken before now announced a state the cache held already, which the
    /// reconcile reads (a requeue of kube's own can start it while it waits here).
    pub(crate) fn started(&self, obj: &K) {
        let digest = object_digest(obj);
        let mut state = self.lock();
        let removed = state.handed.remove(&digest).is_some();
        state.held.remove(&digest);
        state.shrink_emptied();
        drop(state);
        if removed {
            self.waker.wake();
        }
    }

    /// Before `event` is looked at: an object it reports deleted, or (at the end of a relist)
    /// the objects the cache no longer holds, neither wait nor count as handed.
    pub(crate) fn forget_gone(&self, event: &Event<K>) {
        let mut state = self.lock();
        match event {
            Event::Delete(obj) => {
                let digest = object_digest(obj);
                state.held.remove(&digest);
                state.handed.remove(&digest);
            }
            Event::InitDone => {
                let State {
                    queue,
                    held,
                    handed,
                } = &mut *state;
                for (digest, obj) in queue.iter() {
                    if held.contains(digest) && !self.holds(obj) {
                        held.remove(digest);
                    }
                }
                handed.retain(|_, obj| self.holds(obj));
            }
            _ => return,
        }
        state.shrink_emptied();
        drop(state);
        self.waker.wake();
    }

    /// Whether the cache holds `obj` (the same object: the same uid).
    fn holds(&self, obj: &K) -> bool {
        self.cached(obj).is_some()
    }

    /// The cached `obj` (the same object: the same uid).
    fn cached(&self, obj: &K) -> Option<Arc<K>> {
        self.reader
            .get(&ObjectRef::from_obj(obj))
            .filter(|cached| cached.meta().uid == obj.meta().uid)
    }

    /// Takes the trigger `obj` in: it waits, unless it waits or is handed already.
    fn take(&self, state: &mut State<K>, obj: K) {
        let digest = object_digest(&obj);
        if state.handed.contains_key(&digest) || !state.held.insert(digest) {
            return;
        }
        // the cached object itself, shared; the trigger's copy goes now
        match self.cached(&obj) {
            Some(cached) => state.queue.push_back((digest, cached)),
            // gone from the cache already: kube's controller would run no reconcile
            None => {
                state.held.remove(&digest);
            }
        }
    }

    /// The next object to hand on, if there is room.
    fn next_handed(&self, state: &mut State<K>) -> Option<K> {
        if state.handed.len() >= HANDED {
            return None;
        }
        while let Some((digest, obj)) = state.queue.pop_front() {
            if state.held.remove(&digest) {
                let handed = obj.as_ref().clone();
                state.handed.insert(digest, obj);
                state.shrink_emptied();
                return Some(handed);
            }
        }
        state.shrink_emptied();
        None
    }

    /// How many objects wait, and how many are handed.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (usize, usize) {
        let state = self.lock();
        (state.held.len(), state.handed.len())
    }
}

/// `triggers` through `gate`: taken as they come, handed on while there is room. Errors pass
/// at once.
pub(crate) struct Gated<S, K: Resource + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    triggers: S,
    gate: Gate<K>,
    ended: bool,
}

impl<S, K> Gated<S, K>
where
    K: Resource + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    pub(crate) fn new(triggers: S, gate: Gate<K>) -> Self {
        Self {
            triggers,
            gate,
            ended: false,
        }
    }
}

impl<S, K> Stream for Gated<S, K>
where
    S: Stream<Item = watcher::Result<K>> + Unpin,
    K: Resource + Clone + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Unpin,
{
    type Item = watcher::Result<K>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        this.gate.waker.register(cx.waker());
        let mut taken = 0;
        while !this.ended && taken < TAKE_AT_ONCE {
            match this.triggers.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(obj))) => {
                    this.gate.take(&mut this.gate.lock(), obj);
                    taken += 1;
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => this.ended = true,
                Poll::Pending => break,
            }
        }
        let gate = &this.gate;
        let mut state = gate.lock();
        if let Some(obj) = gate.next_handed(&mut state) {
            return Poll::Ready(Some(Ok(obj)));
        }
        if this.ended && state.held.is_empty() {
            return Poll::Ready(None);
        }
        if taken == TAKE_AT_ONCE {
            // more may be ready: poll again, after others had their turn
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::rebuild::tests as rebuild_tests;
    use crate::controller::tests::config_map;
    use futures::FutureExt;
    use futures::channel::mpsc;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::ResourceExt;
    use kube::runtime::reflector;
    use std::time::Duration;

    fn object(name: &str) -> ConfigMap {
        let mut cm = config_map("ns", name);
        cm.metadata.uid = Some(format!("uid-{name}"));
        cm
    }

    /// A cache holding `names`, its gate, and the gated stream of the triggers sent on the
    /// returned sender.
    #[allow(clippy::type_complexity)]
    fn world(
        names: &[String],
    ) -> (
        reflector::store::Writer<ConfigMap>,
        Gate<ConfigMap>,
        mpsc::UnboundedSender<watcher::Result<ConfigMap>>,
        Gated<mpsc::UnboundedReceiver<watcher::Result<ConfigMap>>, ConfigMap>,
    ) {
        let (reader, mut writer) = reflector::store::<ConfigMap>();
        for name in names {
            writer.apply_watcher_event(&Event::Apply(object(name)));
        }
        let gate = Gate::new(reader);
        let (sender, receiver) = mpsc::unbounded();
        let gated = Gated::new(receiver, gate.clone());
        (writer, gate, sender, gated)
    }

    /// What the gated stream hands on now, without waiting.
    fn handed_now(
        gated: &mut Gated<mpsc::UnboundedReceiver<watcher::Result<ConfigMap>>, ConfigMap>,
    ) -> Vec<String> {
        let mut names = Vec::new();
        while let Some(Some(item)) = gated.next().now_or_never() {
            names.push(item.expect("no error").name_any());
        }
        names
    }

    fn names(range: std::ops::Range<usize>) -> Vec<String> {
        range.map(|i| format!("o{i:03}")).collect()
    }

    #[test]
    fn a_backlog_waits_in_the_gate_and_kube_is_handed_at_most_its_bound() {
        let all = names(0..200);
        let (_writer, gate, sender, mut gated) = world(&all);
        for name in &all {
            sender.unbounded_send(Ok(object(name))).expect("send");
        }
        // the first HANDED, in the order they were woken; the rest wait
        assert_eq!(handed_now(&mut gated), all[..HANDED]);
        assert_eq!(gate.counts(), (200 - HANDED, HANDED));
        // two reconciles start: two more are handed
        gate.started(&object("o000"));
        gate.started(&object("o001"));
        assert_eq!(handed_now(&mut gated), all[HANDED..HANDED + 2]);
        assert_eq!(gate.counts(), (200 - HANDED - 2, HANDED));
    }

    #[test]
    fn an_object_waiting_or_handed_is_taken_once() {
        let all = names(0..HANDED + 2);
        let (_writer, gate, sender, mut gated) = world(&all);
        for name in all.iter().chain(&all) {
            sender.unbounded_send(Ok(object(name))).expect("send");
        }
        assert_eq!(handed_now(&mut gated), all[..HANDED]);
        assert_eq!(gate.counts(), (2, HANDED), "each object once");
        // woken again while handed: kube's reconcile to come reads it from the cache
        sender.unbounded_send(Ok(object("o000"))).expect("send");
        assert_eq!(handed_now(&mut gated), Vec::<String>::new());
        assert_eq!(gate.counts(), (2, HANDED));
        // once its reconcile has started, a new trigger waits again
        gate.started(&object("o000"));
        sender.unbounded_send(Ok(object("o000"))).expect("send");
        assert_eq!(handed_now(&mut gated), [all[HANDED].clone()]);
        assert_eq!(gate.counts(), (2, HANDED));
    }

    #[test]
    fn deleted_objects_neither_wait_nor_count_as_handed() {
        let all = names(0..HANDED + 10);
        let (mut writer, gate, sender, mut gated) = world(&all);
        for name in &all {
            sender.unbounded_send(Ok(object(name))).expect("send");
        }
        assert_eq!(handed_now(&mut gated).len(), HANDED);
        // one handed and five waiting are deleted
        for name in ["o000", "o064", "o065", "o066", "o067", "o068"] {
            writer.apply_watcher_event(&Event::Delete(object(name)));
            gate.forget_gone(&Event::Delete(object(name)));
        }
        assert_eq!(gate.counts(), (5, HANDED - 1));
        // room for one: the first still waiting
        assert_eq!(handed_now(&mut gated), ["o069"]);
        // a relist that no longer holds o001 (handed) and o070 (waiting) forgets them
        writer.apply_watcher_event(&Event::Delete(object("o001")));
        writer.apply_watcher_event(&Event::Delete(object("o070")));
        gate.forget_gone(&Event::InitDone);
        assert_eq!(gate.counts(), (3, HANDED - 1));
        assert_eq!(handed_now(&mut gated), ["o071"]);
        // a trigger for an object gone from the cache is dropped
        sender.unbounded_send(Ok(object("gone"))).expect("send");
        assert_eq!(handed_now(&mut gated), Vec::<String>::new());
        assert_eq!(gate.counts(), (2, HANDED));
    }

    #[test]
    fn the_gated_stream_ends_once_its_triggers_ended_and_none_wait() {
        let all = names(0..3);
        let (_writer, _gate, sender, mut gated) = world(&all);
        for name in &all {
            sender.unbounded_send(Ok(object(name))).expect("send");
        }
        drop(sender);
        assert_eq!(handed_now(&mut gated), all);
        assert!(matches!(gated.next().now_or_never(), Some(None)));
    }

    /// A backlog several times the gate's bound (and the reconciles' bound): every object
    /// reconciled once, none left behind.
    #[tokio::test]
    async fn a_controller_behind_a_gate_reconciles_a_backlog_once_each() {
        let fake = crate::fake::FakeApi::new();
        let all = names(0..HANDED * 4);
        for name in &all {
            fake.seed(&config_map("default", name));
        }
        let (_api, _builds, seen, task) = rebuild_tests::start(&fake);
        let done = rebuild_tests::eventually(10, || seen.lock().expect("lock").len() >= all.len());
        assert!(done.await);
        tokio::time::sleep(Duration::from_millis(200)).await;
        task.abort();
        let mut reconciled = seen.lock().expect("lock").clone();
        reconciled.sort();
        assert_eq!(reconciled, all, "each object reconciled once");
    }
}
