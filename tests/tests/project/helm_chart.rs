//! The Helm chart of `operator-gen edit --plugins helm` and the installer of `make
//! build-installer`, on a scaffolded project (`init`, two kinds, `make helm`):
//! - `helm lint --strict dist/chart` passes, and `helm template` with default values yields the objects
//!   `kubectl kustomize config/default` yields, compared parsed and whole, every difference
//!   listed in [`EXCEPTIONS`], for a cluster-wide manager and a namespaced one (`init
//!   --namespaced`: Role, RoleBinding, WATCH_NAMESPACE); non-default values switch what they name;
//! - regenerating (`make manifests`) keeps the user's values, added files and edited templates,
//!   says what it left alone, and follows config/ where the user changed nothing (a changed
//!   default, a new kind, an object config/ no longer renders);
//! - `dist/install.yaml` and the chart's rendering are each applied with server-side apply to a
//!   real kube-apiserver, every object is accepted and the CRDs are Established.
//!
//! Needs `make`, `kubectl` and helm from the tools cache (`hack/tools/build.sh`); the apiserver
//! test also the envtest binaries. Outside CI a missing tool skips, saying so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_tests::cli;
use operator_gen_tests::first_difference;
use operator_gen_tests::tools::{Ran, go_tool, record_ran};
use serde_json::Value;

/// The project the tests scaffold (and so the chart's name and the kustomize namespace).
const PROJECT: &str = "shipyard";
const NAMESPACE: &str = "shipyard-system";

/// Every difference allowed between `helm template` (default values, `--namespace
/// shipyard-system`) and `kubectl kustomize config/default`, and between what each applies.
const EXCEPTIONS: &[(&str, &str)] = &[
    (
        "Namespace shipyard-system",
        "only in the kustomize rendering: a chart installs into the release namespace, which `helm install --create-namespace` (here: the test) creates",
    ),
    (
        "metadata.labels helm.sh/chart, app.kubernetes.io/instance",
        "only in the chart: Helm's labels, from the chart's labels helper, on every object",
    ),
    (
        "metadata.labels app.kubernetes.io/managed-by",
        "`kustomize` in config/ (on the objects that carry it), `Helm` (.Release.Service) on every object of the chart",
    ),
    (
        "ServiceMonitor",
        "in neither default rendering (config/default does not list ../prometheus; prometheus.enable defaults to false); rendered with prometheus.enable=true it is checked by name and namespace but not applied: its CRD is the Prometheus Operator's, which the project does not generate",
    ),
];

/// Labels the chart adds (see [`EXCEPTIONS`]).
const HELM_LABELS: &[&str] = &[
    "helm.sh/chart",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/managed-by",
];

fn operator_gen(dir: &Path, args: &str) -> cli::Output {
    let out = cli::run(dir, &cli::split_args(args));
    assert_eq!(out.code, 0, "`operator-gen {args}` failed: {}", out.stderr);
    out
}

/// Runs `program args` in `dir`; stdout and stderr on success, a panic with both otherwise.
fn run(dir: &Path, program: &Path, args: &[&str]) -> (String, String) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("OPERATOR_GEN_YEAR", cli::YEAR)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "`{} {}` failed:\n{stdout}\n{stderr}",
        program.display(),
        args.join(" ")
    );
    (stdout, stderr)
}

/// The tools: make, kubectl and helm; `None` (after reporting the skip) outside CI when one is missing.
fn tools() -> Option<PathBuf> {
    if !cli::require_tool("make", &["--version"], cli::INSTALL_MAKE)
        || !cli::require_tool("kubectl", &["version", "--client"], cli::INSTALL_KUBECTL)
    {
        return None;
    }
    go_tool("helm")
}

/// A project made by `init` (this command line) with a namespaced kind, its chart made by
/// `make helm`.
fn project_with_chart(tmp: &Path, init: &str) -> PathBuf {
    let dir = tmp.join(PROJECT);
    std::fs::create_dir_all(&dir).expect("mkdir");
    operator_gen(&dir, init);
    operator_gen(&dir, "create api --group crew --version v1 --kind Captain");
    let (_, stderr) = make(&dir, "helm");
    assert!(
        stderr.contains("create dist/chart/values.yaml"),
        "make helm wrote no chart:\n{stderr}"
    );
    dir
}

fn make(dir: &Path, target: &str) -> (String, String) {
    let bin = format!("OPERATOR_GEN={}", cli::operator_gen_bin().display());
    run(dir, Path::new("make"), &[target, &bin])
}

fn documents(yaml: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(yaml)
        .expect("rendering is YAML")
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

fn key(d: &Value) -> String {
    format!(
        "{} {}/{}",
        d["kind"].as_str().unwrap_or("?"),
        d.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or(""),
        d.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("?")
    )
}

/// Removes the labels of [`HELM_LABELS`] (an emptied `labels` goes too).
fn without_helm_labels(mut d: Value) -> Value {
    if let Some(labels) = d
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        for l in HELM_LABELS {
            labels.remove(*l);
        }
        if labels.is_empty()
            && let Some(md) = d.get_mut("metadata").and_then(Value::as_object_mut)
        {
            md.remove("labels");
        }
    }
    d
}

fn helm_template(helm: &Path, dir: &Path, sets: &[&str]) -> Vec<Value> {
    let mut args = vec!["template", PROJECT, "dist/chart", "--namespace", NAMESPACE];
    for s in sets {
        args.extend(["--set", s]);
    }
    documents(&run(dir, helm, &args).0)
}

fn by_key(docs: Vec<Value>) -> BTreeMap<String, Value> {
    docs.into_iter().map(|d| (key(&d), d)).collect()
}

/// `helm lint --strict` passes and `helm template` with default values renders, object for
/// object, what `kubectl kustomize config/default` renders, but for [`EXCEPTIONS`]; returns the
/// chart's objects by key.
fn lint_and_compare(helm: &Path, dir: &Path) -> BTreeMap<String, Value> {
    record_ran(Ran::GoPeers);
    let (lint, _) = run(dir, helm, &["lint", "--strict", "dist/chart"]);
    assert!(lint.contains("0 chart(s) failed"), "{lint}");
    let kustomized = documents(&run(dir, Path::new("kubectl"), &["kustomize", "config/default"]).0);
    let mut expected = by_key(kustomized.into_iter().map(without_helm_labels).collect());
    let ns = expected.remove(&format!("Namespace /{NAMESPACE}"));
    assert!(ns.is_some(), "kustomize renders the namespace");
    let chart = by_key(
        helm_template(helm, dir, &[])
            .into_iter()
            .map(without_helm_labels)
            .collect(),
    );
    assert_eq!(
        chart.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "the chart renders the objects kustomize renders"
    );
    for (k, want) in &expected {
        if let Some(diff) = first_difference(want, &chart[k], "") {
            panic!("{k} differs between kustomize and the chart at {diff}");
        }
    }
    eprintln!(
        "compared {} objects of `helm template` with `kubectl kustomize config/default`; exceptions:",
        expected.len()
    );
    for (what, why) in EXCEPTIONS {
        eprintln!("  {what}: {why}");
    }
    chart
}

#[test]
fn chart_lints_and_renders_what_kustomize_renders() {
    let Some(helm) = tools() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = project_with_chart(tmp.path(), "init --domain my.domain");
    // a second kind, cluster-scoped, reaches the chart through `make manifests` alone
    operator_gen(
        &dir,
        "create api --group crew --version v1 --kind FirstMate --namespaced=false",
    );
    make(&dir, "manifests");
    let chart = lint_and_compare(&helm, &dir);
    for name in [
        "CustomResourceDefinition /captains.crew.my.domain",
        "CustomResourceDefinition /firstmates.crew.my.domain",
        "Deployment shipyard-system/shipyard-controller-manager",
        "ServiceAccount shipyard-system/shipyard-controller-manager",
        "ClusterRole /shipyard-manager-role",
        "ClusterRoleBinding /shipyard-manager-rolebinding",
        "Role shipyard-system/shipyard-leader-election-role",
        "ClusterRole /shipyard-metrics-reader",
        "ClusterRole /shipyard-firstmate-viewer-role",
        "Service shipyard-system/shipyard-controller-manager-metrics-service",
    ] {
        assert!(chart.contains_key(name), "the chart renders no {name}");
    }

    // every object of the chart carries Helm's labels and the extra ones
    let labelled = helm_template(&helm, &dir, &["extraLabels.team=deck"]);
    for d in &labelled {
        assert_eq!(d["metadata"]["labels"]["team"], "deck", "{}", key(d));
        assert_eq!(
            d["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            "Helm"
        );
    }
    // the values switch what they name
    let changed = by_key(helm_template(
        &helm,
        &dir,
        &[
            "crd.enable=false",
            "metrics.enable=false",
            "prometheus.enable=true",
            "manager.replicas=2",
            "manager.image.repository=registry.example/shipyard",
            "manager.image.tag=v2",
            "manager.leaderElection.enable=false",
        ],
    ));
    assert!(
        !changed
            .keys()
            .any(|k| k.starts_with("CustomResourceDefinition")),
        "crd.enable=false leaves the CRDs out"
    );
    assert!(
        !changed
            .contains_key("Service shipyard-system/shipyard-controller-manager-metrics-service")
    );
    assert!(changed.contains_key(
        "ServiceMonitor shipyard-system/shipyard-controller-manager-metrics-monitor"
    ));
    let deployment = &changed["Deployment shipyard-system/shipyard-controller-manager"];
    assert_eq!(deployment["spec"]["replicas"], 2);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "registry.example/shipyard:v2");
    assert_eq!(
        container["args"],
        serde_json::json!([
            "--metrics-bind-address=0",
            "--health-probe-bind-address=:8081"
        ])
    );
}

#[test]
fn namespaced_manager_chart_renders_what_kustomize_renders() {
    let Some(helm) = tools() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = project_with_chart(tmp.path(), "init --domain my.domain --namespaced");
    let chart = lint_and_compare(&helm, &dir);
    for name in [
        "Role shipyard-system/shipyard-manager-role",
        "RoleBinding shipyard-system/shipyard-manager-rolebinding",
    ] {
        assert!(chart.contains_key(name), "the chart renders no {name}");
    }
    let deployment = &chart["Deployment shipyard-system/shipyard-controller-manager"];
    let env = &deployment["spec"]["template"]["spec"]["containers"][0]["env"];
    assert!(
        env.as_array()
            .is_some_and(|e| e.iter().any(|v| v["name"] == "WATCH_NAMESPACE")),
        "{env}"
    );
}

#[test]
fn regenerating_keeps_what_the_user_changed() {
    let Some(helm) = tools() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = project_with_chart(tmp.path(), "init --domain my.domain");
    let chart = dir.join("dist/chart");
    let values_path = chart.join("values.yaml");
    let values = std::fs::read_to_string(&values_path).expect("values.yaml");
    assert!(values.contains("  replicas: 1\n"), "{values}");
    std::fs::write(
        &values_path,
        format!(
            "{}myKey: mine\n",
            values.replace("  replicas: 1\n", "  replicas: 3\n")
        ),
    )
    .expect("edit values.yaml");
    let edited = chart.join("templates/rbac/metrics-reader.yaml");
    let mut text = std::fs::read_to_string(&edited).expect("generated template");
    text.push_str("# reviewed by the platform team\n");
    std::fs::write(&edited, &text).expect("edit a template");
    let extra = chart.join("templates/extra-configmap.yaml");
    let extra_text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: {{ .Release.Namespace }}\n";
    std::fs::write(&extra, extra_text).expect("add a file");
    // config/ changes where the user changed nothing: the chart follows it
    let manager = dir.join("config/manager/manager.yaml");
    let m = std::fs::read_to_string(&manager).expect("manager.yaml");
    assert!(m.contains("cpu: 500m"), "{m}");
    std::fs::write(&manager, m.replace("cpu: 500m", "cpu: 600m")).expect("edit config");
    operator_gen(
        &dir,
        "create api --group crew --version v1 --kind Boatswain",
    );
    let default = dir.join("config/default/kustomization.yaml");
    let k = std::fs::read_to_string(&default).expect("kustomization");
    assert!(k.contains("\n- metrics_service.yaml\n"), "{k}");
    std::fs::write(
        &default,
        k.replace("\n- metrics_service.yaml\n", "\n#- metrics_service.yaml\n"),
    )
    .expect("edit config");
    let service = chart.join("templates/metrics/controller-manager-metrics-service.yaml");
    assert!(service.is_file());

    let (_, stderr) = make(&dir, "manifests");
    for said in [
        "left alone: dist/chart/templates/rbac/metrics-reader.yaml (changed since operator-gen generated it",
        "dist/chart/templates/extra-configmap.yaml (yours)",
        "dist/chart/values.yaml: your manager.replicas, myKey",
        "create dist/chart/templates/crd/boatswains.crew.my.domain.yaml",
        "remove dist/chart/templates/metrics/controller-manager-metrics-service.yaml",
    ] {
        assert!(
            stderr.contains(said),
            "regeneration did not say {said:?}:\n{stderr}"
        );
    }
    let values: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&values_path).expect("values.yaml"))
            .expect("values.yaml is YAML");
    assert_eq!(values["manager"]["replicas"], 3);
    assert_eq!(values["myKey"], "mine");
    assert_eq!(values["manager"]["resources"]["limits"]["cpu"], "600m");
    assert_eq!(std::fs::read_to_string(&edited).expect("kept"), text);
    assert_eq!(std::fs::read_to_string(&extra).expect("kept"), extra_text);
    assert!(
        !service.exists(),
        "the template of an object config/ dropped is removed"
    );

    // once more without changes: nothing is written
    let before = cli::tree_hash(&dir);
    let out = operator_gen(&dir, "edit --plugins helm");
    assert!(!out.stderr.contains("update "), "{}", out.stderr);
    assert_eq!(
        before,
        cli::tree_hash(&dir),
        "a second regeneration changed the tree"
    );

    let rendered = by_key(helm_template(&helm, &dir, &[]));
    let deployment = &rendered["Deployment shipyard-system/shipyard-controller-manager"];
    assert_eq!(deployment["spec"]["replicas"], 3);
    assert!(rendered.contains_key("ConfigMap shipyard-system/extra"));
    assert!(rendered.contains_key("CustomResourceDefinition /boatswains.crew.my.domain"));

    // --force takes the edited template back
    operator_gen(&dir, "edit --plugins helm --force");
    assert!(
        !std::fs::read_to_string(&edited)
            .expect("template")
            .contains("platform team")
    );
    record_ran(Ran::GoPeers);
    let (lint, _) = run(&dir, &helm, &["lint", "--strict", "dist/chart"]);
    assert!(lint.contains("0 chart(s) failed"), "{lint}");
}

/// Applies `file` with server-side apply; returns the names kubectl reports.
fn apply(plane: &ControlPlane, dir: &Path, file: &str) -> String {
    let kubeconfig = plane.kubeconfig().to_string_lossy().into_owned();
    let (out, _) = run(
        dir,
        Path::new("kubectl"),
        &[
            "apply",
            "--server-side",
            "--field-manager=operator-gen-test",
            "--kubeconfig",
            &kubeconfig,
            "-f",
            file,
        ],
    );
    run(
        dir,
        Path::new("kubectl"),
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "--kubeconfig",
            &kubeconfig,
            "crd/captains.crew.my.domain",
        ],
    );
    out
}

#[tokio::test]
async fn installer_and_chart_are_accepted_by_the_apiserver() {
    let Some(helm) = tools() else {
        return;
    };
    require_assets!();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = project_with_chart(tmp.path(), "init --domain my.domain");
    let installer = std::fs::read_to_string(dir.join("dist/install.yaml")).expect("install.yaml");
    let expected: Vec<String> = documents(&installer).iter().map(key).collect();
    assert!(
        expected.contains(&"Deployment shipyard-system/shipyard-controller-manager".to_owned())
    );

    let plane = ControlPlane::start().await.expect("control plane starts");
    record_ran(Ran::Apiserver);
    let out = apply(&plane, &dir, "dist/install.yaml");
    for doc in documents(&installer) {
        let line = format!(
            "{} serverside-applied",
            doc.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("?")
        );
        assert!(
            out.contains(&line),
            "install.yaml: {} not accepted:\n{out}",
            key(&doc)
        );
    }
    drop(plane);

    let (rendered, _) = run(
        &dir,
        &helm,
        &["template", PROJECT, "dist/chart", "--namespace", NAMESPACE],
    );
    std::fs::write(dir.join("dist/chart-rendered.yaml"), &rendered).expect("write rendering");
    let plane = ControlPlane::start().await.expect("control plane starts");
    let kubeconfig = plane.kubeconfig().to_string_lossy().into_owned();
    run(
        &dir,
        Path::new("kubectl"),
        &[
            "create",
            "namespace",
            NAMESPACE,
            "--kubeconfig",
            &kubeconfig,
        ],
    );
    let out = apply(&plane, &dir, "dist/chart-rendered.yaml");
    let docs = documents(&rendered);
    assert_eq!(
        docs.len() + 1,
        expected.len(),
        "the chart renders all but the Namespace"
    );
    for doc in docs {
        let line = format!(
            "{} serverside-applied",
            doc.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("?")
        );
        assert!(
            out.contains(&line),
            "chart: {} not accepted:\n{out}",
            key(&doc)
        );
    }
}
