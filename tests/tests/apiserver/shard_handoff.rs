//! Safe hand-off of shards across replicas, against a real kube-apiserver: managers of the
//! runtime in one process, each a replica electing on its shard's Lease with short timings, run
//! one controller of `Captain`s (`generation_changed_from`, its shard's objects only) whose
//! reconcile reads the object, and, unless it is already `Ready` for its generation, does a
//! little work and writes `Ready=True` with that `observedGeneration`.
//!
//! Under load (a stream of creates and spec changes), shard count 2 with two replicas of shard 0
//! (a leader and a standby) and one of shard 1: shard 0's leader is killed (its task aborted,
//! the Lease neither renewed nor released, as when a process dies), a replica of shard 1 is
//! added, and the count goes from 2 to 3 as a rolling update: the three replicas of 3 start
//! while those of 2 run, then those of 2 are stopped. Each replica records when its controller
//! ran and each reconcile's start and end; a watch of every `Captain` records each `Ready`
//! write. A replica whose manager exits on losing its Lease starts again, as a pod would.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_runtime::controller::generation_changed_from;
use operator_gen_runtime::manager::{CancellationToken, Error, JITTER_FACTOR, Manager};
use operator_gen_runtime::shard::Shard;
use operator_gen_runtime::watch::Source;
use operator_gen_tests::standby::{RETRY, create_namespace, elected};

use crate::project_v4::v1::captain::{Captain, CaptainSpec};

/// The Lease's duration (renewed and retried as `operator_gen_tests::standby` says).
const LEASE: Duration = Duration::from_secs(2);
/// What an object may wait past a Lease's expiry and a jittered retry period: the requests of
/// taking the Lease, marking it and listing the group, the controller's first relist, and the
/// reconcile itself, on a shared machine.
const SLACK: Duration = Duration::from_millis(2500);
/// The work a reconcile does before it writes `Ready`: long enough that two replicas woken by
/// one change would overlap.
const WORK: Duration = Duration::from_millis(30);
const NAMESPACE: &str = "handoff";

/// The longest an object may go without an owner, or a change wait for its reconcile.
fn bound() -> Duration {
    LEASE + RETRY.mul_f64(1.0 + JITTER_FACTOR) + SLACK
}

/// One reconcile: which replica, which object, when it started and ended (`None`: still
/// running, or dropped when its replica was killed, then the kill's time).
#[derive(Clone, Debug)]
struct Reconcile {
    replica: String,
    object: String,
    started: Instant,
    ended: Option<Instant>,
}

type Log = Arc<Mutex<Vec<Reconcile>>>;

/// `Ready` writes as a watch saw them: object, observed generation, message, when seen.
type ReadyWrites = Arc<Mutex<Vec<(String, i64, String, Instant)>>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Ends the reconcile `index` of `log` when dropped: finished, or dropped with its replica.
struct Ending {
    log: Log,
    index: usize,
}

impl Drop for Ending {
    fn drop(&mut self) {
        lock(&self.log)[self.index].ended = Some(Instant::now());
    }
}

struct Ctx {
    replica: String,
    api: Api<Captain>,
    log: Log,
}

fn ready_generation(obj: &serde_json::Value) -> Option<(i64, String)> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready" && c["status"] == "True")
        .and_then(|c| {
            Some((
                c["observedGeneration"].as_i64()?,
                c["message"].as_str().unwrap_or_default().to_owned(),
            ))
        })
}

static WRITES: AtomicU64 = AtomicU64::new(0);

async fn reconcile(obj: Arc<Captain>, ctx: Arc<Ctx>) -> Result<Action, kube::Error> {
    let name = obj.name_any();
    let index = {
        let mut log = lock(&ctx.log);
        log.push(Reconcile {
            replica: ctx.replica.clone(),
            object: name.clone(),
            started: Instant::now(),
            ended: None,
        });
        log.len() - 1
    };
    let _ending = Ending {
        log: ctx.log.clone(),
        index,
    };
    // the object as stored now, not as the cache had it
    let Some(fresh) = ctx.api.get_opt(&name).await? else {
        return Ok(Action::await_change());
    };
    let generation = fresh.metadata.generation.unwrap_or_default();
    let value = serde_json::to_value(&fresh).unwrap_or_default();
    if ready_generation(&value).is_some_and(|(g, _)| g == generation) {
        return Ok(Action::await_change());
    }
    tokio::time::sleep(WORK).await;
    let n = WRITES.fetch_add(1, Ordering::SeqCst);
    let status = serde_json::json!({"status": {"conditions": [{
        "type": "Ready", "status": "True", "reason": "Reconciled",
        "message": format!("by {} (write {n})", ctx.replica),
        "observedGeneration": generation,
        "lastTransitionTime": "2026-11-27T00:00:00Z",
    }]}});
    ctx.api
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    Ok(Action::await_change())
}

/// When a replica's controller ran: from its start to its end (`None`: still running).
type Runs = Arc<Mutex<Vec<(Instant, Option<Instant>)>>>;

/// One replica: a manager of one shard, each run of its controller, and its task. Like a pod
/// of a Deployment, a replica whose manager exits on losing its Lease (its renewals too slow
/// for the renew deadline on a loaded machine) starts again, as a new candidate.
struct Replica {
    name: String,
    shard: Shard,
    runs: Runs,
    /// How often it lost its Lease and started again.
    restarts: Arc<AtomicU64>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

/// Marks the end of the controller's last run when dropped: stopped, or aborted with its
/// replica.
struct RunEnd(Runs);

impl Drop for RunEnd {
    fn drop(&mut self) {
        if let Some(run) = lock(&self.0).last_mut() {
            run.1 = Some(Instant::now());
        }
    }
}

/// A manager of `shard` running the `Captain` controller as `name`, recording its runs in `runs`.
fn manager(client: &Client, name: &str, shard: Shard, log: &Log, runs: &Runs) -> Manager {
    let mut options = elected(LEASE, Duration::from_secs(2));
    options.shard_count = shard.count();
    options.shard_index = shard.index();
    let mut mgr = Manager::with_client(options, "handoff", client.clone()).expect("a manager");
    let api: Api<Captain> = Api::namespaced(client.clone(), NAMESPACE);
    let controller = generation_changed_from(
        Source::new(api.clone(), watcher::Config::default()).shard(mgr.shard()),
    );
    let ctx = Arc::new(Ctx {
        replica: name.to_owned(),
        api,
        log: log.clone(),
    });
    let run = controller.graceful_shutdown_on(mgr.shutdown_signal()).run(
        reconcile,
        |_, _, _| Action::requeue(Duration::from_millis(200)),
        ctx,
    );
    let runs = runs.clone();
    mgr.add_controller("captain", async move {
        lock(&runs).push((Instant::now(), None));
        let _end = RunEnd(runs);
        run.for_each(|_| std::future::ready(())).await;
    });
    mgr
}

impl Replica {
    fn start(client: &Client, name: &str, shard: Shard, log: &Log) -> Replica {
        let runs: Runs = Arc::default();
        let restarts = Arc::new(AtomicU64::new(0));
        let stop = CancellationToken::new();
        let task = {
            let (client, name, log) = (client.clone(), name.to_owned(), log.clone());
            let (runs, restarts, stop) = (runs.clone(), restarts.clone(), stop.clone());
            tokio::spawn(async move {
                loop {
                    let mgr = manager(&client, &name, shard, &log, &runs);
                    let token = mgr.shutdown_token();
                    let mut run = std::pin::pin!(mgr.run());
                    let result = tokio::select! {
                        result = &mut run => result,
                        () = stop.cancelled() => {
                            token.cancel();
                            run.await
                        }
                    };
                    match result {
                        Err(Error::LeadershipLost { .. }) if !stop.is_cancelled() => {
                            eprintln!("{name}: lost its Lease; starting again");
                            restarts.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(error) => {
                            eprintln!("{name}: manager stopped: {error}");
                            break;
                        }
                        Ok(()) => break,
                    }
                }
            })
        };
        Replica {
            name: name.to_owned(),
            shard,
            runs,
            restarts,
            stop,
            task,
        }
    }

    fn leads(&self) -> bool {
        !lock(&self.runs).is_empty()
    }

    /// Each run of its controller: start and end (now, if it still runs).
    fn windows(&self) -> Vec<(Instant, Instant)> {
        lock(&self.runs)
            .iter()
            .map(|(a, b)| (*a, b.unwrap_or_else(Instant::now)))
            .collect()
    }

    /// Dies: the task is aborted; the Lease is neither renewed nor released.
    fn kill(&self) {
        self.task.abort();
    }

    /// A graceful stop, as on SIGTERM: the controller stops, the Lease is released.
    async fn stop(&mut self) {
        self.stop.cancel();
        (&mut self.task).await.expect("the replica stops");
    }
}

async fn wait_for(what: &str, within: Duration, done: impl Fn() -> bool) -> Instant {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Instant::now()
}

/// The load: a create every 100 ms and a spec change of an earlier object every 100 ms, until
/// `stop`; records each change's object, generation and time.
async fn load(
    client: Client,
    stop: Arc<AtomicBool>,
    changes: Arc<Mutex<Vec<(String, i64, Instant)>>>,
) {
    let api: Api<Captain> = Api::namespaced(client, NAMESPACE);
    let mut created: Vec<String> = Vec::new();
    let mut n: u64 = 0;
    while !stop.load(Ordering::SeqCst) {
        let name = format!("c-{n:04}");
        let obj = Captain::new(
            &name,
            CaptainSpec {
                foo: Some("0".into()),
            },
        );
        let done = api
            .create(&PostParams::default(), &obj)
            .await
            .expect("create");
        lock(&changes).push((
            name.clone(),
            done.metadata.generation.unwrap_or(1),
            Instant::now(),
        ));
        created.push(name);
        tokio::time::sleep(Duration::from_millis(50)).await;
        // an earlier object, spread by a multiplicative hash of the step
        let pick = &created[(n.wrapping_mul(0x9e37_79b9) % created.len() as u64) as usize];
        let patch = serde_json::json!({"spec": {"foo": format!("{n}")}});
        let done = api
            .patch(pick, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("change a spec");
        lock(&changes).push((
            pick.clone(),
            done.metadata.generation.unwrap_or(1),
            Instant::now(),
        ));
        tokio::time::sleep(Duration::from_millis(50)).await;
        n += 1;
    }
}

/// Every `Ready` write a watch of the namespace's `Captain`s saw: object, observed generation,
/// message (which replica wrote it, and its write's number), and when the watch saw it.
fn record_ready(client: Client, writes: ReadyWrites) -> tokio::task::JoinHandle<()> {
    let api: Api<Captain> = Api::namespaced(client, NAMESPACE);
    tokio::spawn(async move {
        let mut last: BTreeMap<String, (i64, String)> = BTreeMap::new();
        let mut events = std::pin::pin!(watcher(api, watcher::Config::default()));
        while let Some(event) = events.next().await {
            let Ok(watcher::Event::Apply(obj) | watcher::Event::InitApply(obj)) = event else {
                continue;
            };
            let value = serde_json::to_value(&obj).unwrap_or_default();
            if let Some(ready) = ready_generation(&value)
                && last.get(&obj.name_any()) != Some(&ready)
            {
                lock(&writes).push((obj.name_any(), ready.0, ready.1.clone(), Instant::now()));
                last.insert(obj.name_any(), ready);
            }
        }
    })
}

/// The hash ranges between every bound of `shards`' ranges.
fn segments(shards: &[Shard]) -> Vec<(u128, u128)> {
    let mut bounds: BTreeSet<u128> = BTreeSet::new();
    for s in shards {
        let (a, b) = s.range();
        bounds.extend([a, b]);
    }
    let bounds: Vec<u128> = bounds.into_iter().collect();
    bounds.windows(2).map(|w| (w[0], w[1])).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn shards_hand_off_without_overlap_or_orphans_when_killed_added_and_recounted() {
    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    plane
        .install_crds(&[Captain::crd()], Duration::from_secs(60))
        .await
        .expect("CRD installed");
    let client = plane.client();
    create_namespace(&client, NAMESPACE).await;
    let log: Log = Arc::default();
    let ready_writes: ReadyWrites = Arc::default();
    let watch = record_ready(client.clone(), ready_writes.clone());
    let changes = Arc::new(Mutex::new(Vec::new()));
    let stop_load = Arc::new(AtomicBool::new(false));
    let loader = tokio::spawn(load(client.clone(), stop_load.clone(), changes.clone()));
    let s = |i, n| Shard::new(i, n).expect("shard");
    let patience = Duration::from_secs(30);
    let mut tried = Vec::new();

    // shard count 2: a leader and a standby of shard 0, one replica of shard 1
    let mut replicas = vec![Replica::start(&client, "a-0of2", s(0, 2), &log)];
    wait_for("a-0of2 leads", patience, || replicas[0].leads()).await;
    replicas.push(Replica::start(&client, "b-0of2", s(0, 2), &log));
    replicas.push(Replica::start(&client, "c-1of2", s(1, 2), &log));
    wait_for("c-1of2 leads", patience, || replicas[2].leads()).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    tried.push("shard count 2: a-0of2 leads shard 0 with b-0of2 on standby, c-1of2 leads shard 1");

    // shard 0's leader dies; its standby takes over once the Lease expires
    replicas[0].kill();
    wait_for("b-0of2 leads", patience, || replicas[1].leads()).await;
    tried.push("a-0of2 killed (no release); b-0of2 takes shard 0 once its Lease expires");
    tokio::time::sleep(Duration::from_secs(2)).await;

    // a replica added: a standby of shard 1
    replicas.push(Replica::start(&client, "d-1of2", s(1, 2), &log));
    tokio::time::sleep(Duration::from_secs(2)).await;
    tried.push("d-1of2 added on standby of shard 1");

    // N from 2 to 3, rolling: the new replicas start while the old ones run ...
    for i in 0..3 {
        replicas.push(Replica::start(
            &client,
            &format!("e{i}-{i}of3"),
            s(i, 3),
            &log,
        ));
    }
    tokio::time::sleep(LEASE + Duration::from_secs(1)).await;
    let early: Vec<String> = replicas[4..]
        .iter()
        .filter(|r| r.leads())
        .map(|r| r.name.clone())
        .collect();
    tried.push(
        "e0-0of3, e1-1of3, e2-2of3 start while shards of 2 run: each holds its Lease and waits",
    );
    // ... then the old ones stop, as on SIGTERM
    let (old, new) = replicas.split_at_mut(4);
    futures::future::join_all(old.iter_mut().skip(1).map(Replica::stop)).await;
    for r in new.iter() {
        wait_for(&format!("{} leads", r.name), patience, || r.leads()).await;
    }
    tried.push("b-0of2, c-1of2 and d-1of2 stopped (Leases released); the replicas of 3 start");
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop_load.store(true, Ordering::SeqCst);
    loader.await.expect("the load ran");

    // none left behind: every object Ready for its current generation, and the watch saw it
    let api: Api<Captain> = Api::namespaced(client.clone(), NAMESPACE);
    let deadline = Instant::now() + patience;
    let (objects, behind) = loop {
        let list = api.list(&ListParams::default()).await.expect("list");
        let behind = list
            .items
            .iter()
            .filter(|o| {
                let value = serde_json::to_value(o).unwrap_or_default();
                let generation = o.metadata.generation.unwrap_or_default();
                let seen = lock(&ready_writes)
                    .iter()
                    .any(|(name, g, _, _)| *name == o.name_any() && *g == generation);
                ready_generation(&value).map(|(g, _)| g) != Some(generation) || !seen
            })
            .map(|o| o.name_any())
            .collect::<Vec<_>>();
        if behind.is_empty() || Instant::now() > deadline {
            break (list.items, behind);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let stopping = Instant::now();
    for r in &mut replicas[4..] {
        r.stop().await;
    }
    watch.abort();

    // each problem with its kind, so that a failure reports them compactly
    let mut problems: Vec<(&str, String)> = Vec::new();
    for object in &behind {
        problems.push((
            "not Ready for its generation when listed, or not seen so by the watch",
            object.clone(),
        ));
    }
    if !early.is_empty() {
        problems.push((
            "replicas of 3 shards started while every shard of 2 ran",
            format!("{early:?}"),
        ));
    }
    // Ready exactly once per generation: no generation written twice, the last one once
    let writes = lock(&ready_writes).clone();
    let mut per_generation: BTreeMap<(String, i64), Vec<String>> = BTreeMap::new();
    for (object, generation, message, _) in &writes {
        per_generation
            .entry((object.clone(), *generation))
            .or_default()
            .push(message.clone());
    }
    for ((object, generation), messages) in &per_generation {
        if messages.len() > 1 {
            problems.push((
                "a generation Ready more than once",
                format!(
                    "{object} Ready {} times for generation {generation}: {messages:?}",
                    messages.len()
                ),
            ));
        }
    }
    for o in &objects {
        let key = (o.name_any(), o.metadata.generation.unwrap_or_default());
        if !per_generation.contains_key(&key) {
            problems.push((
                "never seen Ready for its generation",
                format!("{} generation {}", key.0, key.1),
            ));
        }
    }

    // no overlapping reconciles of one object across replicas
    let reconciles = lock(&log).clone();
    let killed_at = replicas[0]
        .windows()
        .last()
        .expect("the killed replica's run")
        .1;
    let mut by_object: BTreeMap<&str, Vec<&Reconcile>> = BTreeMap::new();
    for r in &reconciles {
        by_object.entry(r.object.as_str()).or_default().push(r);
    }
    let mut pairs = 0;
    for (object, runs) in &by_object {
        for (i, a) in runs.iter().enumerate() {
            for b in &runs[i + 1..] {
                if a.replica == b.replica {
                    continue;
                }
                pairs += 1;
                let end = |r: &Reconcile| r.ended.unwrap_or(killed_at);
                if a.started < end(b) && b.started < end(a) {
                    problems.push((
                        "an object reconciled by two replicas at once",
                        format!("{object} by {} and {}", a.replica, b.replica),
                    ));
                }
            }
        }
    }

    // no two replicas of overlapping shards ran their controllers at once
    let windows: Vec<(&Replica, Instant, Instant)> = replicas
        .iter()
        .flat_map(|r| r.windows().into_iter().map(move |(a, b)| (r, a, b)))
        .collect();
    for (i, (a, a_start, a_end)) in windows.iter().enumerate() {
        for (b, b_start, b_end) in &windows[i + 1..] {
            if a.name != b.name && a.shard.overlaps(&b.shard) && a_start < b_end && b_start < a_end
            {
                problems.push((
                    "overlapping shards ran their controllers at once",
                    format!("{} and {}", a.name, b.name),
                ));
            }
        }
    }
    let never: Vec<&str> = replicas
        .iter()
        .filter(|r| !r.leads() && !r.name.starts_with("d-"))
        .map(|r| r.name.as_str())
        .collect();
    if !never.is_empty() {
        problems.push(("replicas that never ran", format!("{never:?}")));
    }

    // the longest time each part of the hash space was without an owner
    let all: Vec<Shard> = replicas.iter().map(|r| r.shard).collect();
    let first = windows.iter().map(|w| w.1).min().expect("a window");
    // until the test stops the replicas of 3 (they stop one after another)
    let last = stopping;
    let mut gaps = Vec::new();
    for (start, end) in segments(&all) {
        let mut covering: Vec<(Instant, Instant)> = windows
            .iter()
            .filter(|(r, _, _)| {
                let (a, b) = r.shard.range();
                a <= start && end <= b
            })
            .map(|w| (w.1, w.2))
            .collect();
        covering.sort();
        let (mut reached, mut gap) = (first, Duration::ZERO);
        for (a, b) in covering {
            gap = gap.max(a.saturating_duration_since(reached));
            reached = reached.max(b);
        }
        gap = gap.max(last.saturating_duration_since(reached));
        if gap > bound() {
            problems.push((
                "a hash range without an owner for longer than the bound",
                format!("hashes 0x{start:x}..0x{end:x} had no owner for {gap:?}"),
            ));
        }
        gaps.push(format!("0x{start:016x}..: {gap:.2?}"));
    }

    // the longest a change waited until the watch saw its object Ready for it (or later)
    let mut waited = Duration::ZERO;
    let mut worst = String::new();
    for (object, generation, at) in lock(&changes).iter() {
        let done = writes
            .iter()
            .filter(|(o, g, _, _)| o == object && g >= generation)
            .map(|(_, _, _, seen)| *seen)
            .min();
        match done {
            Some(done) if done.saturating_duration_since(*at) > waited => {
                waited = done.saturating_duration_since(*at);
                worst = format!("{object} generation {generation}");
            }
            Some(_) => {}
            None => problems.push((
                "a change the watch never saw Ready (for it or a later generation)",
                format!("{object} generation {generation}"),
            )),
        }
    }
    if waited > bound() {
        problems.push((
            "a change waited longer than the bound for its reconcile",
            format!("{worst} waited {waited:?}"),
        ));
    }

    // the problems first, grouped and cut short, so a CI log shows them above the tables
    let report = compact(&problems);
    if !problems.is_empty() {
        eprintln!("{report}");
    }
    println!("tried: {}", tried.join("; "));
    for (r, a, b) in &windows {
        println!(
            "  {} ({}/{}) ran from {:.2?} to {:.2?}",
            r.name,
            r.shard.index(),
            r.shard.count(),
            a.duration_since(first),
            b.duration_since(first)
        );
    }
    let restarts: Vec<String> = replicas
        .iter()
        .map(|r| (r, r.restarts.load(Ordering::SeqCst)))
        .filter(|(_, n)| *n > 0)
        .map(|(r, n)| format!("{} {n}", r.name))
        .collect();
    let summary = format!(
        "hand-off: restarts after losing a Lease: {}; {} objects, {} changes, {} Ready writes over {} generations, {} reconciles ({} pairs across replicas compared); longest without an owner per hash range: {}; longest a change waited: {waited:.2?} ({worst}); bound {:.2?} (lease {LEASE:?} + (1 + {JITTER_FACTOR}) x retry {RETRY:?} + slack {SLACK:?})",
        if restarts.is_empty() {
            "none".to_owned()
        } else {
            restarts.join(", ")
        },
        objects.len(),
        lock(&changes).len(),
        writes.len(),
        per_generation.len(),
        reconciles.len(),
        pairs,
        gaps.join(", "),
        bound(),
    );
    println!("{summary}");
    assert!(problems.is_empty(), "{report}\n{summary}");
}

/// The problems by kind, in the order first found: each kind with its count and its first
/// three lines.
fn compact(problems: &[(&str, String)]) -> String {
    let mut kinds: Vec<(&str, Vec<&str>)> = Vec::new();
    for (kind, line) in problems {
        match kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, lines)) => lines.push(line),
            None => kinds.push((kind, vec![line])),
        }
    }
    let mut out = format!("{} problems:", problems.len());
    for (kind, lines) in &kinds {
        out.push_str(&format!("\n  {kind} ({}):", lines.len()));
        for line in lines.iter().take(3) {
            out.push_str(&format!("\n    {line}"));
        }
        if lines.len() > 3 {
            out.push_str(&format!("\n    ... and {} more", lines.len() - 3));
        }
    }
    out
}
