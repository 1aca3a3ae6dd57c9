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

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams,
};
use operator_gen_envtest::{ControlPlane, Settings};
use operator_gen_runtime::futures::{self, StreamExt};
use operator_gen_tests::cli;
use operator_gen_tests::integrity::ready_for_generation;
use operator_gen_tests::operator::{
    free_port, generated_target_dir, http_get, operator_gen, shell,
};
use operator_gen_tests::tools;

const GROUP: &str = "webapp.my.domain";
const KIND: &str = "Guestbook";
const OPERATOR_ACCOUNT: &str = "operator";

/// The Go controller: the same work as the scaffold's `reconcile_with_finalizer` and `apply`.
const GO_CONTROLLER: &str = r#"package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	webappv1 "my.domain/guestbook/api/v1"
)

const guestbookFinalizer = "webapp.my.domain/finalizer"

// GuestbookReconciler reconciles a Guestbook object
type GuestbookReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	recorder record.EventRecorder
}

// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

func (r *GuestbookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var gb webappv1.Guestbook
	if err := r.Get(ctx, req.NamespacedName, &gb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !gb.DeletionTimestamp.IsZero() {
		if controllerutil.ContainsFinalizer(&gb, guestbookFinalizer) {
			r.recorder.Eventf(&gb, corev1.EventTypeNormal, "Deleting", "Guestbook %s is being deleted", gb.Name)
			patch := client.MergeFrom(gb.DeepCopy())
			controllerutil.RemoveFinalizer(&gb, guestbookFinalizer)
			if err := r.Patch(ctx, &gb, patch); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(&gb, guestbookFinalizer) {
		patch := client.MergeFrom(gb.DeepCopy())
		controllerutil.AddFinalizer(&gb, guestbookFinalizer)
		if err := r.Patch(ctx, &gb, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	ready := meta.FindStatusCondition(gb.Status.Conditions, "Ready")
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != gb.Generation {
		patch := client.MergeFrom(gb.DeepCopy())
		meta.SetStatusCondition(&gb.Status.Conditions, metav1.Condition{
			Type:               "Ready",
			Status:             metav1.ConditionTrue,
			Reason:             "Reconciled",
			Message:            fmt.Sprintf("Guestbook %s is reconciled", gb.Name),
			ObservedGeneration: gb.Generation,
		})
		if err := r.Status().Patch(ctx, &gb, patch); err != nil {
			return ctrl.Result{}, err
		}
		r.recorder.Eventf(&gb, corev1.EventTypeNormal, "Reconciled", "Guestbook %s is ready", gb.Name)
	}
	return ctrl.Result{}, nil
}

// SetupWithManager sets up the controller with the Manager.
func (r *GuestbookReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.recorder = mgr.GetEventRecorderFor("guestbook")
	return ctrl.NewControllerManagedBy(mgr).
		For(&webappv1.Guestbook{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("guestbook").
		Complete(r)
}
"#;

/// One operator under test: how to start it, and its CRD.
struct Operator {
    name: &'static str,
    binary: PathBuf,
    /// Flags beyond the metrics and probe addresses.
    extra_args: Vec<String>,
    crd: PathBuf,
}

/// Our project, built `--release` in the shared target directory.
fn build_ours(parent: &Path) -> Operator {
    let dir = parent.join("guestbook");
    std::fs::create_dir_all(&dir).expect("mkdir");
    operator_gen(&dir, "init --domain my.domain");
    operator_gen(
        &dir,
        "create api --group webapp --version v1 --kind Guestbook --yes",
    );
    let tool = format!("OPERATOR_GEN={}", cli::operator_gen_bin().display());
    shell(&dir, "make", &["manifests", &tool]);
    shell(
        &dir,
        &cli::cargo(),
        &["build", "--release", "--bin", "manager"],
    );
    let binary = parent.join("manager-rust");
    std::fs::copy(generated_target_dir().join("release/manager"), &binary)
        .expect("copy the manager");
    // plain-HTTP metrics, when the manager serves them over HTTPS by default
    let help = Command::new(&binary)
        .arg("--help")
        .output()
        .expect("manager --help");
    let mut extra_args = Vec::new();
    if String::from_utf8_lossy(&help.stdout).contains("--metrics-secure") {
        extra_args.push("--metrics-secure=false".to_owned());
    }
    Operator {
        name: "operator-gen (Rust)",
        binary,
        extra_args,
        crd: dir.join("config/crd/bases/webapp.my.domain_guestbooks.yaml"),
    }
}

fn go(dir: &Path, program: &Path, args: &[&str]) {
    let status = tools::offline_go(Command::new(program).current_dir(dir).args(args))
        .env("GOSUMDB", "off")
        .env("CGO_ENABLED", "0")
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    assert!(
        status.success(),
        "`{} {}` failed in {}",
        program.display(),
        args.join(" "),
        dir.display()
    );
}

/// kubebuilder's project with the Go controller above, built by `go build`.
fn build_go(parent: &Path, kubebuilder: &Path, controller_gen: &Path) -> Operator {
    let dir = parent.join("guestbook-go");
    std::fs::create_dir_all(&dir).expect("mkdir");
    go(
        &dir,
        kubebuilder,
        &[
            "init",
            "--domain",
            "my.domain",
            "--repo",
            "my.domain/guestbook",
            "--skip-go-version-check",
        ],
    );
    go(
        &dir,
        kubebuilder,
        &[
            "create",
            "api",
            "--group",
            "webapp",
            "--version",
            "v1",
            "--kind",
            KIND,
            "--resource",
            "--controller",
            "--make=false",
        ],
    );
    std::fs::write(
        dir.join("internal/controller/guestbook_controller.go"),
        GO_CONTROLLER,
    )
    .expect("write the Go controller");
    // the Makefile's `generate` and `manifests` commands
    go(
        &dir,
        controller_gen,
        &["object:headerFile=hack/boilerplate.go.txt", "paths=./..."],
    );
    go(
        &dir,
        controller_gen,
        &[
            "rbac:roleName=manager-role",
            "crd",
            "webhook",
            "paths=./...",
            "output:crd:artifacts:config=config/crd/bases",
        ],
    );
    let binary = parent.join("manager-go");
    go(
        &dir,
        Path::new("go"),
        &["build", "-o", &binary.to_string_lossy(), "./cmd"],
    );
    Operator {
        name: "kubebuilder v4 (Go)",
        binary,
        extra_args: vec!["--metrics-secure=false".to_owned()],
        crd: dir.join("config/crd/bases/webapp.my.domain_guestbooks.yaml"),
    }
}

/// `VmRSS` of `pid` in MiB, 0 once it is gone.
fn rss_mib(pid: u32) -> f64 {
    status_mib(pid, "VmRSS:")
}

/// A field of `/proc/<pid>/status` given in kB (`VmRSS:`, `RssAnon:`), in MiB; 0 once the
/// process is gone.
fn status_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

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

/// User plus system CPU seconds `pid` has used.
fn cpu_seconds(pid: u32, ticks_per_second: f64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // fields after the command name in parentheses; utime and stime are the 14th and 15th
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<f64>().ok()))
        .sum();
    ticks / ticks_per_second
}

fn clock_ticks() -> f64 {
    let out = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .expect("getconf CLK_TCK");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(100.0)
}

/// Samples the RSS of `pid` every 20 ms and keeps the peak, until dropped.
struct PeakRss {
    peak_kib: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PeakRss {
    fn watch(pid: u32) -> PeakRss {
        let peak_kib = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (peak, halt) = (peak_kib.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !halt.load(Ordering::Relaxed) {
                let kib = (rss_mib(pid) * 1024.0) as u64;
                peak.fetch_max(kib, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        PeakRss {
            peak_kib,
            stop,
            thread: Some(thread),
        }
    }

    fn reset(&self) {
        self.peak_kib.store(0, Ordering::Relaxed);
    }

    fn peak_mib(&self) -> f64 {
        self.peak_kib.load(Ordering::Relaxed) as f64 / 1024.0
    }
}

impl Drop for PeakRss {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A running operator process, killed on drop.
struct Running {
    child: Child,
    metrics_port: u16,
}

impl Running {
    fn start(op: &Operator, kubeconfig: &Path, log: &Path) -> Running {
        let metrics_port = free_port();
        let probe_port = free_port();
        let log = std::fs::File::create(log).expect("create the log");
        let child = Command::new(&op.binary)
            .arg(format!("--metrics-bind-address=127.0.0.1:{metrics_port}"))
            .arg(format!(
                "--health-probe-bind-address=127.0.0.1:{probe_port}"
            ))
            .args(&op.extra_args)
            .env("KUBECONFIG", kubeconfig)
            .env_remove("WATCH_NAMESPACE")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", op.binary.display()));
        let deadline = Instant::now() + Duration::from_secs(60);
        while http_get(probe_port, "/readyz").is_err() {
            assert!(
                Instant::now() < deadline,
                "{} does not serve /readyz",
                op.name
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Running {
            child,
            metrics_port,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `controller_runtime_reconcile_total` of the controller for `result`, or summed over
    /// every result (`success`, `requeue`, `requeue_after`, `error`) when `None`.
    fn reconciles(&self, result: Option<&str>) -> f64 {
        let body = http_get(self.metrics_port, "/metrics")
            .unwrap_or_else(|e| panic!("no metrics on port {}: {e}", self.metrics_port));
        let samples: Vec<&str> = body
            .lines()
            .filter(|l| {
                l.starts_with("controller_runtime_reconcile_total{")
                    && l.contains("controller=\"guestbook\"")
            })
            .collect();
        assert!(
            !samples.is_empty(),
            "no controller_runtime_reconcile_total for the guestbook controller:\n{body}"
        );
        samples
            .iter()
            .filter(|l| result.is_none_or(|r| l.contains(&format!("result=\"{r}\""))))
            .filter_map(|l| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()))
            .sum::<f64>()
            + 0.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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

const AUDIT_POLICY: &str = "apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [\"system:serviceaccount:default:operator\"]
- level: None
";

/// Distinct requests of the operator's account in the audit log, by verb and resource
/// (`resource/subresource`), with their response codes.
fn audited_requests(log: &Path) -> std::collections::BTreeMap<String, usize> {
    let file = std::fs::File::open(log).expect("the audit log");
    let mut seen = std::collections::BTreeSet::new();
    let mut counts = std::collections::BTreeMap::new();
    for line in BufReader::new(file).lines().map_while(Result::ok) {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let Some(id) = event["auditID"].as_str() else {
            continue;
        };
        if !seen.insert(id.to_owned()) {
            continue;
        }
        let object = &event["objectRef"];
        let resource = match object["subresource"].as_str() {
            Some(sub) => format!("{}/{sub}", object["resource"].as_str().unwrap_or("-")),
            None => object["resource"].as_str().unwrap_or("-").to_owned(),
        };
        let code = event["responseStatus"]["code"]
            .as_i64()
            .map_or("-".to_owned(), |c| c.to_string());
        let key = format!(
            "{} {resource} {code}",
            event["verb"].as_str().unwrap_or("-")
        );
        *counts.entry(key).or_insert(0) += 1;
    }
    counts
}

fn guestbook(name: &str) -> DynamicObject {
    let gvk = GroupVersionKind::gvk(GROUP, "v1", KIND);
    let mut obj = DynamicObject::new(name, &ApiResource::from_gvk(&gvk));
    obj.data = serde_json::json!({ "spec": { "foo": name } });
    obj
}

async fn create_all(api: &Api<DynamicObject>, n: usize) {
    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &guestbook(&format!("gb-{i:05}")))
                    .await
                    .expect("create a guestbook")
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
}

async fn wait_all(api: &Api<DynamicObject>, what: &str, done: impl Fn(&[DynamicObject]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let list = api.list(&ListParams::default()).await.expect("list");
        if done(&list.items) {
            return;
        }
        assert!(Instant::now() < deadline, "{what} never happened");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The operator's account, bound to cluster-admin, and a kubeconfig with its token.
async fn operator_kubeconfig(plane: &ControlPlane, out: &Path) {
    use k8s_openapi::api::core::v1::ServiceAccount;
    use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
    let client = plane.client();
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let account: ServiceAccount = serde_json::from_value(serde_json::json!({
        "metadata": { "name": OPERATOR_ACCOUNT }
    }))
    .expect("account");
    accounts
        .create(&PostParams::default(), &account)
        .await
        .expect("create the account");
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": { "name": "operator-admin" },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin" },
        "subjects": [{ "kind": "ServiceAccount", "name": OPERATOR_ACCOUNT, "namespace": "default" }]
    }))
    .expect("binding");
    Api::<ClusterRoleBinding>::all(client)
        .create(&PostParams::default(), &binding)
        .await
        .expect("bind the account");
    let token = accounts
        .create_token_request(
            OPERATOR_ACCOUNT,
            &PostParams::default(),
            &Default::default(),
        )
        .await
        .expect("a token")
        .status
        .and_then(|s| s.token)
        .expect("token");
    operator_gen_tests::operator::token_kubeconfig(plane.kubeconfig(), &token, out);
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
    let policy = dir.join("audit-policy.yaml");
    std::fs::write(&policy, AUDIT_POLICY).expect("write the audit policy");
    let audit = dir.join("audit.log");
    let plane = ControlPlane::start_with(Settings {
        apiserver_args: vec![
            format!("--audit-policy-file={}", policy.display()),
            format!("--audit-log-path={}", audit.display()),
        ],
        ..Settings::default()
    })
    .await
    .expect("control plane starts");
    let crd_text = std::fs::read_to_string(&op.crd).expect("the CRD");
    let crd = serde_saphyr::from_str(&crd_text).expect("the CRD is YAML");
    plane
        .install_crds(&[crd], Duration::from_secs(60))
        .await
        .expect("the CRD is established");
    let kubeconfig = dir.join("operator.kubeconfig");
    operator_kubeconfig(&plane, &kubeconfig).await;
    let gvk = GroupVersionKind::gvk(GROUP, "v1", KIND);
    let api: Api<DynamicObject> =
        Api::namespaced_with(plane.client(), "default", &ApiResource::from_gvk(&gvk));

    if load == Load::Backlog {
        create_all(&api, n).await;
    }
    let started = Instant::now();
    let operator = Running::start(op, &kubeconfig, &dir.join("operator.log"));
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
        create_all(&api, n).await;
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

    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            async move {
                api.delete(&format!("gb-{i:05}"), &DeleteParams::default())
                    .await
                    .expect("delete a guestbook")
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
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
    let requests = audited_requests(&audit);
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
    let built = Command::new("bash")
        .arg(cli::workspace_root().join("hack/tools/build.sh"))
        .args(["controller-gen", "kubebuilder"])
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        eprintln!("operator_load: hack/tools/build.sh controller-gen kubebuilder failed");
        return;
    }
    let (Some(kubebuilder), Some(controller_gen)) = (
        tools::go_tool("kubebuilder"),
        tools::go_tool("controller-gen"),
    ) else {
        return;
    };
    let scratch = tempfile::tempdir().expect("tempdir");
    println!("operator_load: building both operators");
    let ours = build_ours(scratch.path());
    // `LOAD_ONLY_OURS=1` skips the Go operator, for quicker runs while tuning ours
    let only_ours = std::env::var("LOAD_ONLY_OURS").is_ok_and(|v| v == "1");
    let theirs = (!only_ours).then(|| build_go(scratch.path(), &kubebuilder, &controller_gen));
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
