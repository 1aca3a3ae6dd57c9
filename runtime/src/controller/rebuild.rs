//! A controller rebuilt once a mass deletion has emptied its cache, so that kube's scheduler
//! gives back the room it grew to.
//!
//! kube's controller keeps the objects waiting for a reconcile in its scheduler: a hash set of
//! the requests held while every reconcile slot is busy, a hash map and a delay queue of the
//! scheduled ones. None of them shrinks when emptied, and none can be reached from outside: a
//! backlog of a hundred thousand objects leaves tables for a hundred thousand behind after
//! every object is gone. [`Rebuilding`] drops the controller and
//! builds it again, on the same trigger stream and cache, once the cache is empty and no
//! reconcile runs. Nothing waiting can be lost then: every request the old scheduler held
//! names an object the cache no longer holds, for which kube's controller would run no
//! reconcile, and a trigger not yet taken stays in the stream, which the new controller
//! follows from where the old one left it.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::{Stream, StreamExt};

/// How often a controller that has been woken more than [`MIN_WOKEN`] times since it was built
/// checks whether it can be rebuilt.
pub(crate) const CHECK_EVERY: Duration = Duration::from_secs(1);

/// Below this many wakes since it was built, a controller is never rebuilt: its scheduler's
/// tables are small.
pub(crate) const MIN_WOKEN: usize = 64;

/// A stream lent to one controller after another: each [`Lent`] polls the same stream, so a
/// controller built after another one was dropped goes on where it stopped.
pub(crate) struct Lender<S> {
    stream: Arc<Mutex<S>>,
    /// Items taken since [`Rebuilding`] last built a controller.
    taken: Arc<AtomicUsize>,
}

impl<S> Lender<S> {
    pub(crate) fn new(stream: S) -> Self {
        Self {
            stream: Arc::new(Mutex::new(stream)),
            taken: Arc::default(),
        }
    }

    /// The stream, for one controller.
    pub(crate) fn lend(&self) -> Lent<S> {
        Lent {
            stream: self.stream.clone(),
            taken: self.taken.clone(),
        }
    }

    /// The count of items taken, which [`Rebuilding`] resets on each build.
    pub(crate) fn taken(&self) -> Arc<AtomicUsize> {
        self.taken.clone()
    }
}

/// The lent stream; see [`Lender`].
pub(crate) struct Lent<S> {
    stream: Arc<Mutex<S>>,
    taken: Arc<AtomicUsize>,
}

impl<S: Stream + Unpin> Stream for Lent<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut stream = self.stream.lock().unwrap_or_else(PoisonError::into_inner);
        let next = stream.poll_next_unpin(cx);
        if let Poll::Ready(Some(_)) = &next {
            self.taken.fetch_add(1, Ordering::SeqCst);
        }
        next
    }
}

/// Reconciles running now: a [`Running`] is held by each for as long as it runs.
#[derive(Debug, Default, Clone)]
pub(crate) struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    pub(crate) fn enter(&self) -> Running {
        self.0.fetch_add(1, Ordering::SeqCst);
        Running(self.0.clone())
    }

    pub(crate) fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// One running reconcile of an [`InFlight`].
pub(crate) struct Running(Arc<AtomicUsize>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The controller `build` makes, followed item by item, and built again when `can_rebuild`
/// holds and no reconcile is `running`: checked every [`CHECK_EVERY`] while the controller has
/// been woken more than [`MIN_WOKEN`] times since it was built (`woken` counts them; reset on
/// each build).
pub(crate) struct Rebuilding<S, B, C> {
    current: Option<Pin<Box<S>>>,
    build: B,
    woken: Arc<AtomicUsize>,
    can_rebuild: C,
    running: InFlight,
}

impl<S, B, C> Rebuilding<S, B, C>
where
    S: Stream,
    B: FnMut() -> S,
    C: Fn() -> bool,
{
    pub(crate) fn new(
        build: B,
        woken: Arc<AtomicUsize>,
        can_rebuild: C,
        running: InFlight,
    ) -> Self {
        Self {
            current: None,
            build,
            woken,
            can_rebuild,
            running,
        }
    }

    /// The next item of the controller, rebuilding it in between when it may.
    pub(crate) async fn next(&mut self) -> Option<S::Item> {
        loop {
            let current = match self.current.as_mut() {
                Some(current) => current,
                None => {
                    self.woken.store(0, Ordering::SeqCst);
                    self.current.insert(Box::pin((self.build)()))
                }
            };
            if self.woken.load(Ordering::SeqCst) <= MIN_WOKEN {
                return current.next().await;
            }
            tokio::select! {
                item = current.next() => return item,
                () = tokio::time::sleep(CHECK_EVERY) => {}
            }
            if self.running.count() == 0 && (self.can_rebuild)() {
                // the old controller (its scheduler, its runner) goes before the new one is
                // built
                self.current = None;
                tracing::debug!("controller rebuilt, its cache emptied");
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::controller::run_generation_changed;
    use crate::controller::tests::config_map;
    use crate::watch::Source;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{DeleteParams, PostParams};
    use kube::runtime::controller::Action;
    use kube::runtime::watcher;
    use kube::{Api, ResourceExt};

    /// Waits up to `secs` for `done`.
    pub(in crate::controller) async fn eventually(
        secs: u64,
        mut done: impl FnMut() -> bool,
    ) -> bool {
        for _ in 0..secs * 50 {
            if done() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        done()
    }

    #[tokio::test]
    async fn a_stream_lent_again_goes_on_where_the_last_borrower_stopped() {
        let (sender, receiver) = futures::channel::mpsc::unbounded::<u32>();
        let lender = Lender::new(receiver);
        for i in 0..5 {
            sender.unbounded_send(i).expect("send");
        }
        let mut first = lender.lend();
        assert_eq!(first.next().await, Some(0));
        assert_eq!(first.next().await, Some(1));
        drop(first);
        let mut second = lender.lend();
        for i in 5..7 {
            sender.unbounded_send(i).expect("send");
        }
        drop(sender);
        let rest: Vec<u32> = second.by_ref().collect().await;
        assert_eq!(rest, vec![2, 3, 4, 5, 6]);
        assert_eq!(lender.taken().load(Ordering::SeqCst), 7);
    }

    /// Reconciles recorded by name.
    pub(in crate::controller) type Seen = Arc<Mutex<Vec<String>>>;

    /// A controller of the ConfigMaps in `default` on `fake`, recording each reconcile in the
    /// returned list, counting its builds.
    pub(in crate::controller) fn start(
        fake: &crate::fake::FakeApi,
    ) -> (
        Api<ConfigMap>,
        Arc<AtomicUsize>,
        Seen,
        tokio::task::JoinHandle<()>,
    ) {
        let api: Api<ConfigMap> = Api::namespaced(fake.client(), "default");
        let builds = Arc::new(AtomicUsize::new(0));
        let counted = builds.clone();
        let seen = Seen::default();
        let run = run_generation_changed(
            Source::new(api.clone(), watcher::Config::default()),
            move |controller| {
                counted.fetch_add(1, Ordering::SeqCst);
                controller
            },
            |obj: Arc<ConfigMap>, seen: Seen| async move {
                seen.lock().expect("lock").push(obj.name_any());
                Ok::<_, kube::Error>(Action::await_change())
            },
            |_, _, _| Action::await_change(),
            seen.clone(),
        );
        let task = tokio::spawn(run.for_each(|_| std::future::ready(())));
        (api, builds, seen, task)
    }

    /// A mass deletion that empties the cache rebuilds the controller; an object created after
    /// it is reconciled once, and every object before it was reconciled once.
    #[tokio::test]
    async fn a_controller_is_rebuilt_once_its_cache_is_emptied_and_misses_no_trigger() {
        let fake = crate::fake::FakeApi::new();
        let names: Vec<String> = (0..100).map(|i| format!("o{i:03}")).collect();
        for name in &names {
            fake.seed(&config_map("default", name));
        }
        let (api, builds, seen, task) = start(&fake);
        let reconciled = || seen.lock().expect("lock").clone();
        assert!(eventually(5, || reconciled().len() == 100).await);
        // objects still cached: not rebuilt, however long it is quiet
        tokio::time::sleep(CHECK_EVERY * 2 + Duration::from_millis(500)).await;
        assert_eq!(builds.load(Ordering::SeqCst), 1);
        for name in &names[..99] {
            api.delete(name, &DeleteParams::default())
                .await
                .expect("deleted");
        }
        tokio::time::sleep(CHECK_EVERY * 2 + Duration::from_millis(500)).await;
        assert_eq!(builds.load(Ordering::SeqCst), 1, "one object is left");
        api.delete(&names[99], &DeleteParams::default())
            .await
            .expect("deleted");
        assert!(
            eventually(5, || builds.load(Ordering::SeqCst) == 2).await,
            "rebuilt {} times",
            builds.load(Ordering::SeqCst) - 1
        );
        api.create(&PostParams::default(), &config_map("default", "after"))
            .await
            .expect("created");
        assert!(eventually(5, || reconciled().len() == 101).await);
        // the new controller, woken once, is not rebuilt again
        tokio::time::sleep(CHECK_EVERY * 2 + Duration::from_millis(500)).await;
        task.abort();
        let mut all = reconciled();
        all.sort();
        let mut expected = names.clone();
        expected.push("after".to_owned());
        expected.sort();
        assert_eq!(all, expected, "each object reconciled once");
        assert_eq!(builds.load(Ordering::SeqCst), 2);
    }
}
