//! CLI directory cases: for each `tests/cases/<name>/`, copy `in/` (when present) to a temporary
//! project directory `demo/`, run every line of `cmd` as `operator-gen <line>`, and compare each
//! file of `demo/` that is new or changed against `out/`.
//!
//! Lines starting with `@` stand for what a user does between commands: `@cd DIR` runs the
//! following commands in `DIR` (relative to the current one, created when missing), `@replace
//! FILE "OLD" "NEW"` replaces the one occurrence of `OLD` in `FILE` (which must hold it exactly
//! once) and `@write FILE "TEXT"` writes `FILE`; `\n` in the quoted texts is a newline.
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
    let mut dir = project.clone();
    for line in cmd
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        if let Some(directive) = line.strip_prefix('@') {
            act(case, &mut dir, directive);
            continue;
        }
        let out = cli::run(&dir, &cli::split_args(line));
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

/// Carry out the directive `line` (after its `@`) in `dir`.
fn act(case: &Path, dir: &mut PathBuf, line: &str) {
    let args: Vec<String> = cli::split_args(line)
        .into_iter()
        .map(|a| a.replace("\\n", "\n"))
        .collect();
    let what = format!("case {}: `@{line}`", case.display());
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["cd", to] => {
            *dir = dir.join(to);
            std::fs::create_dir_all(&*dir).expect("create the directory of `@cd`");
        }
        ["replace", file, old, new] => {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(
                text.matches(old).count(),
                1,
                "{what}: {file} must hold the text exactly once"
            );
            std::fs::write(&path, text.replacen(old, new, 1)).expect("write");
        }
        ["write", file, text] => {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, text).expect("write");
        }
        _ => panic!("{what}: unknown directive (known: @cd, @replace, @write)"),
    }
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
            "alpha-generate",
            "alpha-generate-in-place",
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
