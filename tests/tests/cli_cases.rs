//! CLI directory cases: for each `tests/cases/<name>/`, copy `in/` (when present) to a temporary
//! project directory `demo/`, run every line of `cmd` as `operator-gen <line>`, and compare each
//! file that is new or changed against `out/`.
//!
//! Refresh the goldens with `UPDATE_GOLDENS=1 cargo test -p operator-gen-tests --test cli_cases`.
//! In goldens (the local cargo config `.cargo/config.toml`), this checkout's path reads
//! `@OPERATOR_GEN_CHECKOUT@`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use operator_gen_tests::cli::{self, UPDATE_GOLDENS};

fn cases_dir() -> PathBuf {
    cli::workspace_root().join("tests/cases")
}

/// Files the commands created or changed, normalised for goldens.
fn run_case(case: &Path) -> BTreeMap<String, String> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let project = tmp.path().join("demo");
    std::fs::create_dir_all(&project).expect("create project dir");
    let input = case.join("in");
    if input.is_dir() {
        cli::copy_dir(&input, &project);
    }
    let before = cli::snapshot(&project);
    let cmd = std::fs::read_to_string(case.join("cmd")).expect("read cmd");
    for line in cmd
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let out = cli::run(&project, &cli::split_args(line));
        assert_eq!(
            out.code,
            0,
            "case {}: `operator-gen {line}` failed:\n{}",
            case.display(),
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
    cli::snapshot(&project)
        .into_iter()
        .filter(|(path, bytes)| before.get(path) != Some(bytes))
        .map(|(path, bytes)| (path, cli::normalize(&String::from_utf8_lossy(&bytes))))
        .collect()
}

#[test]
fn cli_cases_match_goldens() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("read tests/cases")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("cmd").is_file())
        .collect();
    cases.sort();
    let names: Vec<String> = cases
        .iter()
        .map(|c| {
            c.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "create-api-cluster-scoped",
            "create-api-core",
            "create-api-force",
            "create-api-multigroup",
            "create-api-namespaced",
            "create-api-second-version",
            "create-api-storage-version",
            "create-webhook",
            "create-webhook-conversion",
            "create-webhook-core",
            "create-webhook-force",
            "create-webhook-multigroup",
            "delete-api",
            "delete-api-multigroup",
            "edit-helm",
            "edit-multigroup",
            "init",
            "init-namespaced",
        ],
        "the cases under tests/cases (a new case is named here too)"
    );
    let update = std::env::var(UPDATE_GOLDENS).is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    for case in &cases {
        let actual = run_case(case);
        let out_dir = case.join("out");
        if update {
            let _ = std::fs::remove_dir_all(&out_dir);
            for (path, text) in &actual {
                let target = out_dir.join(path);
                std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
                std::fs::write(&target, text).expect("write golden");
            }
            continue;
        }
        let expected: BTreeMap<String, String> = cli::snapshot(&out_dir)
            .into_iter()
            .map(|(p, b)| (p, String::from_utf8_lossy(&b).into_owned()))
            .collect();
        let name = case
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for path in expected.keys().filter(|p| !actual.contains_key(*p)) {
            failures.push(format!("{name}: {path} was not written"));
        }
        for (path, text) in &actual {
            match expected.get(path) {
                None => failures.push(format!("{name}: unexpected file {path}")),
                Some(e) if e != text => {
                    failures.push(format!(
                        "{name}: {path} differs, {}",
                        cli::first_line_difference(e, text)
                    ));
                }
                Some(_) => {}
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden mismatches (refresh with {UPDATE_GOLDENS}=1 when intended):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
