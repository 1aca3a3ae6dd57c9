//! The Go peers (controller-gen, kubebuilder, helm, flect) that differential tests run as judges,
//! found in the tools cache `hack/tools/build.sh` fills, and the one rule for when a test without
//! its tool may skip.

use std::path::PathBuf;

/// True in CI: `CI` set to anything but empty, `false` or `0`. There no test may skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| {
        let v = v.trim();
        !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false"))
    })
}

/// The tools cache's bin directory: `$OPERATOR_GEN_CACHE/tools/bin`, by default
/// `$HOME/.cache/operator-gen/tools/bin`.
pub fn tools_bin() -> PathBuf {
    let root = std::env::var_os("OPERATOR_GEN_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/operator-gen")
        });
    root.join("tools/bin")
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
