//! A freshly generated project tests itself: `init`, `create api`, then the project's own
//! `make test` (with this checkout's `operator-gen`, whose `envtest use` gives
//! `KUBEBUILDER_ASSETS`, and `CI=true`, so a missing control plane fails instead of skipping). Its
//! output must show each scaffolded controller test passing against the apiserver, and no skip:
//! for a namespaced kind (Captain) and a cluster-scoped one (FirstMate) in one project, and for a
//! kind of a multigroup project with a namespace-scoped manager (`init --multigroup --namespaced`).
//!
//! In the apiserver category of the skip rule: without etcd and kube-apiserver it skips outside
//! CI and fails in CI; it also needs `make`.

use std::path::{Path, PathBuf};
use std::process::Command;

use operator_gen_tests::cli;
use operator_gen_tests::operator::{generated_output, operator_gen};
use operator_gen_tests::tools::{Ran, record_ran};

/// The control-plane binaries and `make`, or `None` after the skip (a failure in CI).
fn tools() -> Option<PathBuf> {
    let assets = operator_gen_envtest::require_assets()?;
    cli::require_tool("make", &["--version"], cli::INSTALL_MAKE).then_some(assets)
}

/// Scaffolds `<tmp>/<name>` with `init <init>` and each `create api` of `apis`, runs its
/// `make test` and checks that `tests` (cargo test names) passed, with no skip; returns the
/// project directory (in the returned temporary directory) when it ran.
fn make_test_passes(
    name: &str,
    init: &str,
    apis: &[&str],
    files: &[&str],
    tests: &[&str],
) -> Option<(tempfile::TempDir, PathBuf)> {
    let assets = tools()?;
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    operator_gen(&dir, &format!("init --domain my.domain {init}"));
    for api in apis {
        operator_gen(&dir, &format!("create api {api}"));
    }
    for file in files {
        assert!(dir.join(file).is_file(), "the scaffold lacks {file}");
    }

    record_ran(Ran::Apiserver);
    record_ran(Ran::OperatorEndToEnd);
    let (stdout, stderr) = make_test(&dir, &assets);
    // the Makefile names the assets `operator-gen envtest use` gave
    let assets_line = stdout
        .lines()
        .find(|l| l.starts_with("KUBEBUILDER_ASSETS="))
        .unwrap_or_else(|| panic!("make test printed no KUBEBUILDER_ASSETS line:\n{stdout}"));
    let given = assets_line
        .trim_start_matches("KUBEBUILDER_ASSETS=")
        .split_whitespace()
        .next()
        .unwrap_or_default();
    assert!(
        !given.is_empty() && Path::new(given).join("kube-apiserver").is_file(),
        "make test ran cargo test without the control plane: {assets_line}"
    );
    for test in tests {
        assert!(
            stdout.contains(&format!("test {test} ... ok")),
            "{test} did not pass:\n{stdout}\n{stderr}"
        );
    }
    assert!(
        !stderr.contains("SKIPPED") && !stdout.contains("SKIPPED"),
        "a generated test skipped:\n{stdout}\n{stderr}"
    );
    Some((tmp, dir))
}

/// The project's `make test`, as CI runs it; its stdout and stderr.
fn make_test(dir: &Path, assets: &Path) -> (String, String) {
    let mut make = Command::new("make");
    make.arg("test")
        .arg(format!(
            "OPERATOR_GEN={}",
            cli::operator_gen_bin().display()
        ))
        .current_dir(dir)
        .env("KUBEBUILDER_ASSETS", assets)
        .env("CI", "true")
        .env_remove("WATCH_NAMESPACE");
    let out = generated_output(&mut make).expect("run make test");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "make test failed:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

#[test]
fn a_generated_projects_make_test_runs_its_controller_tests_against_the_apiserver() {
    make_test_passes(
        "selftest",
        "",
        &[
            "--group crew --version v1 --kind Captain",
            "--group crew --version v1 --kind FirstMate --namespaced=false",
        ],
        &[
            "tests/common/mod.rs",
            "tests/captain_controller.rs",
            "tests/firstmate_controller.rs",
        ],
        &[
            "captain_sample_is_reconciled_and_deleted",
            "first_mate_sample_is_reconciled_and_deleted",
            "api::v1::captain::tests::crd_matches_make_manifests",
            "api::v1::first_mate::tests::crd_matches_make_manifests",
        ],
    );
}

#[test]
fn a_multigroup_namespaced_projects_controller_test_runs_too() {
    make_test_passes(
        "selftest-multigroup",
        "--multigroup --namespaced",
        &["--group ship --version v1beta1 --kind Frigate"],
        &["tests/common/mod.rs", "tests/ship_frigate_controller.rs"],
        &[
            "frigate_sample_is_reconciled_and_deleted",
            "api::ship::v1beta1::frigate::tests::crd_matches_make_manifests",
        ],
    );
}

/// `create api --image` (the deploy-image plugin): the project's `make test` passes the kind's
/// CRD check, the controller's test on the fake API (the Deployment created with the owner
/// reference, the image and `spec.size` replicas, resized, Available, the events, the cleanup)
/// and its test against the real apiserver (the Deployment created, controlled by the sample,
/// with `spec.size` replicas; Available; the Created and Deleting events; the deletion done).
/// Then `kubectl kustomize config/default` renders the CRD, with `size` and `containerPort`
/// in its spec, and the manager's ClusterRole, allowed to manage Deployments.
#[test]
fn a_deploy_image_projects_make_test_passes_and_it_kustomizes() {
    let Some((_tmp, dir)) = make_test_passes(
        "deployimage",
        "",
        &[
            "--group cache --version v1alpha1 --kind Memcached --image memcached:1.6.26-alpine3.19 \
           --image-container-command memcached,--memory-limit=64,-o,modern,-v \
           --image-container-port 11211 --run-as-user 1001",
        ],
        &[
            "tests/memcached_controller.rs",
            "src/controller/memcached.rs",
        ],
        &[
            "memcached_sample_gets_its_deployment_and_is_deleted",
            "controller::memcached::tests::reconcile_deploys_the_image_resizes_and_cleans_up",
            "api::v1alpha1::memcached::tests::crd_matches_make_manifests",
        ],
    ) else {
        return;
    };
    if !cli::require_tool("kubectl", &["version", "--client"], cli::INSTALL_KUBECTL) {
        return;
    }
    let out = Command::new("kubectl")
        .args(["kustomize", "config/default"])
        .current_dir(&dir)
        .output()
        .expect("run kubectl kustomize");
    let rendered = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "kubectl kustomize failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&rendered).expect("YAML");
    let crd = docs
        .iter()
        .find(|d| d["kind"] == "CustomResourceDefinition")
        .expect("the CRD is rendered");
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["properties"]["size"]["default"], 1, "{spec}");
    assert_eq!(
        spec["required"],
        serde_json::json!(["containerPort"]),
        "{spec}"
    );
    let role = docs
        .iter()
        .find(|d| d["kind"] == "ClusterRole" && d["metadata"]["name"] == "deployimage-manager-role")
        .expect("the manager's ClusterRole is rendered");
    let rules = role["rules"].as_array().cloned().unwrap_or_default();
    assert!(
        rules
            .iter()
            .any(|r| r["apiGroups"] == serde_json::json!(["apps"])
                && r["resources"] == serde_json::json!(["deployments"])
                && r["verbs"]
                    .as_array()
                    .is_some_and(|v| v.contains(&"create".into()))),
        "{rules:?}"
    );
}
