//! The cargo-generate template in `cargo-generate/`: it must be what
//! `operator-gen alpha export-template` writes today, and the real `cargo-generate` must expand
//! it into exactly what `operator-gen init` writes for the same values, which then builds.
//!
//! Refresh the committed template with `UPDATE_GOLDENS=1 cargo test -p operator-gen-tests --test
//! cargo_generate` (or `operator-gen alpha export-template cargo-generate`).
//!
//! cargo-generate is looked up on `PATH`, then in the tools cache's `tools/bin` (where `.ci/run`
//! installs it). Without it the expansion tests report the skip; in CI they fail instead. The generated project builds in the shared `target/generated-projects`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use operator_gen_tests::cli::{self, UPDATE_GOLDENS};
use operator_gen_tests::operator::generated_output;
use operator_gen_tests::tools;

/// The cargo-generate release `.ci/run` installs and the template is written for.
const CARGO_GENERATE_VERSION: &str = "0.26.0";

/// Files cargo-generate writes that `init` does not. `--vcs none` keeps it from adding `.git/`,
/// and it removes `cargo-generate.toml` and the hook itself, so nothing is expected here; a
/// file appearing in this list must be explained.
const ADDED_BY_CARGO_GENERATE: &[&str] = &[];

fn template_dir() -> PathBuf {
    cli::workspace_root().join("cargo-generate")
}

fn operator_gen(dir: &Path, args: &[&str]) {
    // Not `cli::run`: that fixes the license year, and cargo-generate writes the current one.
    let out = Command::new(cli::operator_gen_bin())
        .args(args)
        .current_dir(dir)
        .env_remove("OPERATOR_GEN_YEAR")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run operator-gen");
    assert!(
        out.status.success(),
        "`operator-gen {}` failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn text_tree(dir: &Path) -> BTreeMap<String, String> {
    cli::snapshot(dir)
        .into_iter()
        .map(|(p, b)| (p, String::from_utf8_lossy(&b).into_owned()))
        .collect()
}

/// Differences between two trees, as messages; `ignore` lists paths only `actual` may hold.
fn compare(
    expected: &BTreeMap<String, String>,
    actual: &BTreeMap<String, String>,
    ignore: &[&str],
) -> Vec<String> {
    let mut out = Vec::new();
    for path in expected.keys().filter(|p| !actual.contains_key(*p)) {
        out.push(format!("{path} is missing"));
    }
    for (path, text) in actual {
        match expected.get(path) {
            None if ignore.contains(&path.as_str()) => {}
            None => out.push(format!("unexpected file {path}")),
            Some(e) if e != text => out.push(format!(
                "{path} differs, {}",
                cli::first_line_difference(e, text)
            )),
            Some(_) => {}
        }
    }
    out
}

#[test]
fn committed_template_is_current() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let update = std::env::var(UPDATE_GOLDENS).is_ok_and(|v| v == "1");
    let target = if update {
        template_dir()
    } else {
        tmp.path().join("template")
    };
    let target_arg = target.to_string_lossy().into_owned();
    operator_gen(
        tmp.path(),
        &["--quiet", "alpha", "export-template", &target_arg],
    );
    if update {
        return;
    }
    let failures = compare(&text_tree(&template_dir()), &text_tree(&target), &[]);
    assert!(
        failures.is_empty(),
        "cargo-generate/ is stale; refresh it with `{UPDATE_GOLDENS}=1 cargo test -p operator-gen-tests --test project cargo_generate::`:\n{}",
        failures.join("\n")
    );
}

/// `cargo-generate` on PATH or in the tools cache's bin directory, when it runs; otherwise the
/// test skips outside CI and fails in CI, with the command that installs it.
fn cargo_generate() -> Option<PathBuf> {
    let candidates = [
        PathBuf::from("cargo-generate"),
        tools::tools_bin().join("cargo-generate"),
    ];
    for candidate in candidates {
        let Ok(out) = Command::new(&candidate).arg("--version").output() else {
            continue;
        };
        if out.status.success() {
            let version = String::from_utf8_lossy(&out.stdout);
            if !version.contains(CARGO_GENERATE_VERSION) {
                eprintln!(
                    "note: {} is {}, the template is tested with {CARGO_GENERATE_VERSION}",
                    candidate.display(),
                    version.trim()
                );
            }
            return Some(candidate);
        }
    }
    tools::skip_or_fail(
        &format!(
            "cargo-generate is neither on PATH nor in {}",
            tools::tools_bin().display()
        ),
        &format!(
            "cargo install --locked --ignore-rust-version --root {} cargo-generate@{CARGO_GENERATE_VERSION}",
            tools::tools_bin()
                .parent()
                .unwrap_or(Path::new("."))
                .display()
        ),
    );
    None
}

/// Run `cargo-generate generate` on the committed template into `dest`; returns the output.
fn expand(bin: &Path, dest: &Path, name: &str, defines: &[String]) -> std::process::Output {
    let mut cmd = Command::new(bin);
    cmd.arg("generate")
        .arg("--path")
        .arg(template_dir())
        .args(["--name", name, "--silent", "--vcs", "none"])
        .arg("--destination")
        .arg(dest);
    for define in defines {
        cmd.args(["-d", define]);
    }
    cmd.stdin(Stdio::null())
        .output()
        .expect("run cargo-generate")
}

/// One set of values, as init flags and as cargo-generate defines.
struct Values {
    name: &'static str,
    init: Vec<String>,
    defines: Vec<String>,
}

fn values() -> Vec<Values> {
    let runtime = cli::checkout_path();
    vec![
        Values {
            name: "demo-op",
            init: vec![
                "--domain=example.com".into(),
                "--owner=The Demo Authors".into(),
                "--license=apache2".into(),
                "--k8s-version=1.35".into(),
                format!("--runtime-path={runtime}"),
            ],
            defines: vec![
                "domain=example.com".into(),
                "owner=The Demo Authors".into(),
                "license=apache2".into(),
                "k8s_version=1.35".into(),
                format!("runtime={runtime}"),
            ],
        },
        // Every default but the runtime (its default is operator-gen's git repository).
        Values {
            name: "plain-op",
            init: vec![format!("--runtime-path={runtime}")],
            defines: vec![format!("runtime={runtime}")],
        },
        Values {
            name: "unlicensed",
            init: vec![
                "--license=none".into(),
                "--owner=Nobody".into(),
                format!("--runtime-path={runtime}"),
            ],
            defines: vec![
                "license=none".into(),
                "owner=Nobody".into(),
                format!("runtime={runtime}"),
            ],
        },
    ]
}

#[test]
fn cargo_generate_writes_what_init_writes_and_it_builds() {
    let Some(bin) = cargo_generate() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    for (i, v) in values().into_iter().enumerate() {
        let by_init = tmp.path().join("init").join(v.name);
        std::fs::create_dir_all(&by_init).expect("mkdir");
        let mut args = vec!["--quiet", "init", "--project-name", v.name];
        args.extend(v.init.iter().map(String::as_str));
        operator_gen(&by_init, &args);

        let dest = tmp.path().join("generated");
        std::fs::create_dir_all(&dest).expect("mkdir");
        let out = expand(&bin, &dest, v.name, &v.defines);
        assert!(
            out.status.success(),
            "cargo-generate failed for {}:\n{}\n{}",
            v.name,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let generated = dest.join(v.name);
        for failure in compare(
            &text_tree(&by_init),
            &text_tree(&generated),
            ADDED_BY_CARGO_GENERATE,
        ) {
            failures.push(format!("{}: {failure}", v.name));
        }
        // One build is enough: the other value sets differ only in text the compiler ignores
        // or in the k8s-openapi feature, which would rebuild k8s-openapi.
        if i == 0 && failures.is_empty() {
            let out = generated_output(
                Command::new(cli::cargo())
                    .arg("build")
                    .current_dir(&generated),
            )
            .expect("run cargo build");
            assert!(
                out.status.success(),
                "cargo build of the cargo-generate output failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    assert!(
        failures.is_empty(),
        "cargo-generate output differs from operator-gen init:\n{}",
        failures.join("\n")
    );
    tools::record_ran(tools::Ran::CargoGenerate);
}

#[test]
fn cargo_generate_rejects_what_init_rejects() {
    let Some(bin) = cargo_generate() else {
        return;
    };
    let runtime = format!("runtime={}", cli::checkout_path());
    let cases: &[(&str, &str, &str)] = &[
        ("bad-domain", "domain=Example.com", "domain"),
        ("bad-domain", "domain=a..b", "domain"),
        ("bad-license", "license=mit", "license"),
        ("bad-version", "k8s_version=1.32", "k8s_version"),
        ("bad-owner", "owner=two\nlines", "owner"),
        ("bad-runtime", "runtime=/a\"b", "runtime"),
        ("null", "domain=example.com", "YAML"),
        ("9lives", "domain=example.com", "start with a letter"),
    ];
    let tmp = tempfile::tempdir().expect("tempdir");
    for (name, define, expect) in cases {
        let out = expand(
            &bin,
            tmp.path(),
            name,
            &[runtime.clone(), define.to_string()],
        );
        let stderr = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !out.status.success(),
            "cargo-generate accepted --name {name} -d {define:?}"
        );
        assert!(
            stderr.contains(expect),
            "cargo-generate rejected --name {name} -d {define:?} without naming {expect:?}:\n{stderr}"
        );
        // cargo-generate may leave the (empty) destination directory behind, never files.
        assert!(
            !tmp.path().join(name).join("Cargo.toml").exists(),
            "a rejected expansion wrote {name}/Cargo.toml"
        );
    }
    tools::record_ran(tools::Ran::CargoGenerate);
}
