//! Benchmark (not a test: nothing here asserts a time or a size) of the scaffolded operator at
//! scale, in shards, beside the kubebuilder Go operator of `operator_load` (the same reconcile),
//! whose manager's cache strips `managedFields` (controller-runtime's
//! `cache.TransformStripManagedFields()`, as operators that care for memory set it).
//!
//! Run it with
//!
//!     source hack/envtest/ensure.sh && cargo bench -p operator-gen-tests --bench operator_scale
//!
//! For each size in `SCALE_OBJECTS` (comma-separated, default `10000,100000`) it runs, each on
//! a fresh control plane: the Go operator (one process; `SCALE_GO=0` leaves it out), then ours
//! with each shard count of `SCALE_SHARDS` (default `1,2,4`): one process per shard, all at
//! once, each with `--shard-count` and `--shard-index` (the control plane honours the shard
//! selector, so each lists and watches its own shard). Every process authenticates as a
//! ServiceAccount of its own (`replica-<index>`), bound to cluster-admin, so that the
//! apiserver's audit log counts each one's requests.
//!
//! A run: start every replica and wait for its `/readyz`; three seconds later read each one's
//! RSS (idle); create the objects, `SCALE_IN_FLIGHT` (default 64) creates at once; wait until a
//! watch of the objects has seen every one `Ready` for its generation; ten seconds later read
//! each RSS again (settled); delete every object, as many at once, and wait until the watch has
//! seen every deletion (each one's finalizer removed); five seconds later read each RSS (after
//! deletion; `SCALE_GO_DELETION=0` leaves the deletion out of the Go run, whose RSS after
//! deletion no target needs). Each replica's RSS is sampled every 20 ms from the first create
//! to the settled reading for its peak.
//!
//! Per replica it prints: the objects of its shard (the ones it caches), seconds from the first
//! create until the last of them was seen `Ready`, CPU seconds from the first create until every
//! object was `Ready`, API requests per object of its shard (audit log, the whole run with the
//! deletion), RSS idle, peak, settled and after deletion, peak and settled RSS above idle per
//! object of its shard, RSS after deletion over idle, and reconcile errors. Then per size each
//! run's requests per object, also those the apiserver received before the deletion began; the
//! ratios against the Go operator (requests compared on those before the deletion began, which
//! a run that leaves the deletion out has too) and against one shard; and whether each target
//! is met.
//!
//! The floor of kube's cache: in the run of ours with one shard, once every object is `Ready`
//! and the settled RSS is read, the objects are listed (as the operator caches them, less
//! `managedFields`) into a file, and this benchmark's own binary, started again in a process of
//! its own with the allocator set up as the operator's manager sets it, puts them one by one
//! into a kube reflector store of the scaffold's kind (what `run_generation_changed` caches)
//! and reads its own RSS before and after: the memory per object that kube's store alone takes,
//! printed beside ours whole and half of Go's.

use std::collections::BTreeMap;
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DynamicObject, ListParams};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use operator_gen_runtime::prelude::*;
use operator_gen_runtime::shard::Shard;
use operator_gen_tests::integrity::ready_for_generation;
use operator_gen_tests::load::{
    Operator, PeakRss, Running, account_kubeconfig, account_user, audit_files, audited_plane,
    audited_requests_split, build_go, build_ours, clock_ticks, cpu_seconds, create_all, delete_all,
    go_tools, guestbooks, rss_mib,
};
use serde::{Deserialize, Serialize};

/// What the watch knows of one object.
struct Seen {
    /// The shard-key hash of its uid.
    hash: u64,
    /// When the watch first saw it `Ready` for its generation.
    ready_at: Option<Instant>,
}

/// Every object the watch has seen and not seen deleted, by name.
type Objects = Arc<Mutex<BTreeMap<String, Seen>>>;

/// Follows the Guestbooks into `objects` until aborted.
fn follow(api: Api<DynamicObject>, objects: Objects) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut listed = Vec::new();
        let mut events = std::pin::pin!(watcher(api, watcher::Config::default()).default_backoff());
        while let Some(event) = events.next().await {
            let Ok(event) = event else {
                continue;
            };
            let mut objects = objects.lock().expect("objects");
            match event {
                watcher::Event::Init => listed.clear(),
                watcher::Event::InitApply(obj) | watcher::Event::Apply(obj) => {
                    let name = obj.metadata.name.clone().unwrap_or_default();
                    let uid = obj.metadata.uid.as_deref().unwrap_or_default();
                    let seen = objects.entry(name.clone()).or_insert(Seen {
                        hash: Shard::hash(uid),
                        ready_at: None,
                    });
                    if seen.ready_at.is_none() && ready_for_generation(&obj) {
                        seen.ready_at = Some(Instant::now());
                    }
                    listed.push(name);
                }
                watcher::Event::InitDone => {
                    // a relist: what it did not find is gone
                    let found: std::collections::BTreeSet<String> = listed.drain(..).collect();
                    objects.retain(|name, _| found.contains(name));
                }
                watcher::Event::Delete(obj) => {
                    objects.remove(obj.metadata.name.as_deref().unwrap_or_default());
                }
            }
        }
    })
}

/// Waits, checking every 200 ms for at most an hour, until `done` holds for the objects.
async fn until(objects: &Objects, what: &str, done: impl Fn(&BTreeMap<String, Seen>) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(3600);
    loop {
        if done(&objects.lock().expect("objects")) {
            return;
        }
        assert!(Instant::now() < deadline, "{what} never happened");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// One replica's figures in one run.
#[derive(Clone, Debug, Default)]
struct Replica {
    /// The objects of its shard.
    objects: usize,
    ready_seconds: f64,
    cpu_seconds: f64,
    /// Audited requests by `verb resource code`.
    requests: BTreeMap<String, usize>,
    /// How many of them the apiserver received before the deletion began (all of them when the
    /// run left the deletion out).
    requests_before_deletion: usize,
    idle_rss: f64,
    peak_rss: f64,
    settled_rss: f64,
    /// `None` when the run left the deletion out.
    rss_after_delete: Option<f64>,
    errors: f64,
}

impl Replica {
    fn requests_per_object(&self) -> f64 {
        self.requests.values().sum::<usize>() as f64 / self.objects as f64
    }

    /// The lists and watches, and the requests of no resource (discovery, version): what a
    /// replica asks once or a few times whatever its objects.
    fn fixed_requests(&self) -> usize {
        self.requests
            .iter()
            .filter(|(k, _)| {
                let mut words = k.split(' ');
                let (verb, resource) = (words.next(), words.next());
                matches!(verb, Some("list" | "watch")) || resource == Some("-")
            })
            .map(|(_, n)| n)
            .sum()
    }

    /// Peak RSS above idle per object of its shard, in KiB.
    fn peak_kib_per_object(&self) -> f64 {
        (self.peak_rss - self.idle_rss) * 1024.0 / self.objects as f64
    }

    /// Settled RSS above idle per object of its shard, in KiB.
    fn settled_kib_per_object(&self) -> f64 {
        (self.settled_rss - self.idle_rss) * 1024.0 / self.objects as f64
    }

    /// Peak RSS above idle, in MiB: the memory its objects took.
    fn object_memory(&self) -> f64 {
        self.peak_rss - self.idle_rss
    }
}

/// One run: an operator with a number of shards, at a size.
struct Run {
    objects: usize,
    go: bool,
    shards: u32,
    replicas: Vec<Replica>,
    /// KiB per object that kube's reflector store alone took for this run's objects (ours with
    /// one shard).
    store_floor: Option<f64>,
}

impl Run {
    fn label(&self) -> String {
        if self.go {
            "Go".to_owned()
        } else {
            format!(
                "ours, {} shard{}",
                self.shards,
                if self.shards == 1 { "" } else { "s" }
            )
        }
    }

    /// Seconds until every object was `Ready`: the slowest replica's.
    fn ready_seconds(&self) -> f64 {
        self.replicas
            .iter()
            .map(|r| r.ready_seconds)
            .fold(0.0, f64::max)
    }

    fn cpu_seconds(&self) -> f64 {
        self.replicas.iter().map(|r| r.cpu_seconds).sum()
    }

    /// Every replica's requests over every object.
    fn requests_per_object(&self) -> f64 {
        self.replicas
            .iter()
            .map(|r| r.requests.values().sum::<usize>())
            .sum::<usize>() as f64
            / self.objects as f64
    }

    /// Every replica's requests received before the deletion began, over every object: the
    /// same span for a run that leaves the deletion out and one that does not.
    fn requests_per_object_before_deletion(&self) -> f64 {
        self.replicas
            .iter()
            .map(|r| r.requests_before_deletion)
            .sum::<usize>() as f64
            / self.objects as f64
    }

    /// Every replica's requests over every object, without the fixed ones.
    fn object_requests_per_object(&self) -> f64 {
        self.replicas
            .iter()
            .map(|r| r.requests.values().sum::<usize>() - r.fixed_requests())
            .sum::<usize>() as f64
            / self.objects as f64
    }

    /// The fixed requests of all replicas.
    fn fixed_requests(&self) -> usize {
        self.replicas.iter().map(Replica::fixed_requests).sum()
    }

    /// The largest per-object memory of its replicas.
    fn peak_kib_per_object(&self) -> f64 {
        self.replicas
            .iter()
            .map(Replica::peak_kib_per_object)
            .fold(0.0, f64::max)
    }
}

/// Deletes the scratch files a run leaves, once read (the audit log grows to gigabytes).
fn remove_quietly(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// What a run does besides its operator and shards.
#[derive(Clone, Copy)]
struct Plan {
    objects: usize,
    in_flight: usize,
    /// Whether it deletes the objects at the end and measures RSS after.
    delete: bool,
    ticks: f64,
}

async fn run(op: &Operator, go: bool, shards: u32, plan: Plan, scratch: &Path) -> Run {
    let (n, in_flight, ticks) = (plan.objects, plan.in_flight, plan.ticks);
    let dir = scratch.join(format!("{}-{n}-{shards}", if go { "go" } else { "ours" }));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let accounts: Vec<String> = (0..shards).map(|i| format!("replica-{i}")).collect();
    let (plane, audit) = audited_plane(&dir, &accounts, &[], &op.crd).await;
    let api = guestbooks(&plane);
    let mut replicas = Vec::new();
    for (i, account) in accounts.iter().enumerate() {
        let kubeconfig: PathBuf = dir.join(format!("{account}.kubeconfig"));
        account_kubeconfig(&plane, account, &kubeconfig).await;
        let args = if shards > 1 {
            vec![
                format!("--shard-count={shards}"),
                format!("--shard-index={i}"),
            ]
        } else {
            Vec::new()
        };
        replicas.push(Running::start(
            op,
            &args,
            &kubeconfig,
            &dir.join(format!("{account}.log")),
        ));
    }
    let objects: Objects = Arc::default();
    let watch = follow(api.clone(), objects.clone());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut figures: Vec<Replica> = replicas
        .iter()
        .map(|r| Replica {
            idle_rss: rss_mib(r.pid()),
            ..Replica::default()
        })
        .collect();
    let peaks: Vec<PeakRss> = replicas.iter().map(|r| PeakRss::watch(r.pid())).collect();
    let cpu_before: Vec<f64> = replicas
        .iter()
        .map(|r| cpu_seconds(r.pid(), ticks))
        .collect();
    let from = Instant::now();
    create_all(&api, n, in_flight).await;
    until(&objects, "every guestbook Ready", |seen| {
        seen.len() == n && seen.values().all(|s| s.ready_at.is_some())
    })
    .await;
    for ((f, r), before) in figures.iter_mut().zip(&replicas).zip(&cpu_before) {
        f.cpu_seconds = cpu_seconds(r.pid(), ticks) - before;
    }
    {
        let seen = objects.lock().expect("objects");
        for s in seen.values() {
            let shard = Shard::index_of(s.hash, shards) as usize;
            let f = &mut figures[shard];
            f.objects += 1;
            let at = s.ready_at.map_or(0.0, |t| (t - from).as_secs_f64());
            f.ready_seconds = f.ready_seconds.max(at);
        }
    }
    tokio::time::sleep(Duration::from_secs(10)).await;
    for ((f, r), peak) in figures.iter_mut().zip(&replicas).zip(&peaks) {
        f.settled_rss = rss_mib(r.pid());
        f.peak_rss = peak.peak_mib();
    }
    drop(peaks);
    let store_floor = if !go && shards == 1 {
        Some(store_floor(&api, &dir.join("objects.jsonl")).await)
    } else {
        None
    };
    let deletion_from = plan.delete.then(Timestamp::now);
    if plan.delete {
        delete_all(&api, n, in_flight).await;
        until(
            &objects,
            "every guestbook deleted (finalizer removed)",
            |seen| seen.is_empty(),
        )
        .await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    for (f, r) in figures.iter_mut().zip(&replicas) {
        f.rss_after_delete = plan.delete.then(|| rss_mib(r.pid()));
        f.errors = r.reconciles(Some("error"));
    }
    watch.abort();
    drop(replicas);
    drop(plane);
    let mut audited = audited_requests_split(&audit, deletion_from);
    for (f, account) in figures.iter_mut().zip(&accounts) {
        let user = account_user(account);
        f.requests = audited.all.remove(&user).unwrap_or_default();
        f.requests_before_deletion = audited.before_cut.remove(&user).unwrap_or_default();
    }
    for file in audit_files(&audit) {
        remove_quietly(&file);
    }
    Run {
        objects: n,
        go,
        shards,
        replicas: figures,
        store_floor,
    }
}

/// The scaffold's kind as `create api` writes it (`templates/api`), for a store that holds the
/// objects as the operator's does. A copy, kept in step by hand: a field the template gains and
/// this copy lacks would be dropped as the probe reads the objects, and the floor read low.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[k8s(
    group = "webapp.my.domain",
    version = "v1",
    kind = "Guestbook",
    status = "GuestbookStatus",
    doc = "Guestbook is the Schema for the guestbooks API"
)]
#[serde(rename_all = "camelCase")]
pub struct GuestbookSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GuestbookStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// The variable that starts this binary as the store-floor probe, naming the objects' file.
const FLOOR_FILE_VAR: &str = "SCALE_STORE_FLOOR";

/// What the probe's one line of output starts with.
const FLOOR_LINE: &str = "store floor:";

/// Lists every object of `api` into `file`, one JSON document a line, then runs the probe on it
/// in a process of its own; the KiB per object it found. The file goes once read.
async fn store_floor(api: &Api<DynamicObject>, file: &Path) -> f64 {
    let mut out = BufWriter::new(std::fs::File::create(file).expect("create objects file"));
    let mut params = ListParams::default().limit(500);
    loop {
        let page = api.list(&params).await.expect("list guestbooks");
        for obj in &page.items {
            serde_json::to_writer(&mut out, obj).expect("write object");
            out.write_all(b"\n").expect("write object");
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => break,
        }
    }
    out.flush().expect("write objects file");
    drop(out);
    let exe = std::env::current_exe().expect("this benchmark's binary");
    let mut probe = std::process::Command::new(exe);
    probe.env(FLOOR_FILE_VAR, file);
    let output = tokio::task::spawn_blocking(move || probe.output())
        .await
        .expect("the store-floor probe's task")
        .expect("run the store-floor probe");
    remove_quietly(file);
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(FLOOR_LINE))
        .and_then(|rest| rest.split_whitespace().nth(1))
        .and_then(|kib| kib.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "the store-floor probe printed no figure: {stdout}{}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
}

/// The probe: reads the objects of `file` (less `managedFields`, as the operator's cache keeps
/// them), then puts each into a kube reflector store of the scaffold's kind as the watch hands
/// them to the operator's cache, and prints the objects and the RSS the store grew by per
/// object, in KiB. The objects read stay until the end, so the store's copies are made in a
/// heap where nothing is freed in between: the least it takes.
fn probe_store_floor(file: &Path) {
    operator_gen_runtime::manager::tune_allocator();
    let lines = std::io::BufReader::new(std::fs::File::open(file).expect("open objects file"));
    let events: Vec<watcher::Event<Guestbook>> = lines
        .lines()
        .map(|line| {
            let mut obj: Guestbook =
                serde_json::from_str(&line.expect("read objects file")).expect("a Guestbook");
            obj.metadata.managed_fields = None;
            watcher::Event::Apply(obj)
        })
        .collect();
    let (reader, mut writer) = reflector::store::<Guestbook>();
    let own = std::process::id();
    let before = rss_mib(own);
    for event in &events {
        writer.apply_watcher_event(event);
    }
    let after = rss_mib(own);
    let n = reader.len();
    println!(
        "{FLOOR_LINE} {n} {:.3}",
        (after - before) * 1024.0 / n.max(1) as f64
    );
}

fn list_var<T: std::str::FromStr>(name: &str, default: &str) -> Vec<T> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_owned())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect()
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT MET" }
}

fn print_size(runs: &[Run]) {
    let Some(first) = runs.first() else {
        return;
    };
    let n = first.objects;
    println!();
    println!("{n} objects; each run on a fresh control plane; 2 cores shared with the apiserver");
    println!(
        "| run | replica | objects cached | ready after (s) | CPU (s) | API requests/object | idle RSS (MiB) | peak RSS (MiB) | settled RSS (MiB) | peak above idle/object (KiB) | settled above idle/object (KiB) | RSS after delete (MiB) | after delete / idle | reconcile errors |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for run in runs {
        for (i, r) in run.replicas.iter().enumerate() {
            println!(
                "| {} | {i} | {} | {:.1} | {:.1} | {:.2} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} | {} | {} | {} |",
                run.label(),
                r.objects,
                r.ready_seconds,
                r.cpu_seconds,
                r.requests_per_object(),
                r.idle_rss,
                r.peak_rss,
                r.settled_rss,
                r.peak_kib_per_object(),
                r.settled_kib_per_object(),
                r.rss_after_delete
                    .map_or("-".to_owned(), |a| format!("{a:.1}")),
                r.rss_after_delete
                    .map_or("-".to_owned(), |a| format!("{:.2}", a / r.idle_rss)),
                r.errors,
            );
        }
    }
    let go = runs.iter().find(|r| r.go);
    let one = runs.iter().find(|r| !r.go && r.shards == 1);
    println!();
    println!("{n} objects, whole runs (ready after: the slowest replica; CPU: every replica's):");
    for run in runs {
        println!(
            "  {}: ready after {:.1} s, CPU {:.1} s, API requests/object {:.4} ({:.4} before the deletion began), of which fixed (lists, watches, no resource) {} in all",
            run.label(),
            run.ready_seconds(),
            run.cpu_seconds(),
            run.requests_per_object(),
            run.requests_per_object_before_deletion(),
            run.fixed_requests()
        );
    }
    println!();
    println!("{n} objects, API requests by verb, resource and response code, per replica:");
    for run in runs {
        for (i, r) in run.replicas.iter().enumerate() {
            let parts: Vec<String> = r
                .requests
                .iter()
                .map(|(k, c)| format!("{k}: {c}"))
                .collect();
            println!("  {} {i}: {}", run.label(), parts.join(", "));
        }
    }
    let ours: Vec<&Run> = runs.iter().filter(|r| !r.go).collect();
    if let Some(go) = go {
        println!();
        println!(
            "{n} objects, ratios Go / ours (above 1: ours is faster, leaner or makes fewer requests):"
        );
        for run in &ours {
            println!(
                "  {}: time to Ready {:.2}x, CPU {:.2}x, API requests/object before the deletion began {:.2}x, peak above idle/object {:.2}x (Go {:.2} KiB, ours at most {:.2})",
                run.label(),
                go.ready_seconds() / run.ready_seconds(),
                go.cpu_seconds() / run.cpu_seconds(),
                go.requests_per_object_before_deletion()
                    / run.requests_per_object_before_deletion(),
                go.peak_kib_per_object() / run.peak_kib_per_object(),
                go.peak_kib_per_object(),
                run.peak_kib_per_object(),
            );
        }
    }
    if let Some(one) = one
        && let Some(floor) = one.store_floor
    {
        let ours = one.peak_kib_per_object();
        println!();
        println!(
            "{n} objects, kube's reflector store alone holding them as ours caches them (a process of its own): {floor:.2} KiB per object (each object an `Arc` of {} bytes, of which `ObjectMeta` {}, and a key of {} bytes and the `Arc`'s pointer in a hash table, besides their strings); ours, 1 shard, peak above idle {ours:.2} KiB{}",
            std::mem::size_of::<Guestbook>() + 2 * std::mem::size_of::<usize>(),
            std::mem::size_of::<ObjectMeta>(),
            std::mem::size_of::<reflector::ObjectRef<Guestbook>>(),
            go.map_or(String::new(), |go| format!(
                "; half of Go's {:.2} KiB: the store alone is {} it",
                go.peak_kib_per_object() / 2.0,
                if floor > go.peak_kib_per_object() / 2.0 {
                    "above"
                } else {
                    "within"
                }
            ))
        );
    }
    if let (Some(one), true) = (one, ours.iter().any(|r| r.shards > 1)) {
        let base = one.replicas.first().cloned().unwrap_or_default();
        println!();
        println!(
            "{n} objects, against one shard (object memory: peak above idle, one replica's {:.1} MiB):",
            base.object_memory()
        );
        for run in ours.iter().filter(|r| r.shards > 1) {
            let parts: Vec<String> = run
                .replicas
                .iter()
                .map(|r| format!("{:.2}", r.object_memory() / base.object_memory()))
                .collect();
            println!(
                "  {}: object memory per replica / one replica's {} (bound {:.2}), API requests/object {:.4}x one replica's ({:.4}x without the fixed ones)",
                run.label(),
                parts.join(", "),
                1.0 / f64::from(run.shards) + 0.1,
                run.requests_per_object() / one.requests_per_object(),
                run.object_requests_per_object() / one.object_requests_per_object(),
            );
        }
    }
    println!();
    println!("{n} objects, targets:");
    for run in &ours {
        let mut parts = Vec::new();
        if let Some(go) = go {
            // one replica against Go's one process; shards are held to one replica below
            if run.shards == 1 {
                parts.push(format!(
                    "memory per cached object at most half of Go's {}",
                    verdict(2.0 * run.peak_kib_per_object() <= go.peak_kib_per_object())
                ));
            }
            parts.push(format!(
                "time to Ready no worse than Go's {}",
                verdict(run.ready_seconds() <= go.ready_seconds())
            ));
        }
        parts.push(format!(
            "RSS after delete within 20 % of idle {}",
            verdict(
                run.replicas
                    .iter()
                    .all(|r| r.rss_after_delete.is_some_and(|a| a <= 1.2 * r.idle_rss))
            )
        ));
        if let (Some(one), true) = (one, run.shards > 1) {
            let base = one.replicas.first().map_or(0.0, Replica::object_memory);
            let bound = 1.0 / f64::from(run.shards) + 0.1;
            parts.push(format!(
                "each replica's object memory within 1/N + 10 % of one replica's {}",
                verdict(
                    run.replicas
                        .iter()
                        .all(|r| r.object_memory() <= bound * base)
                )
            ));
            // judged on the requests that grow with the objects: each replica makes its own
            // lists, watches and discovery whatever its share, which no sharding can divide
            parts.push(format!(
                "API requests/object no more than one replica's {} (lists, watches and requests of no resource left out: {:.1} per replica against one replica's {}; with them {:.4}x)",
                verdict(run.object_requests_per_object() <= one.object_requests_per_object()),
                run.fixed_requests() as f64 / f64::from(run.shards),
                one.fixed_requests(),
                run.requests_per_object() / one.requests_per_object(),
            ));
        }
        println!("  {}: {}", run.label(), parts.join("; "));
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if let Some(file) = std::env::var_os(FLOOR_FILE_VAR) {
        probe_store_floor(Path::new(&file));
        return;
    }
    let sizes: Vec<usize> = list_var("SCALE_OBJECTS", "10000,100000");
    let shard_counts: Vec<u32> = list_var("SCALE_SHARDS", "1,2,4");
    let with_go = std::env::var("SCALE_GO").map_or(true, |v| v != "0");
    // `SCALE_GO_DELETION=0`: the Go run stops once its objects are Ready (no target needs its
    // RSS after deletion; at 100,000 objects its deletion takes as long as its creation)
    let go_deletion = std::env::var("SCALE_GO_DELETION").map_or(true, |v| v != "0");
    let in_flight = list_var::<usize>("SCALE_IN_FLIGHT", "64")
        .first()
        .copied()
        .unwrap_or(64);
    if operator_gen_envtest::require_assets().is_none() {
        eprintln!("operator_scale: no control plane; source hack/envtest/ensure.sh first");
        return;
    }
    let scratch = tempfile::tempdir().expect("tempdir");
    println!("operator_scale: building the operators");
    let ours = build_ours(scratch.path());
    let theirs = if with_go {
        let Some((kubebuilder, controller_gen)) = go_tools("operator_scale") else {
            return;
        };
        Some(build_go(
            scratch.path(),
            &kubebuilder,
            &controller_gen,
            true,
        ))
    } else {
        None
    };
    let ticks = clock_ticks();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    for &n in &sizes {
        let plan = Plan {
            objects: n,
            in_flight,
            delete: true,
            ticks,
        };
        let mut runs = Vec::new();
        if let Some(go) = &theirs {
            println!("operator_scale: {n} objects, {}", go.name);
            let plan = Plan {
                delete: go_deletion,
                ..plan
            };
            runs.push(runtime.block_on(run(go, true, 1, plan, scratch.path())));
        }
        for &shards in &shard_counts {
            println!(
                "operator_scale: {n} objects, {}, {shards} shard(s)",
                ours.name
            );
            runs.push(runtime.block_on(run(&ours, false, shards, plan, scratch.path())));
        }
        print_size(&runs);
    }
}
