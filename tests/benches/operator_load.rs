//! Benchmark (not a test: nothing here asserts a time) of the scaffolded operator under load,
//! side by side with a kubebuilder v4 Go operator doing the same work.
//!
//! Run it with
//!
//!     source hack/envtest/ensure.sh && cargo bench -p operator-gen-tests --bench operator_load
//!
//! It makes two projects for the kind `Guestbook` (group `webapp.my.domain`): ours with
//! `operator-gen init` and `create api`, built `--release`; and a Go one with `kubebuilder init`
//! and `create api`, whose controller file it replaces with the same work as our scaffold's
//! reconcile (the finalizer, the `Ready` condition for the generation, an event on ready and on
//! deletion, no requeue) under controller-runtime's usual
//! `GenerationChangedPredicate`. kubebuilder and controller-gen come from the tools cache
//! (`hack/tools/build.sh`); the Go side builds offline on the module cache that script filled.
//!
//! Each operator then runs alone, with its binary's defaults (leader election off, as both
//! `main`s default; metrics served as plain HTTP on a loopback port so that they can be read),
//! in two runs, each on a fresh control plane: `streamed` (N objects created while it runs) and
//! `backlog` (N objects present when it starts); then all N are deleted. N is 1,000
//! (`LOAD_OBJECTS` picks another; `LOAD_ONLY_OURS=1` runs ours alone). The operator
//! authenticates as a ServiceAccount bound to `cluster-admin`, and the apiserver's audit log
//! counts that account's requests.
//!
//! Per run it measures: seconds until every object is `Ready` (from the first create, or from
//! the start for the backlog), the process's CPU seconds over that span, reconciles per object
//! (`controller_runtime_reconcile_total`, which both serve), API requests per object (audit
//! log, whole run including deletion), RSS when idle before the load (three seconds after the
//! operator serves `/readyz`, streamed run only), its peak, and RSS five seconds after a list
//! first finds every object gone (lists are 100 ms apart; our manager returns freed memory one
//! to two seconds after its last reconcile, so the reading comes after that). It checks that
//! nothing is lost: every object reached `Ready` for its generation, every deletion completed
//! (the finalizer was removed), and no reconcile ended in an error. It prints a table, each
//! operator's RSS after deletion over its idle RSS (the backlog run's over the streamed run's
//! idle), and the ratios Go / ours.

use std::path::Path;
use std::time::{Duration, Instant};

use operator_gen_tests::integrity::ready_for_generation;
use operator_gen_tests::load::{
    Operator, PeakRss, Running, account_kubeconfig, account_user, audited_plane, audited_requests,
    build_go, build_ours, clock_ticks, cpu_seconds, create_all, delete_all, go_tools, guestbooks,
    rss_mib, status_mib, wait_all,
};

const OPERATOR_ACCOUNT: &str = "operator";
/// Creates and deletes in flight at once.
const IN_FLIGHT: usize = 32;

/// With `LOAD_SMAPS_DIR` set, copies `/proc/<pid>/smaps` there as `<run>-<moment>.smaps`, to
/// see which mappings hold the RSS.
fn keep_smaps(pid: u32, run: &Path, moment: &str) {
    let Some(dir) = std::env::var_os("LOAD_SMAPS_DIR") else {
        return;
    };
    let run = run
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let to = Path::new(&dir).join(format!("{run}-{moment}.smaps"));
    let copied = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::copy(format!("/proc/{pid}/smaps"), &to));
    if let Err(e) = copied {
        eprintln!("operator_load: cannot keep {}: {e}", to.display());
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Load {
    Streamed,
    Backlog,
}

impl Load {
    fn name(self) -> &'static str {
        match self {
            Load::Streamed => "streamed",
            Load::Backlog => "backlog",
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Measurement {
    ready_seconds: f64,
    cpu_seconds: f64,
    /// Until every object is Ready.
    reconciles_per_object: f64,
    /// Until every object is gone, deletion included.
    reconciles_per_object_in_all: f64,
    requests_per_object: f64,
    /// Measured in the streamed run only (the backlog run starts with work).
    idle_rss: Option<f64>,
    /// The anonymous part of `idle_rss` (`RssAnon`: the heap, stacks; the rest is the
    /// executable's and libraries' mapped pages).
    idle_anon: Option<f64>,
    peak_rss: f64,
    rss_after_delete: f64,
    /// The anonymous part of `rss_after_delete`.
    anon_after_delete: f64,
    errors: f64,
    /// Audited requests by `verb resource code`.
    requests: std::collections::BTreeMap<String, usize>,
}

async fn run(op: &Operator, load: Load, n: usize, scratch: &Path, ticks: f64) -> Measurement {
    let dir = scratch.join(format!(
        "{}-{}",
        op.binary
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        load.name()
    ));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let (plane, audit) = audited_plane(&dir, &[OPERATOR_ACCOUNT.to_owned()], &[], &op.crd).await;
    let kubeconfig = dir.join("operator.kubeconfig");
    account_kubeconfig(&plane, OPERATOR_ACCOUNT, &kubeconfig).await;
    let api = guestbooks(&plane);

    if load == Load::Backlog {
        create_all(&api, n, IN_FLIGHT).await;
    }
    let started = Instant::now();
    let operator = Running::start(op, &[], &kubeconfig, &dir.join("operator.log"));
    let peak = PeakRss::watch(operator.pid());
    let mut m = Measurement::default();
    let from = if load == Load::Streamed {
        tokio::time::sleep(Duration::from_secs(3)).await;
        m.idle_rss = Some(rss_mib(operator.pid()));
        m.idle_anon = Some(status_mib(operator.pid(), "RssAnon:"));
        keep_smaps(operator.pid(), &dir, "idle");
        peak.reset();
        let from = Instant::now();
        let cpu = cpu_seconds(operator.pid(), ticks);
        create_all(&api, n, IN_FLIGHT).await;
        (from, cpu)
    } else {
        (started, 0.0)
    };
    wait_all(&api, "every guestbook Ready", |items| {
        items.len() == n && items.iter().all(ready_for_generation)
    })
    .await;
    m.ready_seconds = from.0.elapsed().as_secs_f64();
    m.cpu_seconds = cpu_seconds(operator.pid(), ticks) - from.1;
    m.peak_rss = peak.peak_mib();
    // a quiet moment for the reconciles of the last writes to show in the counters
    tokio::time::sleep(Duration::from_secs(2)).await;
    m.reconciles_per_object = operator.reconciles(None) / n as f64;

    delete_all(&api, n, IN_FLIGHT).await;
    wait_all(
        &api,
        "every guestbook deleted (finalizer removed)",
        |items| items.is_empty(),
    )
    .await;
    // five seconds after the list first came back empty
    tokio::time::sleep(Duration::from_secs(5)).await;
    m.rss_after_delete = rss_mib(operator.pid());
    m.anon_after_delete = status_mib(operator.pid(), "RssAnon:");
    keep_smaps(operator.pid(), &dir, "after-delete");
    m.reconciles_per_object_in_all = operator.reconciles(None) / n as f64;
    m.errors = operator.reconciles(Some("error"));
    drop(peak);
    drop(operator);
    drop(plane);
    let requests = audited_requests(&audit)
        .remove(&account_user(OPERATOR_ACCOUNT))
        .unwrap_or_default();
    m.requests_per_object = requests.values().sum::<usize>() as f64 / n as f64;
    m.requests = requests;
    m
}

/// One operator's measurement in one run.
type Row = (Load, &'static str, Measurement);

/// The measurement of `operator` in the `load` run.
fn measured<'a>(rows: &'a [Row], load: Load, operator: &str) -> Option<&'a Measurement> {
    rows.iter()
        .find(|(l, n, _)| *l == load && *n == operator)
        .map(|(_, _, m)| m)
}

/// `operator`'s idle RSS and its anonymous part, read in the streamed run.
fn idle_of(rows: &[Row], operator: &str) -> Option<(f64, f64)> {
    let streamed = measured(rows, Load::Streamed, operator)?;
    Some((streamed.idle_rss?, streamed.idle_anon?))
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let n: usize = std::env::var("LOAD_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    if operator_gen_envtest::require_assets().is_none() {
        eprintln!("operator_load: no control plane; source hack/envtest/ensure.sh first");
        return;
    }
    let Some((kubebuilder, controller_gen)) = go_tools("operator_load") else {
        return;
    };
    let scratch = tempfile::tempdir().expect("tempdir");
    println!("operator_load: building both operators");
    let ours = build_ours(scratch.path());
    // `LOAD_ONLY_OURS=1` skips the Go operator, for quicker runs while tuning ours
    let only_ours = std::env::var("LOAD_ONLY_OURS").is_ok_and(|v| v == "1");
    let theirs =
        (!only_ours).then(|| build_go(scratch.path(), &kubebuilder, &controller_gen, false));
    let ticks = clock_ticks();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut rows: Vec<Row> = Vec::new();
    for load in [Load::Streamed, Load::Backlog] {
        for op in std::iter::once(&ours).chain(theirs.as_ref()) {
            println!("operator_load: {} objects, {}, {}", n, load.name(), op.name);
            let m = runtime.block_on(run(op, load, n, scratch.path(), ticks));
            rows.push((load, op.name, m));
        }
    }
    println!();
    println!(
        "{n} objects; each operator alone on a fresh control plane; 2 cores shared with the apiserver"
    );
    println!(
        "| run | operator | ready after (s) | CPU (s) | reconciles/object to Ready | reconciles/object with deletion | API requests/object | idle RSS (MiB) | peak RSS (MiB) | RSS after delete (MiB) | reconcile errors |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (load, name, m) in &rows {
        println!(
            "| {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {:.1} | {:.1} | {} |",
            load.name(),
            name,
            m.ready_seconds,
            m.cpu_seconds,
            m.reconciles_per_object,
            m.reconciles_per_object_in_all,
            m.requests_per_object,
            m.idle_rss.map_or("-".to_owned(), |r| format!("{r:.1}")),
            m.peak_rss,
            m.rss_after_delete,
            m.errors
        );
    }
    println!();
    println!("API requests by verb, resource and response code:");
    for (load, name, m) in &rows {
        let parts: Vec<String> = m
            .requests
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect();
        println!("  {} {name}: {}", load.name(), parts.join(", "));
    }
    println!();
    println!("RSS after delete / idle RSS (the backlog run's over the streamed run's idle):");
    for (load, name, m) in &rows {
        if let Some((idle, idle_anon)) = idle_of(&rows, name) {
            println!(
                "  {} {name}: {:.2} (anonymous {:.1} MiB after delete against {:.1} idle)",
                load.name(),
                m.rss_after_delete / idle,
                m.anon_after_delete,
                idle_anon
            );
        }
    }
    let Some(theirs) = theirs else {
        return;
    };
    let idle = idle_of(&rows, ours.name).map_or(0.0, |(rss, _)| rss);
    let verdict = |met: bool| if met { "met" } else { "NOT MET" };
    let mut targets = Vec::new();
    println!();
    println!("ratios, Go / ours (above 1: ours is faster, leaner or makes fewer requests):");
    for load in [Load::Streamed, Load::Backlog] {
        let pick = |name: &str| measured(&rows, load, name).cloned().unwrap_or_default();
        let (o, g) = (pick(ours.name), pick(theirs.name));
        println!(
            "  {}: time to Ready {:.2}x, CPU {:.2}x, API requests/object {:.2}x, peak RSS {:.2}x, RSS after delete {:.2}x",
            load.name(),
            g.ready_seconds / o.ready_seconds,
            g.cpu_seconds / o.cpu_seconds,
            g.requests_per_object / o.requests_per_object,
            g.peak_rss / o.peak_rss,
            g.rss_after_delete / o.rss_after_delete,
        );
        targets.push(format!(
            "  {}: throughput at least Go's {}, API requests/object at most Go's {}, peak RSS at most half of Go's {}, RSS after delete within 20 % of idle {}",
            load.name(),
            verdict(o.ready_seconds <= g.ready_seconds),
            verdict(o.requests_per_object <= g.requests_per_object),
            verdict(2.0 * o.peak_rss <= g.peak_rss),
            verdict(o.rss_after_delete <= 1.2 * idle),
        ));
    }
    println!();
    println!("targets (ours; RSS after delete against the streamed run's idle):");
    for line in targets {
        println!("{line}");
    }
}
