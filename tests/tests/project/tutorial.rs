//! The book's tutorial project, `docs/tutorial/project/`, is what its script makes and works:
//!
//! 1. `hack/docs/tutorial.sh` run into a temporary directory with this checkout's `operator-gen`
//!    writes exactly the files committed under `docs/tutorial/project/` (the files git tracks
//!    there, and any it would add), byte for byte; a difference names each path and the command
//!    that regenerates the project.
//! 2. The committed project is formatted as `cargo fmt` leaves it and builds with every target
//!    (`cargo build --all-targets`, in the shared `target/generated-projects`).
//! 3. Its `make test` (with `CI=true`, so a missing control plane fails instead of skipping)
//!    passes every one of its tests, named below, among them the unit tests on the fake API and
//!    the controller test against etcd and kube-apiserver, with no skip; and `make manifests`,
//!    which it runs first, leaves the committed files as they were.
//!
//! And the tutorial's pages (`docs/src/tutorial/*.md`) show no Rust they do not include, by
//! mdBook anchor, from the project's files, and every anchor they name is in its file.
//!
//! Needs `make` and `kubectl` (the script renders config/default for the Helm chart), and for
//! step 3 the control-plane binaries: without them the test skips outside CI and fails in CI.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use operator_gen_tests::cli;
use operator_gen_tests::operator::{build_lock, generated_build_env, shell};
use operator_gen_tests::tools::{Ran, record_ran};

/// The committed project, relative to the checkout.
const PROJECT: &str = "docs/tutorial/project";

/// The command that regenerates the project, for the failure message.
const REGENERATE: &str = "hack/docs/tutorial.sh && git add -A docs/tutorial/project && git add -f docs/tutorial/project/.cargo/config.toml";

/// Every test of the project, as `cargo test` names them.
const PROJECT_TESTS: &[&str] = &[
    "api::v1::cron_job::tests::crd_matches_make_manifests",
    "api::v2::cron_job::tests::crd_matches_make_manifests",
    "api::v2::cron_job_conversion::tests::v2_converts_to_the_hub_and_back",
    "api::v2::cron_job_conversion::tests::a_line_of_another_shape_is_kept_in_minute",
    "controller::cron_job::tests::a_due_run_starts_an_owned_job_and_is_reported",
    "controller::cron_job::tests::forbid_skips_a_run_while_a_job_runs_and_replace_replaces_it",
    "controller::cron_job::tests::finished_jobs_beyond_the_history_limits_are_deleted",
    "controller::cron_job::tests::a_bad_schedule_or_suspend_reports_not_ready_and_starts_nothing",
    "schedule::tests::finds_the_next_and_the_last_run",
    "schedule::tests::reads_ranges_lists_and_the_day_rule",
    "schedule::tests::rejects_what_it_cannot_read",
    "webhook::v1::cron_job::tests::the_defaulter_fills_what_is_missing_and_keeps_what_is_set",
    "webhook::v1::cron_job::tests::the_validator_denies_a_bad_schedule_and_a_long_name",
    // tests/cronjob_controller.rs, against the apiserver
    "the_sample_starts_a_job_and_reports_it",
];

/// The files of the committed project (path relative to it → contents): those git tracks under
/// it and those it would add (not ignored); outside a git checkout, every file but `target/`
/// and the `Cargo.lock` a build writes.
fn committed(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let dir = root.join(PROJECT);
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
        ])
        .arg(PROJECT)
        .current_dir(root)
        .output()
        .ok()
        .filter(|out| out.status.success());
    let Some(listed) = listed else {
        let mut files = cli::snapshot(&dir);
        files.remove("Cargo.lock");
        return files;
    };
    let prefix = format!("{PROJECT}/");
    String::from_utf8_lossy(&listed.stdout)
        .split('\0')
        .filter_map(|path| path.strip_prefix(&prefix))
        .map(|rel| {
            // a tracked file deleted from the work tree reads as empty, and so differs
            let bytes = std::fs::read(dir.join(rel)).unwrap_or_default();
            (rel.to_owned(), bytes)
        })
        .collect()
}

/// The paths where `expected` and `actual` differ, each with how.
fn differences(
    expected: &BTreeMap<String, Vec<u8>>,
    actual: &BTreeMap<String, Vec<u8>>,
) -> Vec<String> {
    let paths: BTreeSet<&String> = expected.keys().chain(actual.keys()).collect();
    paths
        .into_iter()
        .filter_map(|path| match (expected.get(path), actual.get(path)) {
            (Some(_), None) => Some(format!(
                "{path}: committed, but the script no longer writes it"
            )),
            (None, Some(_)) => Some(format!(
                "{path}: written by the script, but not in the project"
            )),
            (Some(e), Some(a)) if e != a => Some(format!(
                "{path}: differs (expected: the project's, actual: the script's), {}",
                cli::first_line_difference(
                    &String::from_utf8_lossy(e),
                    &String::from_utf8_lossy(a)
                )
            )),
            _ => None,
        })
        .collect()
}

/// Runs the script into `out`; panics with its output when it fails.
fn run_script(root: &Path, out: &Path) {
    let result = Command::new("bash")
        .arg(root.join("hack/docs/tutorial.sh"))
        .arg(out)
        .env("OPERATOR_GEN", cli::operator_gen_bin())
        .env("NO_COLOR", "1")
        .current_dir(root)
        .output()
        .expect("run hack/docs/tutorial.sh");
    assert!(
        result.status.success(),
        "hack/docs/tutorial.sh failed:\n{}\n{}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
}

/// The project's `make test` with `CI=true`; its stdout and stderr.
fn make_test(dir: &Path, assets: &Path) -> (String, String) {
    // its builds share the generated projects' target directory with the group's other tests
    let _lock = build_lock();
    let mut make = Command::new("make");
    make.arg("test")
        .arg(format!(
            "OPERATOR_GEN={}",
            cli::operator_gen_bin().display()
        ))
        .current_dir(dir);
    let out = generated_build_env(&mut make)
        .env("KUBEBUILDER_ASSETS", assets)
        .env("CI", "true")
        .env("NO_COLOR", "1")
        .env_remove("WATCH_NAMESPACE")
        .output()
        .expect("run make test");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "make test of {PROJECT} failed:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

#[test]
fn the_tutorial_project_is_what_its_script_makes_and_passes_its_tests() {
    if !cli::require_tool("make", &["--version"], cli::INSTALL_MAKE)
        || !cli::require_tool("kubectl", &["version", "--client"], cli::INSTALL_KUBECTL)
    {
        return;
    }
    let root: PathBuf = cli::workspace_root();
    let dir = root.join(PROJECT);

    // 1. no drift between the script's output and what is committed
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("project");
    run_script(&root, &out);
    let generated = cli::snapshot(&out);
    let before = committed(&root);
    assert!(
        before.contains_key("PROJECT") && before.contains_key(".cargo/config.toml"),
        "{PROJECT} lacks PROJECT or .cargo/config.toml; regenerate it with: {REGENERATE}"
    );
    let drift = differences(&before, &generated);
    assert!(
        drift.is_empty(),
        "{PROJECT} is not what hack/docs/tutorial.sh writes:\n  {}\nregenerate it with: {REGENERATE}",
        drift.join("\n  ")
    );

    // 2. formatted, and it builds
    let cargo = cli::cargo();
    shell(&dir, &cargo, &["fmt", "--check"]);
    shell(&dir, &cargo, &["build", "--all-targets"]);

    // 3. its own tests, the controller test against a real apiserver
    let Some(assets) = operator_gen_envtest::require_assets() else {
        return;
    };
    record_ran(Ran::Apiserver);
    record_ran(Ran::OperatorEndToEnd);
    let (stdout, stderr) = make_test(&dir, &assets);
    for test in PROJECT_TESTS {
        assert!(
            stdout.contains(&format!("test {test} ... ok")),
            "{test} did not pass:\n{stdout}\n{stderr}"
        );
    }
    assert!(
        !stderr.contains("SKIPPED") && !stdout.contains("SKIPPED"),
        "a test of {PROJECT} skipped:\n{stdout}\n{stderr}"
    );
    let after = committed(&root);
    let changed = differences(&before, &after);
    assert!(
        changed.is_empty(),
        "`make test` (its `make manifests`) changed {PROJECT}:\n  {}",
        changed.join("\n  ")
    );
}

/// Every `{{#include path:anchor}}` of the tutorial's pages names a file of the project (relative
/// to the page) that holds the anchor's `ANCHOR:` and `ANCHOR_END:` lines, and every Rust listing
/// on the pages is such an include, never code pasted into the page.
#[test]
fn the_tutorial_pages_include_their_code_from_the_project() {
    let pages = cli::workspace_root().join("docs/src/tutorial");
    let mut problems = Vec::new();
    let mut includes = 0;
    let mut names: Vec<PathBuf> = std::fs::read_dir(&pages)
        .expect("docs/src/tutorial")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    names.sort();
    for page in &names {
        let text = std::fs::read_to_string(page).expect("read a page");
        let name = page.file_name().unwrap_or_default().to_string_lossy();
        let mut in_rust = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                in_rust = !in_rust && line.trim_start() == "```rust";
                continue;
            }
            let include = line
                .trim()
                .strip_prefix("{{#include ")
                .and_then(|rest| rest.strip_suffix("}}"));
            if in_rust && include.is_none() && !line.trim().is_empty() {
                problems.push(format!("{name}: code pasted into a Rust listing: {line}"));
            }
            let Some(target) = include else {
                continue;
            };
            includes += 1;
            let (path, anchor) = match target.rsplit_once(':') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target, None),
            };
            if !path.starts_with("../../tutorial/project/") {
                problems.push(format!(
                    "{name}: {target} is not a file of the tutorial project"
                ));
            }
            let Ok(source) = std::fs::read_to_string(pages.join(path)) else {
                problems.push(format!("{name}: {path} does not exist"));
                continue;
            };
            if let Some(anchor) = anchor {
                for mark in [format!("ANCHOR: {anchor}"), format!("ANCHOR_END: {anchor}")] {
                    if !source.lines().any(|l| l.trim_end().ends_with(&mark)) {
                        problems.push(format!("{name}: {path} has no `{mark}` line"));
                    }
                }
            }
        }
    }
    assert!(includes > 0, "the tutorial's pages include no code");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
