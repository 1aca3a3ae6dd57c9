//! The threads the pipeline runs on: a pool shared by the file reads and the emitters, whose
//! threads have room for the deepest source the scan accepts.

/// Stack of the threads the scan parses and emits on: room for
/// [`MAX_NESTING`](super::summary::MAX_NESTING) levels of syn's recursion in a debug build,
/// whatever stack the caller's thread has.
pub(crate) const SCAN_STACK: usize = 64 << 20;

/// The pipeline's thread pool (threads with [`SCAN_STACK`] bytes of stack), built on first use;
/// `None` when no thread can be started.
pub(crate) fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("operator-gen-scan-{i}"))
            .stack_size(SCAN_STACK)
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `work` inside the pool, so its parallel iterators use threads with the scan's stack
/// (inline when there is no pool: rayon then runs them on the caller's thread).
pub(crate) fn in_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    match pool() {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// Runs `work` on a thread with [`SCAN_STACK`] bytes of stack (inline when no thread can be
/// started): the scan and the emitters recurse once per nesting level of the source.
pub(crate) fn on_scan_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    // the pool's threads have that stack: one of them runs it, and no thread is started
    if let Some(pool) = pool() {
        return pool.install(work);
    }
    let mut work = Some(work);
    let done = std::thread::scope(|scope| {
        let slot = &mut work;
        let spawned = std::thread::Builder::new()
            .name("operator-gen-scan".into())
            .stack_size(SCAN_STACK)
            .spawn_scoped(scope, move || slot.take().map(|w| w()));
        match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Err(_) => None,
        }
    });
    match (done, work.take()) {
        (Some(value), _) => value,
        (None, Some(w)) => w(),
        (None, None) => unreachable!("the scan thread took its work and returned nothing"),
    }
}
