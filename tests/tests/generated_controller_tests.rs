//! A freshly generated project tests itself: `init`, `create api` for a namespaced kind
//! (Captain) and a cluster-scoped one (FirstMate), then the project's own `make test` (with this
//! checkout's `operator-gen`, whose `envtest use` gives `KUBEBUILDER_ASSETS`, and `CI=true`, so a
//! missing control plane fails instead of skipping). Its output must show both scaffolded
//! controller tests passing against the apiserver, and no skip.
//!
//! In the apiserver category of the skip rule: without etcd and kube-apiserver it skips outside
//! CI and fails in CI; it also needs `make`.

use std::process::Command;

use operator_gen_tests::cli;
use operator_gen_tests::operator::{generated_target_dir, operator_gen};
use operator_gen_tests::tools::{Ran, record_ran};

#[test]
fn a_generated_projects_make_test_runs_its_controller_tests_against_the_apiserver() {
    let Some(assets) = operator_gen_envtest::require_assets() else {
        return;
    };
    if !cli::require_tool("make", &["--version"], cli::INSTALL_MAKE) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("selftest");
    std::fs::create_dir_all(&dir).expect("mkdir");
    operator_gen(&dir, "init --domain my.domain");
    operator_gen(&dir, "create api --group crew --version v1 --kind Captain");
    operator_gen(
        &dir,
        "create api --group crew --version v1 --kind FirstMate --namespaced=false",
    );
    for test in [
        "tests/common/mod.rs",
        "tests/captain_controller.rs",
        "tests/firstmate_controller.rs",
    ] {
        assert!(dir.join(test).is_file(), "the scaffold lacks {test}");
    }

    record_ran(Ran::Apiserver);
    record_ran(Ran::OperatorEndToEnd);
    let out = Command::new("make")
        .arg("test")
        .arg(format!(
            "OPERATOR_GEN={}",
            cli::operator_gen_bin().display()
        ))
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", generated_target_dir())
        .env("KUBEBUILDER_ASSETS", &assets)
        .env("CI", "true")
        .output()
        .expect("run make test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "make test failed:\n{stdout}\n{stderr}"
    );
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
        !given.is_empty() && std::path::Path::new(given).join("kube-apiserver").is_file(),
        "make test ran cargo test without the control plane: {assets_line}"
    );
    for test in [
        "captain_sample_is_reconciled_and_deleted",
        "first_mate_sample_is_reconciled_and_deleted",
        "api::v1::captain::tests::crd_matches_make_manifests",
        "api::v1::first_mate::tests::crd_matches_make_manifests",
    ] {
        assert!(
            stdout.contains(&format!("test {test} ... ok")),
            "{test} did not pass:\n{stdout}\n{stderr}"
        );
    }
    assert!(
        !stderr.contains("SKIPPED") && !stdout.contains("SKIPPED"),
        "a generated test skipped:\n{stdout}\n{stderr}"
    );
}
