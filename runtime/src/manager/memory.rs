//! Giving freed memory back to the system once the controllers have gone quiet.
//!
//! glibc's allocator keeps the pages its heap was freed in, to reuse them, and gives back only
//! what lies at the top of a heap: after a burst of work (a thousand objects reconciled, then
//! deleted) the process holds the burst's pages although it no longer uses them. The manager
//! watches the reconciles ([`Activity`], fed by [`Metrics`](super::Metrics)), and once some
//! have ended and none has started or ended for [`QUIET`], asks the allocator to return its
//! free pages, on a blocking thread. Other allocators (and other C libraries) return pages on
//! their own terms; there the call does nothing.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How long the reconciles must have been quiet before freed memory is returned.
pub(crate) const QUIET: Duration = Duration::from_secs(1);

/// Reconciles started and ended, as the manager's idle watch reads them.
#[derive(Debug, Default)]
pub(crate) struct Activity {
    /// Reconciles started or ended so far.
    changes: AtomicU64,
    /// Reconciles running now.
    running: AtomicUsize,
    /// Woken when a reconcile ends.
    ended: Notify,
}

impl Activity {
    pub(crate) fn started(&self) {
        self.running.fetch_add(1, Ordering::SeqCst);
        self.changes.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn ended(&self) {
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.changes.fetch_add(1, Ordering::SeqCst);
        self.ended.notify_one();
    }

    fn changes(&self) -> u64 {
        self.changes.load(Ordering::SeqCst)
    }

    fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }
}

/// Calls `release` (on a blocking thread) each time the reconciles go quiet after work, until
/// `stop`; the manager passes [`release_freed_memory`].
pub(crate) async fn release_when_idle(
    activity: std::sync::Arc<Activity>,
    quiet: Duration,
    release: fn() -> bool,
    stop: CancellationToken,
) {
    let mut released_at = activity.changes();
    loop {
        tokio::select! {
            () = activity.ended.notified() => {}
            () = stop.cancelled() => return,
        }
        // wait for a quiet spell: no reconcile started or ended during it, none running
        loop {
            let seen = activity.changes();
            tokio::select! {
                () = tokio::time::sleep(quiet) => {}
                () = stop.cancelled() => return,
            }
            if activity.changes() == seen && activity.running() == 0 {
                break;
            }
        }
        // an ending noticed during the last wait left a wake-up behind: nothing new since
        let now = activity.changes();
        if now == released_at {
            continue;
        }
        released_at = now;
        match tokio::task::spawn_blocking(release).await {
            Ok(released) => tracing::debug!(released, "returned freed memory to the system"),
            Err(e) => tracing::warn!(error = %e, "returning freed memory failed"),
        }
    }
}

/// Largest allocation served from a heap, and the free space above a heap's top it keeps: a
/// larger block is mapped on its own and unmapped when freed, and more free space at the top
/// is returned at once.
const MAP_ABOVE: i32 = 128 * 1024;

/// Sets glibc's allocator up for a long-running operator, as [`Manager::new`](super::Manager::new)
/// does before anything else: at most two arenas (heaps), so that the pages the work of a burst
/// left behind are not spread over one heap per thread; and a fixed threshold of
/// 128 KiB (`MAP_ABOVE`) for mapping large blocks on their own and for trimming a heap's top, where
/// glibc's default raises both after the first large block is freed (a watch's list page), so
/// that later ones stay on the heap among small ones. Threads that had allocated before keep
/// the arenas they had. Whether every setting was taken; elsewhere it does nothing and returns
/// `false`.
pub fn tune_allocator() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: mallopt takes two plain integers, changes only the allocator's own parameters
    // under its lock, and is safe to call from any thread at any time.
    let taken = [
        (libc::M_ARENA_MAX, 2),
        (libc::M_MMAP_THRESHOLD, MAP_ABOVE),
        (libc::M_TRIM_THRESHOLD, MAP_ABOVE),
        (libc::M_TOP_PAD, 0),
    ]
    .into_iter()
    .all(|(param, value)| unsafe { libc::mallopt(param, value) } == 1);
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let taken = false;
    taken
}

/// Asks the allocator to return the free pages of its heaps to the system; whether it
/// returned any. With glibc this is `malloc_trim(0)`, which walks every arena and releases its
/// free pages, not only those at a heap's top; elsewhere it does nothing and returns `false`.
pub fn release_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: malloc_trim takes a plain integer (the bytes to leave free at the top of the main
    // heap), touches only the allocator's own state under the allocator's locks, and is safe to
    // call from any thread at any time, alongside allocations on other threads.
    let released = unsafe { libc::malloc_trim(0) } == 1;
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let released = false;
    released
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    static RELEASES: AtomicUsize = AtomicUsize::new(0);

    fn count_release() -> bool {
        RELEASES.fetch_add(1, Ordering::SeqCst);
        true
    }

    fn releases() -> usize {
        RELEASES.load(Ordering::SeqCst)
    }

    /// One release per quiet spell after work: none before the reconciles are quiet, none
    /// while one runs, none again without new work.
    #[tokio::test(start_paused = true)]
    async fn releases_once_per_quiet_spell_after_work() {
        let activity = Arc::new(Activity::default());
        let stop = CancellationToken::new();
        let watch = tokio::spawn(release_when_idle(
            activity.clone(),
            QUIET,
            count_release,
            stop.clone(),
        ));
        let pause = |ms| tokio::time::sleep(Duration::from_millis(ms));
        pause(5000).await;
        assert_eq!(releases(), 0, "no work, no release");

        // a burst of reconciles, some overlapping, closer together than the quiet spell
        for _ in 0..4 {
            activity.started();
            activity.started();
            activity.ended();
            pause(600).await;
            activity.ended();
            pause(300).await;
        }
        assert_eq!(releases(), 0, "not quiet yet");
        pause(2500).await;
        assert_eq!(releases(), 1, "released once the burst was over");
        pause(10_000).await;
        assert_eq!(releases(), 1, "nothing new, no second release");

        // a long reconcile holds the release off until it ends
        activity.started();
        activity.started();
        activity.ended();
        pause(10_000).await;
        assert_eq!(releases(), 1, "a reconcile is still running");
        activity.ended();
        pause(2500).await;
        assert_eq!(releases(), 2);

        stop.cancel();
        tokio::time::timeout(Duration::from_secs(1), watch)
            .await
            .expect("stops on the signal")
            .expect("join");
    }

    #[test]
    fn the_allocator_takes_every_setting_where_it_is_glibc() {
        let expected = cfg!(all(target_os = "linux", target_env = "gnu"));
        assert_eq!(tune_allocator(), expected);
        // and it allocates, large blocks and small, as before
        let large = vec![7u8; 4 * MAP_ABOVE as usize];
        let small: Vec<Box<u64>> = (0..1000).map(Box::new).collect();
        assert!(large.iter().all(|&b| b == 7));
        assert_eq!(small.iter().map(|b| **b).sum::<u64>(), 499_500);
    }

    #[test]
    fn releasing_memory_is_harmless_at_any_time() {
        let held: Vec<Vec<u8>> = (0..1000).map(|i| vec![1; 1024 + i]).collect();
        let kept = held.iter().step_by(2).cloned().collect::<Vec<_>>();
        drop(held);
        let _ = release_freed_memory();
        assert!(kept.iter().all(|v| v.iter().all(|&b| b == 1)));
    }
}
