//! Finding the control-plane binaries through `KUBEBUILDER_ASSETS`, and skipping tests without them.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The environment variable naming the directory with `etcd`, `kube-apiserver` and `kubectl`,
/// as setup-envtest and `hack/envtest/build.sh` lay it out.
pub const ASSETS_ENV: &str = "KUBEBUILDER_ASSETS";

pub(crate) const ETCD: &str = "etcd";
pub(crate) const KUBE_APISERVER: &str = "kube-apiserver";

/// The assets directory, when `KUBEBUILDER_ASSETS` is set and holds `etcd` and `kube-apiserver`.
pub fn assets() -> Option<PathBuf> {
    locate().ok()
}

/// The assets directory, or why there is none.
pub(crate) fn locate() -> Result<PathBuf> {
    let dir = std::env::var_os(ASSETS_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .ok_or(Error::AssetsNotSet)?;
    for binary in [ETCD, KUBE_APISERVER] {
        binary_in(&dir, binary)?;
    }
    Ok(dir)
}

/// The path of `binary` inside `dir`, when it is a file.
pub(crate) fn binary_in(dir: &Path, binary: &'static str) -> Result<PathBuf> {
    let path = dir.join(binary);
    if path.is_file() {
        Ok(path)
    } else {
        Err(Error::MissingBinary {
            binary,
            dir: dir.to_path_buf(),
        })
    }
}

/// For tests: the assets directory, or `None` after printing why the test is skipped.
///
/// # Panics
///
/// When the binaries are missing and the environment has `CI=true`: on CI a missing control
/// plane is a failure, not a skip.
pub fn require_assets() -> Option<PathBuf> {
    match locate() {
        Ok(dir) => Some(dir),
        Err(why) if on_ci() => {
            panic!("the control-plane binaries are required on CI (CI=true): {why}")
        }
        Err(Error::AssetsNotSet) => {
            skipped("KUBEBUILDER_ASSETS not set (run hack/envtest/build.sh)");
            None
        }
        Err(why) => {
            skipped(&why.to_string());
            None
        }
    }
}

/// Writes the skip line straight to stderr: the test harness captures `eprintln!`, and a skip
/// must show in a passing run.
fn skipped(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
}

fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}
