//! The Go peers (controller-gen, kubebuilder, helm, flect) that differential tests run as judges,
//! found in the tools cache `hack/tools/build.sh` fills, and the one rule for when a test without
//! its tool may skip (re-exported from `operator_gen_envtest::ci`).

use std::path::PathBuf;
use std::process::Command;

/// The one rule and record, defined beside the control plane (the lowest crate every test
/// uses): [`in_ci`] says where no test may skip, [`skip_or_fail`] is the only way to skip,
/// [`record_ran`] counts the tests that ran against a real tool.
pub use operator_gen_envtest::ci::{Ran, in_ci, record_ran, skip_or_fail};

/// The tools cache's root: `$OPERATOR_GEN_CACHE`, by default `$HOME/.cache/operator-gen`.
fn cache_root() -> PathBuf {
    std::env::var_os("OPERATOR_GEN_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/operator-gen")
        })
}

/// The Go module cache the tools and the fetch scripts share: `$OPERATOR_GEN_CACHE/go/mod`.
pub fn go_module_cache() -> PathBuf {
    cache_root().join("go/mod")
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
#[track_caller]
pub fn go_available(purpose: &str) -> bool {
    let ok = Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip_or_fail(
            &format!("go not found on PATH: {purpose}"),
            "install Go (https://go.dev/dl) and put its bin directory on PATH",
        );
    }
    ok
}

/// A Go peer built by `hack/tools/build.sh` (`flect-pluralize`, `controller-gen`, `kubebuilder`,
/// `helm`). `None` outside CI when it is missing, after reporting the skip; in CI a missing tool
/// panics with the command that builds it.
#[track_caller]
pub fn go_tool(name: &str) -> Option<PathBuf> {
    let path = tools_bin().join(name);
    if path.is_file() {
        return Some(path);
    }
    skip_or_fail(
        &format!("{name} not found at {}", path.display()),
        "hack/tools/build.sh",
    );
    None
}

/// What a YAML 1.1 reader (PyYAML) and a YAML 1.2 reader (ruamel.yaml) make of the YAML
/// documents in `files`, through `hack/yaml-judges/readback.py`: `(1.1's documents, 1.2's)`,
/// a value neither a string, number, boolean, null, list nor mapping written as `{"$type",
/// "$repr"}`. `None` outside CI when Python or the readers are missing, after reporting the
/// skip; in CI that panics with the command that installs them.
#[track_caller]
pub fn yaml_readers(
    files: &[&std::path::Path],
) -> Option<(Vec<serde_json::Value>, Vec<serde_json::Value>)> {
    let judges = crate::cli::workspace_root().join("hack/yaml-judges");
    let install = "python3 -m pip install --target ~/.cache/operator-gen/tools/python -r hack/yaml-judges/requirements.txt";
    let out = Command::new("python3")
        .arg(judges.join("readback.py"))
        .args(files)
        .env("PYTHONPATH", cache_root().join("tools/python"))
        .output();
    let out = match out {
        Ok(out) if out.status.success() => out,
        Ok(out) if String::from_utf8_lossy(&out.stderr).contains("ModuleNotFoundError") => {
            skip_or_fail(
                "the YAML readers (PyYAML, ruamel.yaml) are not in the tools cache",
                install,
            );
            return None;
        }
        Ok(out) => panic!(
            "readback.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => {
            skip_or_fail("python3 not found on PATH", install);
            return None;
        }
    };
    let mut read: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("readback.py prints JSON");
    let mut take = |version: &str| match read[version].take() {
        serde_json::Value::Array(docs) => docs,
        other => panic!("readback.py: no documents for YAML {version}: {other}"),
    };
    Some((take("1.1"), take("1.2")))
}
