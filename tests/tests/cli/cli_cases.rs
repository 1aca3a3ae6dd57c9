//! CLI directory cases: for each `tests/cases/<name>/`, copy `in/` (when present) to a temporary
//! project directory `demo/`, run every line of `cmd` as `operator-gen <line>`, and compare each
//! file of `demo/` that is new or changed against `out/`.
//!
//! Lines starting with `@` stand for what a user does between commands: `@cd DIR` runs the
//! following commands in `DIR` (relative to the current one, created when missing), `@replace
//! FILE "OLD" "NEW"` replaces the one occurrence of `OLD` in `FILE` (which must hold it exactly
//! once) and `@write FILE "TEXT"` writes `FILE`; `\n` in the quoted texts is a newline. `@git
//! ARGS` runs git and `@older ARGS` the older operator-gen the `alpha update` tests build
//! ([`operator_gen_tests::older`]), whose path `@OLDER@` stands for in a command; a case using
//! either is skipped, by the one skip rule, without git. `.git/` is not compared.
//!
//! Refresh the goldens with
//! `UPDATE_GOLDENS=1 cargo test -p operator-gen-tests --test cli cli_cases::`.
//! In goldens (the local cargo config `.cargo/config.toml`), this checkout's path reads
//! `@OPERATOR_GEN_CHECKOUT@`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use operator_gen_tests::cli::{self, UPDATE_GOLDENS};
use operator_gen_tests::older;

fn cases_dir() -> PathBuf {
    cli::workspace_root().join("tests/cases")
}

/// Files the commands created or changed, normalised for goldens; `None` when the case needs
/// git and the older operator-gen and git is missing (the skip is reported).
fn run_case(case: &Path) -> Option<BTreeMap<String, String>> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let project = tmp.path().join("demo");
    std::fs::create_dir_all(&project).expect("create project dir");
    let input = case.join("in");
    if input.is_dir() {
        cli::copy_dir(&input, &project);
    }
    let before = cli::snapshot(&project);
    let cmd = std::fs::read_to_string(case.join("cmd")).expect("read cmd");
    let older = if cmd
        .lines()
        .any(|l| l.starts_with("@git") || l.starts_with("@older"))
    {
        Some(older::operator_gen()?)
    } else {
        None
    };
    let mut dir = project.clone();
    for line in cmd
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        if let Some(directive) = line.strip_prefix('@') {
            act(case, &mut dir, directive, older);
            continue;
        }
        let args: Vec<String> = cli::split_args(line)
            .into_iter()
            .map(|a| match older {
                Some(bin) => a.replace("@OLDER@", &bin.to_string_lossy()),
                None => a,
            })
            .collect();
        let out = cli::run(&dir, &args);
        assert_eq!(
            out.code,
            0,
            "case {}: `operator-gen {line}` failed:\n{}",
            case.display(),
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
    let changed = cli::snapshot(&project)
        .into_iter()
        .filter(|(path, bytes)| before.get(path) != Some(bytes) && !path.starts_with(".git/"))
        .map(|(path, bytes)| (path, cli::normalize(&String::from_utf8_lossy(&bytes))))
        .collect();
    Some(changed)
}

/// Carry out the directive `line` (after its `@`) in `dir`; `older` is the older operator-gen
/// when the case uses it.
fn act(case: &Path, dir: &mut PathBuf, line: &str, older: Option<&Path>) {
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
        ["git", rest @ ..] => {
            let out = std::process::Command::new("git")
                .args(rest)
                .current_dir(&*dir)
                .stdin(std::process::Stdio::null())
                .output()
                .expect("run git");
            assert!(
                out.status.success(),
                "{what} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        ["older", rest @ ..] => {
            let out = std::process::Command::new(older.expect("the older operator-gen"))
                .args(rest)
                .current_dir(&*dir)
                .env("OPERATOR_GEN_YEAR", cli::YEAR)
                .stdin(std::process::Stdio::null())
                .output()
                .expect("run the older operator-gen");
            assert!(
                out.status.success(),
                "{what} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        _ => panic!("{what}: unknown directive (known: @cd, @replace, @write, @git, @older)"),
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
            "alpha-update",
            "alpha-update-conflict",
            "create-api-cluster-scoped",
            "create-api-core",
            "create-api-force",
            "create-api-from-crd",
            "create-api-image",
            "create-api-multigroup",
            "create-api-namespaced",
            "create-api-second-version",
            "create-api-storage-version",
            "create-webhook",
            "create-webhook-conversion",
            "create-webhook-core",
            "create-webhook-force",
            "create-webhook-multigroup",
            "create-webhook-paths",
            "delete-api",
            "delete-api-multigroup",
            "edit-autoupdate",
            "edit-grafana",
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
        let Some(actual) = run_case(case) else {
            continue;
        };
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
