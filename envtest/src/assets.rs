//! Finding the control-plane binaries through `KUBEBUILDER_ASSETS`, and skipping tests without them.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The environment variable naming the directory with `etcd`, `kube-apiserver` and `kubectl`,
/// as setup-envtest and `operator-gen envtest use` lay it out.
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

/// For tests: the assets directory, or `None` after reporting the skip (see [`crate::ci`]),
/// with this repository's fix (`source hack/envtest/ensure.sh`).
///
/// # Panics
///
/// When the binaries are missing in CI ([`crate::ci::in_ci`]): there a missing control plane is
/// a failure, not a skip.
#[track_caller]
pub fn require_assets() -> Option<PathBuf> {
    require_assets_with("source hack/envtest/ensure.sh")
}

/// For tests: the assets directory, or `None` after reporting the skip with `fix`, the command
/// that provides the binaries (a generated project says `make setup-envtest`).
///
/// # Panics
///
/// When the binaries are missing in CI ([`crate::ci::in_ci`]).
#[track_caller]
pub fn require_assets_with(fix: &str) -> Option<PathBuf> {
    match locate() {
        Ok(dir) => Some(dir),
        Err(why) => {
            crate::ci::skip_or_fail(
                &format!("no control plane, the apiserver checks did not run: {why}"),
                fix,
            );
            None
        }
    }
}
