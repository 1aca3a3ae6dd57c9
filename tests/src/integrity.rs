//! Nothing lost under load: a watch of a kind's objects records each one's `Ready` history and
//! its deletion, and a manager's reconcile log shows that no object was reconciled twice at
//! once or more often than its changes ask, and that every failed reconcile was tried again.
//! Used by the operator end-to-end test.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher;

use crate::takeover::Reconcile;

/// Whether `obj` has a `Ready=True` condition, for any generation.
pub fn ready_condition(obj: &DynamicObject) -> bool {
    conditions(obj).any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Whether `obj` has a `Ready=True` condition observed at its current generation.
pub fn ready_for_generation(obj: &DynamicObject) -> bool {
    let generation = obj.metadata.generation;
    conditions(obj).any(|c| {
        c["type"] == "Ready"
            && c["status"] == "True"
            && c["observedGeneration"].as_i64() == generation
    })
}

fn conditions(obj: &DynamicObject) -> impl Iterator<Item = &serde_json::Value> {
    obj.data["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
}

/// The `namespace/name` key of an object, as the manager's log names it.
pub fn key(obj: &DynamicObject) -> String {
    format!(
        "{}/{}",
        obj.metadata.namespace.as_deref().unwrap_or_default(),
        obj.metadata.name.as_deref().unwrap_or_default()
    )
}

/// What the watch saw of one object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// How often its `Ready` condition became `True` (from absent or another status).
    pub became_ready: u32,
    /// Whether `Ready` was `True` in the last state seen.
    pub ready: bool,
    /// How often it was seen deleted.
    pub deleted: u32,
    /// By generation: how often it became `Ready` observed at that generation (from a state
    /// that was not).
    pub ready_at: BTreeMap<i64, u32>,
    /// The generation it was last seen `Ready` for, while it still is.
    pub ready_for: Option<i64>,
    /// The last generation seen before its deletion began.
    pub generation: Option<i64>,
    /// Whether it exists in the last state seen.
    pub present: bool,
}

type Histories = Arc<Mutex<BTreeMap<String, History>>>;

/// A watch of every object of an `Api`, recording each one's [`History`] by `namespace/name`
/// until dropped. The watch lists and then follows every change; were it to lose its place and
/// list again, a state it did not see between the two is not recorded, and an object the new
/// list no longer holds is recorded as deleted then.
pub struct Recorder {
    histories: Histories,
    relists: Arc<Mutex<u32>>,
    task: tokio::task::JoinHandle<()>,
}

impl Recorder {
    /// Starts the watch and returns once its first list is done, so that no later change is
    /// missed.
    pub async fn start(api: Api<DynamicObject>) -> Recorder {
        let histories: Histories = Arc::default();
        let relists = Arc::new(Mutex::new(0));
        let (listed, first_list) = tokio::sync::oneshot::channel();
        let task = {
            let histories = histories.clone();
            let relists = relists.clone();
            tokio::spawn(async move {
                let mut listed = Some(listed);
                // the objects of the list under way
                let mut relisted: Option<std::collections::BTreeSet<String>> = None;
                let mut events = std::pin::pin!(watcher(api, watcher::Config::default()));
                while let Some(event) = events.next().await {
                    // an error waits a little before the watch tries again: a client whose
                    // runtime is shutting down fails every request at once, and a task that
                    // never waits would keep the runtime from ever stopping
                    let Ok(event) = event else {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    };
                    let mut histories = histories.lock().unwrap_or_else(|e| e.into_inner());
                    match event {
                        watcher::Event::Apply(obj) | watcher::Event::InitApply(obj) => {
                            if let Some(relisted) = relisted.as_mut() {
                                relisted.insert(key(&obj));
                            }
                            let h = histories.entry(key(&obj)).or_default();
                            h.present = true;
                            let now = ready_condition(&obj);
                            if now && !h.ready {
                                h.became_ready += 1;
                            }
                            h.ready = now;
                            let generation = obj.metadata.generation;
                            // deletion raises the generation of an object held by a
                            // finalizer; the last generation is the last one before it
                            if obj.metadata.deletion_timestamp.is_none() {
                                h.generation = generation;
                            }
                            if ready_for_generation(&obj) {
                                if h.ready_for != generation
                                    && let Some(g) = generation
                                {
                                    *h.ready_at.entry(g).or_default() += 1;
                                }
                                h.ready_for = generation;
                            } else {
                                h.ready_for = None;
                            }
                        }
                        watcher::Event::Delete(obj) => {
                            let h = histories.entry(key(&obj)).or_default();
                            h.deleted += 1;
                            h.ready = false;
                            h.ready_for = None;
                            h.present = false;
                        }
                        watcher::Event::Init => {
                            relisted = Some(std::collections::BTreeSet::new());
                            if listed.is_none() {
                                *relists.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                            }
                        }
                        watcher::Event::InitDone => {
                            // an object the list no longer holds was deleted while the watch
                            // was away: the list is how the watch sees that deletion
                            let listed_now = relisted.take().unwrap_or_default();
                            for (k, h) in histories.iter_mut() {
                                if h.present && !listed_now.contains(k) {
                                    h.deleted += 1;
                                    h.ready = false;
                                    h.ready_for = None;
                                    h.present = false;
                                }
                            }
                            if let Some(tx) = listed.take() {
                                let _ = tx.send(());
                            }
                        }
                    }
                }
            })
        };
        let _ = first_list.await;
        Recorder {
            histories,
            relists,
            task,
        }
    }

    /// The histories so far, by `namespace/name`.
    pub fn histories(&self) -> BTreeMap<String, History> {
        self.histories
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// How often the watch had to list again after its first list.
    pub fn relists(&self) -> u32 {
        *self.relists.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The problems in the histories of the `expected` objects (`namespace/name`): each must have
/// become `Ready` exactly once and been deleted exactly once, and the watch must have seen no
/// other object.
pub fn check_histories(histories: &BTreeMap<String, History>, expected: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for key in expected {
        match histories.get(key) {
            None => problems.push(format!("{key}: never seen by the watch")),
            Some(h) => {
                if h.became_ready != 1 {
                    problems.push(format!(
                        "{key}: became Ready {} times, not once",
                        h.became_ready
                    ));
                }
                if h.deleted != 1 {
                    problems.push(format!("{key}: seen deleted {} times, not once", h.deleted));
                }
            }
        }
    }
    for key in histories.keys() {
        if !expected.contains(key) {
            problems.push(format!("{key}: an object the test did not make"));
        }
    }
    problems
}

/// The problems in the histories of the `expected` objects (`namespace/name`) whose spec may
/// change: each became `Ready` at most once per generation, exactly once at the last generation
/// it had before its deletion began (a generation replaced before its reconcile may never be
/// `Ready`), unless it is one of `deleted_early` (deleted while perhaps never reconciled), and
/// was deleted exactly once; the watch saw no other object.
pub fn check_generations(
    histories: &BTreeMap<String, History>,
    expected: &[String],
    deleted_early: &[String],
) -> Vec<String> {
    let mut problems = Vec::new();
    for key in expected {
        let Some(h) = histories.get(key) else {
            problems.push(format!("{key}: never seen by the watch"));
            continue;
        };
        for (generation, times) in &h.ready_at {
            if *times > 1 {
                problems.push(format!(
                    "{key}: became Ready {times} times at generation {generation}"
                ));
            }
        }
        match h.generation {
            None => problems.push(format!("{key}: seen without a generation")),
            Some(_) if deleted_early.contains(key) => {}
            Some(last) if !h.ready_at.contains_key(&last) => {
                problems.push(format!("{key}: never Ready at its last generation {last}"))
            }
            Some(_) => {}
        }
        if h.deleted != 1 {
            problems.push(format!("{key}: seen deleted {} times, not once", h.deleted));
        }
    }
    for key in histories.keys() {
        if !expected.contains(key) {
            problems.push(format!("{key}: an object the test did not make"));
        }
    }
    problems
}

/// What [`check_reconciles`] counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReconcileCounts {
    /// Every reconcile of the expected objects.
    pub reconciles: usize,
    /// Those that failed, each followed by another reconcile of its object.
    pub retried_errors: usize,
}

/// The problems in a manager's `reconciles` of the `expected` objects (`namespace/name`), each
/// changed `changes` times while it ran: every reconcile finished; no two reconciles of one
/// object overlap (its key was never worked on twice at once); each object has exactly
/// `changes` reconciles that did not fail (one per change: a key queued twice would show a
/// second); every failed reconcile is followed by another of the same object (no error is
/// dropped without a retry). No reconcile of another object is expected either.
pub fn check_reconciles(
    reconciles: &[Reconcile],
    expected: &[String],
    changes: usize,
) -> Result<ReconcileCounts, Vec<String>> {
    check_reconciles_of(reconciles, expected, Some(changes), &[])
}

/// As [`check_reconciles`], but each object needs only at least one reconcile that did not
/// fail: under faults a reconcile whose writes were applied but whose answers were lost fails
/// and runs again, so the count of settled ones per change is not fixed.
///
/// An object of `deleted_early` (deleted while perhaps never reconciled: without the finalizer
/// it is gone at once) needs no reconcile, and its last failed one no retry.
pub fn check_reconciles_under_faults(
    reconciles: &[Reconcile],
    expected: &[String],
    deleted_early: &[String],
) -> Result<ReconcileCounts, Vec<String>> {
    check_reconciles_of(reconciles, expected, None, deleted_early)
}

fn check_reconciles_of(
    reconciles: &[Reconcile],
    expected: &[String],
    changes: Option<usize>,
    deleted_early: &[String],
) -> Result<ReconcileCounts, Vec<String>> {
    let mut problems = Vec::new();
    let mut by_object: BTreeMap<&str, Vec<&Reconcile>> = BTreeMap::new();
    for r in reconciles {
        by_object.entry(r.object.as_str()).or_default().push(r);
    }
    let mut counts = ReconcileCounts::default();
    for key in expected {
        let early = deleted_early.contains(key);
        let Some(mut runs) = by_object.remove(key.as_str()) else {
            if !early {
                problems.push(format!("{key}: never reconciled"));
            }
            continue;
        };
        runs.sort_by_key(|r| r.started);
        counts.reconciles += runs.len();
        for (i, r) in runs.iter().enumerate() {
            let Some(finished) = r.finished else {
                problems.push(format!(
                    "{key}: the reconcile started at {} never finished",
                    r.started
                ));
                continue;
            };
            if let Some(next) = runs.get(i + 1)
                && next.started < finished
            {
                problems.push(format!(
                    "{key}: reconciled twice at once (from {} to {finished}, and from {})",
                    r.started, next.started
                ));
            }
            if r.result.as_deref() == Some("error") {
                if i + 1 < runs.len() {
                    counts.retried_errors += 1;
                } else if !early {
                    problems.push(format!(
                        "{key}: the reconcile that failed at {finished} was never retried"
                    ));
                }
            }
        }
        let settled = runs
            .iter()
            .filter(|r| r.finished.is_some() && r.result.as_deref() != Some("error"))
            .count();
        match changes {
            Some(changes) if settled != changes => problems.push(format!(
                "{key}: {settled} reconciles that did not fail, for {changes} changes"
            )),
            None if settled == 0 && !early => {
                problems.push(format!("{key}: no reconcile that did not fail"));
            }
            _ => {}
        }
    }
    for key in by_object.keys() {
        problems.push(format!(
            "{key}: reconciled, but not an object the test made"
        ));
    }
    if problems.is_empty() {
        Ok(counts)
    } else {
        Err(problems)
    }
}

/// The most reconciles in flight at one instant, from their start and finish times: a bound on
/// the controller's concurrency holds when this stays within it. A reconcile that never
/// finished counts as running to the end; one that finishes at the instant another starts does
/// not overlap it.
pub fn most_at_once(reconciles: &[Reconcile]) -> usize {
    // (time, 0 for a finish, 1 for a start): at equal times the finishes come first
    let mut edges: Vec<_> = reconciles
        .iter()
        .flat_map(|r| {
            let finish = r.finished.map(|f| (f, 0u8));
            std::iter::once((r.started, 1u8)).chain(finish)
        })
        .collect();
    edges.sort();
    let (mut now, mut most) = (0usize, 0usize);
    for (_, edge) in edges {
        if edge == 1 {
            now += 1;
            most = most.max(now);
        } else {
            now = now.saturating_sub(1);
        }
    }
    most
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::Timestamp;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).expect("timestamp")
    }

    fn run(object: &str, start: i64, end: Option<i64>, result: &str) -> Reconcile {
        Reconcile {
            object: object.into(),
            started: t(start),
            finished: end.map(t),
            result: end.map(|_| result.into()),
        }
    }

    fn keys(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| format!("default/{n}")).collect()
    }

    #[test]
    fn most_at_once_counts_overlapping_reconciles_of_any_object() {
        let log = [
            run("default/a", 1, Some(5), "success"),
            run("default/b", 2, Some(4), "success"),
            run("default/c", 3, None, "success"),
            // starts when b finishes: b and d do not overlap
            run("default/d", 4, Some(6), "success"),
            run("default/e", 7, Some(8), "success"),
        ];
        assert_eq!(most_at_once(&log), 3);
        assert_eq!(most_at_once(&log[4..]), 1);
        assert_eq!(most_at_once(&[]), 0);
    }

    #[test]
    fn a_clean_run_passes_and_counts_its_retries() {
        let log = [
            run("default/a", 1, Some(2), "error"),
            run("default/a", 3, Some(4), "requeue_after"),
            run("default/b", 1, Some(2), "requeue_after"),
            run("default/a", 10, Some(11), "success"),
            run("default/b", 10, Some(11), "success"),
        ];
        assert_eq!(
            check_reconciles(&log, &keys(&["a", "b"]), 2),
            Ok(ReconcileCounts {
                reconciles: 5,
                retried_errors: 1
            })
        );
    }

    #[test]
    fn overlaps_duplicates_dropped_errors_and_strangers_are_problems() {
        let log = [
            // a: two at once
            run("default/a", 1, Some(5), "success"),
            run("default/a", 3, Some(4), "success"),
            // b: a third reconcile for two changes, as a key queued twice would give
            run("default/b", 1, Some(2), "success"),
            run("default/b", 3, Some(4), "success"),
            run("default/b", 5, Some(6), "success"),
            // c: the last reconcile failed and nothing followed; d: never finished
            run("default/c", 1, Some(2), "success"),
            run("default/c", 3, Some(4), "error"),
            run("default/d", 1, None, ""),
            run("default/x", 1, Some(2), "success"),
        ];
        let problems =
            check_reconciles(&log, &keys(&["a", "b", "c", "d", "e"]), 2).expect_err("problems");
        let expected = [
            "default/a: reconciled twice at once",
            "default/b: 3 reconciles that did not fail, for 2 changes",
            "default/c: the reconcile that failed at",
            "default/c: 1 reconciles that did not fail",
            "default/d: the reconcile started at",
            "default/d: 0 reconciles that did not fail",
            "default/e: never reconciled",
            "default/x: reconciled, but not an object the test made",
        ];
        for start in expected {
            assert!(
                problems.iter().any(|p| p.starts_with(start)),
                "no problem starting {start:?} in {problems:#?}"
            );
        }
        assert_eq!(problems.len(), expected.len(), "{problems:#?}");
    }

    #[test]
    fn histories_need_one_ready_and_one_deletion_each() {
        let h = |became_ready, deleted| History {
            became_ready,
            ready: false,
            deleted,
            ..History::default()
        };
        let histories: BTreeMap<String, History> = [
            ("default/a", h(1, 1)),
            ("default/b", h(2, 1)),
            ("default/c", h(1, 0)),
            ("default/x", h(1, 1)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(
            check_histories(&histories, &keys(&["a", "b", "c", "d"])),
            [
                "default/b: became Ready 2 times, not once",
                "default/c: seen deleted 0 times, not once",
                "default/d: never seen by the watch",
                "default/x: an object the test did not make",
            ]
        );
    }

    #[test]
    fn generations_need_one_ready_each_and_the_last_one_ready() {
        let h = |ready_at: &[(i64, u32)], generation, deleted| History {
            ready_at: ready_at.iter().copied().collect(),
            generation: Some(generation),
            deleted,
            ..History::default()
        };
        let histories: BTreeMap<String, History> = [
            ("default/a", h(&[(1, 1), (2, 1)], 2, 1)),
            ("default/b", h(&[(2, 1)], 2, 1)),
            ("default/c", h(&[(1, 2), (2, 1)], 2, 1)),
            ("default/d", h(&[(1, 1)], 2, 1)),
            ("default/e", h(&[(1, 1)], 1, 2)),
            ("default/g", h(&[], 1, 1)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(
            check_generations(
                &histories,
                &keys(&["a", "b", "c", "d", "e", "f", "g"]),
                &keys(&["g"])
            ),
            [
                "default/c: became Ready 2 times at generation 1",
                "default/d: never Ready at its last generation 2",
                "default/e: seen deleted 2 times, not once",
                "default/f: never seen by the watch",
            ]
        );
    }

    #[test]
    fn under_faults_a_settled_reconcile_may_repeat() {
        let runs = [
            run("default/a", 0, Some(1), "success"),
            run("default/a", 2, Some(3), "success"),
            run("default/b", 0, Some(1), "error"),
        ];
        let problems = check_reconciles_under_faults(&runs, &keys(&["a", "b", "c"]), &[])
            .expect_err("b never settled");
        assert_eq!(
            problems,
            [
                "default/b: the reconcile that failed at 2027-01-15T08:00:01Z was never retried",
                "default/b: no reconcile that did not fail",
                "default/c: never reconciled",
            ]
        );
        let counts =
            check_reconciles_under_faults(&runs, &keys(&["a", "b", "c"]), &keys(&["b", "c"]))
                .expect("b and c were deleted early; a settled twice");
        assert_eq!(counts.reconciles, 3);
    }
}
