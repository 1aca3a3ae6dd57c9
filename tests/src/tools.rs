//! The Go peers (controller-gen, kubebuilder, helm, flect) that differential tests run as judges,
//! found in the tools cache `hack/tools/build.sh` fills, and the one rule for when a test without
//! its tool may skip.

use std::path::PathBuf;
use std::process::Command;

/// True in CI: `CI` set to anything but empty, `false` or `0`. There no test may skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| {
        let v = v.trim();
        !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false"))
    })
}

/// The tools cache's root: `$OPERATOR_GEN_CACHE`, by default `$HOME/.cache/operator-gen`.
fn cache_root() -> PathBuf {
    std::env::var_os("OPERATOR_GEN_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/operator-gen")
        })
}

/// The tools cache's bin directory: `$OPERATOR_GEN_CACHE/tools/bin`, by default
/// `$HOME/.cache/operator-gen/tools/bin`.
pub fn tools_bin() -> PathBuf {
    cache_root().join("tools/bin")
}

/// Runs Go (or a Go tool that calls it, as controller-gen does) on the tools cache's module
/// cache and off the network: the modules must be there already (`.ci/run` puts them there).
pub fn offline_go(cmd: &mut Command) -> &mut Command {
    cmd.env("GOMODCACHE", cache_root().join("go/mod"))
        .env("GOCACHE", cache_root().join("go/build"))
        .env("GOPROXY", "off")
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", "local")
}

/// Whether `go` runs; outside CI a test without it skips, in CI it fails.
pub fn go_available(purpose: &str) -> bool {
    let ok = Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip_or_fail(&format!("go not found on PATH: {purpose}"));
    }
    ok
}

/// A Go peer built by `hack/tools/build.sh` (`flect-pluralize`, `controller-gen`, `kubebuilder`,
/// `helm`). `None` outside CI when it is missing, after saying so; in CI a missing tool panics
/// with the command that builds it.
pub fn go_tool(name: &str) -> Option<PathBuf> {
    let path = tools_bin().join(name);
    if path.is_file() {
        return Some(path);
    }
    skip_or_fail(&format!(
        "{name} not found at {}; build it with `hack/tools/build.sh`",
        path.display()
    ));
    None
}

/// Skips the calling test outside CI (saying why on stderr and in the run's skip summary),
/// fails it in CI.
pub fn skip_or_fail(reason: &str) {
    if in_ci() {
        panic!("required in CI: {reason}");
    }
    eprintln!("SKIPPED: {reason}");
}
