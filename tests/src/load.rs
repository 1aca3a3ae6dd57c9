//! The operator benchmarks' shared pieces (`operator_load`, `operator_scale`): our scaffold
//! and a kubebuilder Go operator with the same reconcile, each built as a user builds it; a
//! control plane whose audit log records the operators' requests; one ServiceAccount per
//! operator process; the process's RSS and CPU; Guestbook objects created and deleted many at
//! once.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams,
};
use operator_gen_envtest::{ControlPlane, Settings};

use crate::operator::{free_port, generated_target_dir, http_get, operator_gen, shell};
use crate::{cli, tools};

/// The group of the benchmarks' kind.
pub const GROUP: &str = "webapp.my.domain";
/// The benchmarks' kind.
pub const KIND: &str = "Guestbook";

/// The Go controller: the same work as the scaffold's `reconcile_with_finalizer` and `apply`.
pub const GO_CONTROLLER: &str = r#"package controller

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
pub struct Operator {
    pub name: &'static str,
    pub binary: PathBuf,
    /// Flags beyond the metrics and probe addresses.
    pub extra_args: Vec<String>,
    pub crd: PathBuf,
}

/// Our project, built `--release` in the shared target directory.
pub fn build_ours(parent: &Path) -> Operator {
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

/// kubebuilder's project with the Go controller above, built by `go build`; with
/// `strip_managed_fields`, its manager's cache drops each object's `managedFields`
/// (controller-runtime's `cache.TransformStripManagedFields()` as the cache's default
/// transform), as operators that care for memory set it.
pub fn build_go(
    parent: &Path,
    kubebuilder: &Path,
    controller_gen: &Path,
    strip_managed_fields: bool,
) -> Operator {
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
    if strip_managed_fields {
        strip_managed_fields_in(&dir.join("cmd/main.go"));
    }
    let binary = parent.join("manager-go");
    go(
        &dir,
        Path::new("go"),
        &["build", "-o", &binary.to_string_lossy(), "./cmd"],
    );
    Operator {
        name: if strip_managed_fields {
            "kubebuilder v4 (Go, managedFields stripped)"
        } else {
            "kubebuilder v4 (Go)"
        },
        binary,
        extra_args: vec!["--metrics-secure=false".to_owned()],
        crd: dir.join("config/crd/bases/webapp.my.domain_guestbooks.yaml"),
    }
}

/// Sets the cache's default transform in the manager options of kubebuilder's `cmd/main.go`.
fn strip_managed_fields_in(main: &Path) {
    let text = std::fs::read_to_string(main).expect("read cmd/main.go");
    let import = "ctrl \"sigs.k8s.io/controller-runtime\"\n";
    let options = "ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{\n";
    assert!(
        text.contains(import)
            && text.contains(options)
            && !text.contains("controller-runtime/pkg/cache\""),
        "kubebuilder's cmd/main.go has changed: {} no longer takes the cache transform",
        main.display()
    );
    let text = text
        .replacen(
            import,
            &format!("{import}\t\"sigs.k8s.io/controller-runtime/pkg/cache\"\n"),
            1,
        )
        .replacen(
            options,
            &format!(
                "{options}\t\tCache: cache.Options{{DefaultTransform: cache.TransformStripManagedFields()}},\n"
            ),
            1,
        );
    std::fs::write(main, text).expect("write cmd/main.go");
}

/// `VmRSS` of `pid` in MiB, 0 once it is gone.
pub fn rss_mib(pid: u32) -> f64 {
    status_mib(pid, "VmRSS:")
}

/// A field of `/proc/<pid>/status` given in kB (`VmRSS:`, `RssAnon:`), in MiB; 0 once the
/// process is gone.
pub fn status_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// User plus system CPU seconds `pid` has used.
pub fn cpu_seconds(pid: u32, ticks_per_second: f64) -> f64 {
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

pub fn clock_ticks() -> f64 {
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
pub struct PeakRss {
    peak_kib: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PeakRss {
    pub fn watch(pid: u32) -> PeakRss {
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

    pub fn reset(&self) {
        self.peak_kib.store(0, Ordering::Relaxed);
    }

    pub fn peak_mib(&self) -> f64 {
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
pub struct Running {
    child: Child,
    metrics_port: u16,
}

impl Running {
    /// Starts `op` with `args` besides its own, as the user of `kubeconfig`, its output to
    /// `log`, and waits until it serves `/readyz`.
    pub fn start(op: &Operator, args: &[String], kubeconfig: &Path, log: &Path) -> Running {
        let metrics_port = free_port();
        let probe_port = free_port();
        let log = std::fs::File::create(log).expect("create the log");
        let child = Command::new(&op.binary)
            .arg(format!("--metrics-bind-address=127.0.0.1:{metrics_port}"))
            .arg(format!(
                "--health-probe-bind-address=127.0.0.1:{probe_port}"
            ))
            .args(&op.extra_args)
            .args(args)
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

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `controller_runtime_reconcile_total` of the controller for `result`, or summed over
    /// every result (`success`, `requeue`, `requeue_after`, `error`) when `None`.
    pub fn reconciles(&self, result: Option<&str>) -> f64 {
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

/// kubebuilder and controller-gen from the tools cache, built first by `hack/tools/build.sh`;
/// `None`, saying why on stderr, when they cannot be had.
pub fn go_tools(bench: &str) -> Option<(PathBuf, PathBuf)> {
    let built = Command::new("bash")
        .arg(cli::workspace_root().join("hack/tools/build.sh"))
        .args(["controller-gen", "kubebuilder"])
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        eprintln!("{bench}: hack/tools/build.sh controller-gen kubebuilder failed");
        return None;
    }
    Some((
        tools::go_tool("kubebuilder")?,
        tools::go_tool("controller-gen")?,
    ))
}

/// An audit policy recording, at `Metadata` level, the requests of the ServiceAccounts
/// `accounts` of the `default` namespace, and nothing else.
pub fn audit_policy(accounts: &[String]) -> String {
    let users: Vec<String> = accounts
        .iter()
        .map(|a| format!("\"{}\"", account_user(a)))
        .collect();
    format!(
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n\
         - level: Metadata\n  users: [{}]\n- level: None\n",
        users.join(", ")
    )
}

/// The user name the apiserver gives the ServiceAccount `account` of `default`.
pub fn account_user(account: &str) -> String {
    format!("system:serviceaccount:default:{account}")
}

/// A control plane whose apiserver writes the requests of `accounts` to `dir/audit.log` (in
/// `dir`, so that the log outlives the control plane), with `extra_args` for the apiserver,
/// and the Guestbook CRD at `crd` established. Returns the control plane and the log's path.
pub async fn audited_plane(
    dir: &Path,
    accounts: &[String],
    extra_args: &[String],
    crd: &Path,
) -> (ControlPlane, PathBuf) {
    let policy = dir.join("audit-policy.yaml");
    std::fs::write(&policy, audit_policy(accounts)).expect("write the audit policy");
    let audit = dir.join("audit.log");
    let mut apiserver_args = vec![
        format!("--audit-policy-file={}", policy.display()),
        format!("--audit-log-path={}", audit.display()),
    ];
    apiserver_args.extend(extra_args.iter().cloned());
    let plane = ControlPlane::start_with(Settings {
        apiserver_args,
        ..Settings::default()
    })
    .await
    .expect("control plane starts");
    let crd_text = std::fs::read_to_string(crd).expect("the CRD");
    let crd = serde_saphyr::from_str(&crd_text).expect("the CRD is YAML");
    plane
        .install_crds(&[crd], Duration::from_secs(60))
        .await
        .expect("the CRD is established");
    (plane, audit)
}

/// The Guestbooks of `default`, through the admin client of `plane`.
pub fn guestbooks(plane: &ControlPlane) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(GROUP, "v1", KIND);
    Api::namespaced_with(plane.client(), "default", &ApiResource::from_gvk(&gvk))
}

/// The audit log `log` and the files the apiserver rotated it to (`<stem>-<time>.log` beside
/// it, each time it reached 100 MB), oldest first.
pub fn audit_files(log: &Path) -> Vec<PathBuf> {
    let stem = log
        .file_stem()
        .map(|s| format!("{}-", s.to_string_lossy()))
        .unwrap_or_default();
    let mut rotated: Vec<PathBuf> = log
        .parent()
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .is_some_and(|f| f.starts_with(&stem) && f.ends_with(".log"))
        })
        .collect();
    rotated.sort();
    rotated.push(log.to_path_buf());
    rotated
}

/// The distinct audited requests in `log` and its rotated files, by user, then by verb,
/// resource (`resource/subresource`) and response code.
pub fn audited_requests(log: &Path) -> BTreeMap<String, BTreeMap<String, usize>> {
    audited_requests_split(log, None).all
}

/// What [`audited_requests_split`] counts.
#[derive(Default)]
pub struct AuditedRequests {
    /// As [`audited_requests`] counts them.
    pub all: BTreeMap<String, BTreeMap<String, usize>>,
    /// How many of each user's the apiserver received before the cut.
    pub before_cut: BTreeMap<String, usize>,
}

/// The distinct audited requests in `log` and its rotated files, as [`audited_requests`] counts
/// them, and per user how many the apiserver received (`requestReceivedTimestamp`) before
/// `cut` (all of them without one).
pub fn audited_requests_split(log: &Path, cut: Option<Timestamp>) -> AuditedRequests {
    let mut seen = BTreeSet::new();
    let mut counts = AuditedRequests::default();
    let lines = audit_files(log).into_iter().flat_map(|path| {
        let file = std::fs::File::open(&path)
            .unwrap_or_else(|e| panic!("cannot read the audit log {}: {e}", path.display()));
        BufReader::new(file).lines().map_while(Result::ok)
    });
    for line in lines {
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
        let user = event["user"]["username"].as_str().unwrap_or("-").to_owned();
        let before = cut.is_none_or(|cut| {
            let received = event["requestReceivedTimestamp"].as_str().unwrap_or("");
            let received: Timestamp = received.parse().unwrap_or_else(|e| {
                panic!("audit event {id}: requestReceivedTimestamp {received:?}: {e}")
            });
            received < cut
        });
        if before {
            *counts.before_cut.entry(user.clone()).or_insert(0) += 1;
        }
        *counts.all.entry(user).or_default().entry(key).or_insert(0) += 1;
    }
    counts
}

/// The Guestbook `gb-<i>`, its spec naming it.
pub fn guestbook(i: usize) -> DynamicObject {
    let gvk = GroupVersionKind::gvk(GROUP, "v1", KIND);
    let name = format!("gb-{i:06}");
    let mut obj = DynamicObject::new(&name, &ApiResource::from_gvk(&gvk));
    obj.data = serde_json::json!({ "spec": { "foo": name } });
    obj
}

/// Creates `gb-0` to `gb-<n - 1>`, `in_flight` requests at a time.
pub async fn create_all(api: &Api<DynamicObject>, n: usize, in_flight: usize) {
    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &guestbook(i))
                    .await
                    .expect("create a guestbook")
            }
        })
        .buffer_unordered(in_flight)
        .collect::<Vec<_>>()
        .await;
}

/// Deletes `gb-0` to `gb-<n - 1>`, `in_flight` requests at a time (each stays until its
/// finalizer is removed).
pub async fn delete_all(api: &Api<DynamicObject>, n: usize, in_flight: usize) {
    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            async move {
                api.delete(
                    &guestbook(i).metadata.name.unwrap_or_default(),
                    &DeleteParams::default(),
                )
                .await
                .expect("delete a guestbook")
            }
        })
        .buffer_unordered(in_flight)
        .collect::<Vec<_>>()
        .await;
}

/// Lists every 100 ms until `done` holds for the list, for at most ten minutes.
pub async fn wait_all(
    api: &Api<DynamicObject>,
    what: &str,
    done: impl Fn(&[DynamicObject]) -> bool,
) {
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

/// The ServiceAccount `account` of `default`, bound to cluster-admin, and a kubeconfig at
/// `out` with its token.
pub async fn account_kubeconfig(plane: &ControlPlane, account: &str, out: &Path) {
    use k8s_openapi::api::core::v1::ServiceAccount;
    use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
    let client = plane.client();
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let sa: ServiceAccount = serde_json::from_value(serde_json::json!({
        "metadata": { "name": account }
    }))
    .expect("account");
    accounts
        .create(&PostParams::default(), &sa)
        .await
        .expect("create the account");
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": { "name": format!("{account}-admin") },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin" },
        "subjects": [{ "kind": "ServiceAccount", "name": account, "namespace": "default" }]
    }))
    .expect("binding");
    Api::<ClusterRoleBinding>::all(client)
        .create(&PostParams::default(), &binding)
        .await
        .expect("bind the account");
    // a day, so that a long run does not outlive the token
    let request = serde_json::from_value(serde_json::json!({
        "spec": { "audiences": [], "expirationSeconds": 86400 }
    }))
    .expect("token request");
    let token = accounts
        .create_token_request(account, &PostParams::default(), &request)
        .await
        .expect("a token")
        .status
        .and_then(|s| s.token)
        .expect("token");
    crate::operator::token_kubeconfig(plane.kubeconfig(), &token, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_files_are_the_rotated_logs_oldest_first_then_the_log() {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in [
            "audit.log",
            "audit-2026-11-27T22-03-04.304.log",
            "audit-2026-11-27T22-00-16.352.log",
            "audit-policy.yaml",
            "replica-0.log",
        ] {
            std::fs::write(dir.path().join(name), "").expect("write");
        }
        let names: Vec<String> = audit_files(&dir.path().join("audit.log"))
            .iter()
            .filter_map(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
            .collect();
        assert_eq!(
            names,
            [
                "audit-2026-11-27T22-00-16.352.log",
                "audit-2026-11-27T22-03-04.304.log",
                "audit.log"
            ]
        );
    }
}
