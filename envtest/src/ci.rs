//! The one rule for when a test may skip, and the record of what the tests ran: every test of the
//! workspace asks [`in_ci`], skips only through [`skip_or_fail`], and notes the real tools it ran
//! against with [`record_ran`].
//!
//! A skip is written straight to the process's stderr (the test harness captures `eprintln!`,
//! not writes to the stream itself, so `cargo test` shows it beside the passing test) and to a
//! file under `<target>/operator-gen/test-record/skips/`; each run against a real tool leaves a
//! file under `<target>/operator-gen/test-record/ran/<what>/`. `hack/test.sh` (what `.ci/run`
//! runs) clears that directory, runs `cargo test` and prints both.

use std::io::Write;
use std::path::PathBuf;

/// True in CI: `CI` set to anything but empty, `false` or `0`. There no test may skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| {
        let v = v.trim();
        !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false"))
    })
}

/// Skips the calling test outside CI, fails it in CI. `missing` says what is missing and what
/// the test therefore did not check; `install` is the command that provides it.
///
/// The caller returns right after this call.
///
/// # Panics
///
/// In CI ([`in_ci`]), with `missing` and `install` in the message.
#[track_caller]
pub fn skip_or_fail(missing: &str, install: &str) {
    if in_ci() {
        panic!("required in CI: {missing}\nfix: {install}");
    }
    let test = current_test();
    let line = format!("SKIPPED {test}: {missing}; fix: {install}\n");
    // straight to the stream: the harness would swallow `eprintln!` of a passing test
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    if let Some(dir) = record_dir().map(|d| d.join("skips")) {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join(file_name(&test)), line);
    }
}

/// What a test ran against, counted per category by `hack/test.sh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ran {
    /// A real etcd and kube-apiserver ([`crate::ControlPlane`] started).
    Apiserver,
    /// The scaffolded operator, built and run against the apiserver.
    OperatorEndToEnd,
    /// The `cargo-generate` binary on the committed template.
    CargoGenerate,
    /// A Go peer from the tools cache (controller-gen, kubebuilder, helm, flect) or `go` itself.
    GoPeers,
    /// mdBook, building the book in `docs/`.
    Mdbook,
}

impl Ran {
    /// The directory name of the category under `ran/`.
    pub fn name(self) -> &'static str {
        match self {
            Ran::Apiserver => "apiserver",
            Ran::OperatorEndToEnd => "operator-e2e",
            Ran::CargoGenerate => "cargo-generate",
            Ran::GoPeers => "go-peers",
            Ran::Mdbook => "mdbook",
        }
    }
}

/// Notes that the calling test runs against `what`: one file per test and category, so a test
/// that starts two control planes counts once.
pub fn record_ran(what: Ran) {
    let Some(dir) = record_dir().map(|d| d.join("ran").join(what.name())) else {
        return;
    };
    let test = current_test();
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(file_name(&test)), format!("{test}\n"));
}

/// `<target>/operator-gen/test-record`: the target directory is `$CARGO_TARGET_DIR`, else the
/// one holding the running test binary (`<target>/<profile>/deps/<binary>`). `None` when neither
/// is known (then only stderr says what was skipped).
pub fn record_dir() -> Option<PathBuf> {
    let target = match std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let exe = std::env::current_exe().ok()?;
            let deps = exe
                .ancestors()
                .find(|a| a.file_name() == Some("deps".as_ref()))?;
            deps.parent()?.parent()?.to_path_buf()
        }
    };
    Some(target.join("operator-gen/test-record"))
}

/// `<binary> <test>`: the test binary's name without cargo's hash, and the test's name, which
/// the harness gives the thread running it.
fn current_test() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| match stem.rsplit_once('-') {
            Some((name, hash))
                if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                name.to_string()
            }
            _ => stem,
        })
        .unwrap_or_else(|| "?".to_string());
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    format!("{binary} {test}")
}

/// One record file per process and test: `<pid>-<binary>-<test>.txt`.
fn file_name(test: &str) -> String {
    let safe: String = test
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{}-{safe}.txt", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_names_the_test_and_its_binary() {
        let test = current_test();
        assert!(
            test.starts_with("operator_gen_envtest ")
                && test.ends_with("the_record_names_the_test_and_its_binary"),
            "{test}"
        );
        let name = file_name(&test);
        assert!(
            name.starts_with(&format!("{}-operator_gen_envtest_", std::process::id())),
            "{name}"
        );
    }
}
