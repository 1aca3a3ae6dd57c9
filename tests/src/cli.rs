//! Helpers for the CLI tests: build and run the `operator-gen` binary, snapshot and hash
//! directory trees, copy case inputs, and detect the external tools (make, kubectl) a test needs.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Set this variable to `1` to rewrite the `out/` goldens of `tests/cases/` from the actual output.
pub const UPDATE_GOLDENS: &str = "UPDATE_GOLDENS";

/// What goldens hold in place of this checkout's directory (which `init` writes into the local
/// cargo config, `.cargo/config.toml`, of the projects it scaffolds).
pub const CHECKOUT_PLACEHOLDER: &str = "@OPERATOR_GEN_CHECKOUT@";

/// The year every test run puts in license headers.
pub const YEAR: &str = "2026";

/// A rendering of config/default (`dist/install.yaml`) reduced to what `edit --plugins helm`
/// needs: the manager.
pub const MINIMAL_INSTALL: &str = "apiVersion: v1
kind: Namespace
metadata:
  name: demo-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: demo-controller-manager
  namespace: demo-system
spec:
  template:
    spec:
      containers:
      - name: manager
        image: controller:latest
";

/// A small CRD of the group crew.my.domain (a kind Barge) for `create api --from-crd` to import.
pub const BARGE_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: barges.crew.my.domain
spec:
  group: crew.my.domain
  names:
    kind: Barge
    listKind: BargeList
    plural: barges
    singular: barge
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion:
            type: string
          kind:
            type: string
          metadata:
            type: object
          spec:
            type: object
            properties:
              cargo:
                type: integer
                format: int32
                minimum: 0
";

/// A kubebuilder v4 PROJECT of one kind, crew/v1 Captain, for `alpha migrate` (see
/// [`kubebuilder_project`]).
pub const KB_PROJECT: &str = "domain: my.domain
layout:
- go.kubebuilder.io/v4
projectName: demo
repo: example.com/demo
resources:
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: my.domain
  group: crew
  kind: Captain
  path: example.com/demo/api/v1
  version: v1
version: \"3\"
";

/// Its types, as kubebuilder scaffolds them with a field added.
pub const KB_TYPES: &str = "package v1

import (
	metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"
)

// CaptainSpec defines the desired state of Captain.
type CaptainSpec struct {
	// +optional
	Size *int32 `json:\"size,omitempty\"`
}

// CaptainStatus defines the observed state of Captain.
type CaptainStatus struct {
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// Captain is the Schema for the captains API.
type Captain struct {
	metav1.TypeMeta   `json:\",inline\"`
	metav1.ObjectMeta `json:\"metadata,omitempty\"`

	Spec   CaptainSpec   `json:\"spec,omitempty\"`
	Status CaptainStatus `json:\"status,omitempty\"`
}

// +kubebuilder:object:root=true

// CaptainList contains a list of Captain.
type CaptainList struct {
	metav1.TypeMeta `json:\",inline\"`
	metav1.ListMeta `json:\"metadata,omitempty\"`
	Items           []Captain `json:\"items\"`
}
";

/// Where [`KB_TYPES`] is in the project of [`KB_PROJECT`].
pub const KB_TYPES_FILE: &str = "api/v1/captain_types.go";

/// The kubebuilder project of [`KB_PROJECT`] and [`KB_TYPES`] in `dir`.
pub fn kubebuilder_project(dir: &Path) {
    let types = dir.join(KB_TYPES_FILE);
    std::fs::create_dir_all(types.parent().expect("parent")).expect("mkdir");
    std::fs::write(dir.join("PROJECT"), KB_PROJECT).expect("write");
    std::fs::write(types, KB_TYPES).expect("write");
}

/// The workspace root (the operator-gen checkout).
pub fn workspace_root() -> PathBuf {
    // Prefer the variable cargo sets when it runs the test: this library may have been built
    // from another checkout sharing the target directory.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

/// The canonical path of this checkout, as `init` writes it into a project's local cargo config
/// (`.cargo/config.toml`) by default or from `--runtime-path`.
pub fn checkout_path() -> String {
    let path = workspace_root();
    std::fs::canonicalize(&path)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The `cargo` running the tests.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// The `operator-gen` binary, built once per test process with `cargo build -p operator-gen`
/// into its own target directory (`target/cli-under-test`), so a checkout sharing the main
/// target directory can never hand the tests a binary built from other sources.
pub fn operator_gen_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let root = workspace_root();
        let out = Command::new(cargo())
            .args(["build", "-p", "operator-gen", "--bin", "operator-gen"])
            .arg("--message-format=json")
            .arg("--target-dir")
            .arg(root.join("target/cli-under-test"))
            .current_dir(&root)
            .stderr(Stdio::inherit())
            .output()
            .expect("run cargo build -p operator-gen");
        assert!(out.status.success(), "cargo build -p operator-gen failed");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["reason"] == "compiler-artifact" && v["target"]["name"] == "operator-gen")
            .find_map(|v| v["executable"].as_str().map(PathBuf::from))
            .expect("cargo build reported no operator-gen executable")
    })
}

/// The result of one CLI run.
#[derive(Debug)]
pub struct Output {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// `operator-gen` to run in `dir` non-interactively, with a fixed license year and without this
/// machine's user-level templates (`$XDG_CONFIG_HOME/operator-gen/templates`).
fn operator_gen_in(dir: &Path) -> Command {
    let mut c = Command::new(operator_gen_bin());
    c.current_dir(dir)
        .env("OPERATOR_GEN_YEAR", YEAR)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", "/nonexistent/operator-gen-tests")
        .stdin(Stdio::null());
    c
}

/// Run `operator-gen args...` in `dir`, non-interactively, with a fixed license year.
pub fn run(dir: &Path, args: &[String]) -> Output {
    let out = operator_gen_in(dir)
        .args(args)
        .output()
        .expect("run operator-gen");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `operator-gen args` (a command line, split by [`split_args`]) to spawn in `dir` as [`run`]
/// runs it, without `CARGO_TARGET_DIR` (the scan's cache is the project's own, in its
/// `target/`), stdout discarded and stderr piped: the fault suites start, kill and race these.
pub fn command(dir: &Path, args: &str) -> Command {
    let mut c = operator_gen_in(dir);
    c.args(split_args(args))
        .env_remove("CARGO_TARGET_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// How the tree `now` differs from `expected` (both of [`tree_with_dirs`]): the paths only in
/// one of them and those whose contents differ.
pub fn tree_differences(
    now: &BTreeMap<String, Vec<u8>>,
    expected: &BTreeMap<String, Vec<u8>>,
) -> String {
    let only_now: Vec<&String> = now.keys().filter(|k| !expected.contains_key(*k)).collect();
    let only_expected: Vec<&String> = expected.keys().filter(|k| !now.contains_key(*k)).collect();
    let differ: Vec<&String> = now
        .iter()
        .filter(|(k, v)| expected.get(*k).is_some_and(|w| w != *v))
        .map(|(k, _)| k)
        .collect();
    format!(
        "only in the tree: {only_now:?}; only in the expected: {only_expected:?}; contents differ: {differ:?}"
    )
}

/// Split a command line on whitespace, keeping "double-quoted" words together.
pub fn split_args(line: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    args.push(std::mem::take(&mut current));
                    any = false;
                }
            }
            c => {
                current.push(c);
                any = true;
            }
        }
    }
    if any {
        args.push(current);
    }
    args
}

/// Every file under `dir` (relative path with `/` → contents), skipping `target/`.
pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut tree = tree_with_dirs(dir);
    tree.retain(|path, _| !path.ends_with('/'));
    tree
}

/// Every directory (`path/` → nothing) and file (`path` → contents) under `dir`, hidden ones
/// included, skipping `target/` (build output and the scan's cache, not the project's sources).
pub fn tree_with_dirs(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            if rel == "target" {
                continue;
            }
            if path.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(root, &path, out);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.insert(rel, bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A hash of every path, directory, permission and content under `dir`.
pub fn tree_hash(dir: &Path) -> u64 {
    fn walk(root: &Path, dir: &Path, h: &mut std::collections::hash_map::DefaultHasher) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            path.strip_prefix(root).unwrap_or(&path).hash(h);
            if let Ok(meta) = std::fs::symlink_metadata(&path) {
                meta.is_dir().hash(h);
                meta.permissions().readonly().hash(h);
                #[cfg(unix)]
                std::os::unix::fs::PermissionsExt::mode(&meta.permissions()).hash(h);
            }
            if path.is_dir() {
                walk(root, &path, h);
            } else if let Ok(bytes) = std::fs::read(&path) {
                bytes.hash(h);
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    walk(dir, dir, &mut h);
    h.finish()
}

/// Copy the tree `from` into `to` (created when missing).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create directory");
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy file");
        }
    }
}

/// Whether `tool` runs (`tool args...` exits 0). Outside CI a missing tool reports the skip
/// and returns false; in CI ([`crate::tools::in_ci`]) it fails the test with `install`, the
/// command that provides the tool.
#[track_caller]
pub fn require_tool(tool: &str, args: &[&str], install: &str) -> bool {
    let ok = Command::new(tool)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        crate::tools::skip_or_fail(&format!("`{tool}` does not run"), install);
    }
    ok
}

/// The command that installs `make`, for [`require_tool`].
pub const INSTALL_MAKE: &str = "apt-get install make";

/// The command that puts a `kubectl` on PATH, for [`require_tool`]: the envtest build provides
/// one beside the apiserver.
pub const INSTALL_KUBECTL: &str =
    "source hack/envtest/ensure.sh && export PATH=\"$KUBEBUILDER_ASSETS:$PATH\"";

/// Replace machine-specific text (the checkout's path) with its placeholder.
pub fn normalize(text: &str) -> String {
    text.replace(&checkout_path(), CHECKOUT_PLACEHOLDER)
}

/// Make a golden's text concrete for this machine.
pub fn denormalize(text: &str) -> String {
    text.replace(CHECKOUT_PLACEHOLDER, &checkout_path())
}

/// The first line where two texts differ, or how their lengths differ, for readable failures.
pub fn first_line_difference(expected: &str, actual: &str) -> String {
    for (i, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
        if e != a {
            return format!("line {}:\n  expected: {e}\n  actual:   {a}", i + 1);
        }
    }
    format!(
        "lengths differ: expected {} bytes, actual {} bytes",
        expected.len(),
        actual.len()
    )
}

/// Every directory and file under `dir` (and `dir` itself) without write permission, and the
/// path to it traversable by others.
pub fn make_read_only(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fn walk(p: &Path) {
        if p.is_dir() {
            for e in std::fs::read_dir(p).expect("read dir").flatten() {
                walk(&e.path());
            }
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o555)).expect("chmod");
        } else {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o444)).expect("chmod");
        }
    }
    walk(dir);
    let mut parent = dir.parent();
    while let Some(p) =
        parent.filter(|p| p.starts_with(std::env::temp_dir()) && *p != std::env::temp_dir())
    {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        parent = p.parent();
    }
}

/// Whether this process runs as root (a file it creates in `dir` is owned by uid 0): root
/// ignores permissions, so a read-only tree binds only [`UNPRIVILEGED`] runs.
pub fn running_as_root(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let probe = dir.join(".uid-probe");
    std::fs::write(&probe, "").expect("write probe");
    let uid = std::fs::metadata(&probe).expect("stat probe").uid();
    std::fs::remove_file(&probe).expect("remove probe");
    uid == 0
}

/// The command prefix that runs what follows as the unprivileged user 65534: `setpriv`.
pub const UNPRIVILEGED: &[&str] = &[
    "setpriv",
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
    "--",
];

/// Whether `setpriv` runs; outside CI a test without it skips `purpose`, in CI it fails.
pub fn setpriv_available(purpose: &str) -> bool {
    let ok = Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::tools::skip_or_fail(
            &format!("setpriv is not installed; {purpose} needs it to drop root"),
            "apt-get install util-linux",
        );
    }
    ok
}

/// Run `prefix... operator-gen args...` in `dir` as [`run`] does, with at most `memory` bytes of
/// address space (a runaway read fails instead of exhausting the machine), killed after
/// `limit` (`None` then), and without `CARGO_TARGET_DIR`: the scan's cache is the project's
/// own, in its `target/`.
pub fn run_bounded(
    dir: &Path,
    prefix: &[&str],
    args: &[String],
    memory: u64,
    limit: std::time::Duration,
) -> Option<Output> {
    use std::io::{Read, Seek};
    let mut out = tempfile::tempfile().expect("stdout file");
    let mut err = tempfile::tempfile().expect("stderr file");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$@\"", memory >> 10))
        .arg("sh")
        .args(prefix)
        .arg(operator_gen_bin())
        .args(args)
        .current_dir(dir)
        .env("OPERATOR_GEN_YEAR", YEAR)
        .env("NO_COLOR", "1")
        .env_remove("CARGO_TARGET_DIR")
        .stdin(Stdio::null())
        .stdout(out.try_clone().expect("clone stdout file"))
        .stderr(err.try_clone().expect("clone stderr file"))
        .spawn()
        .expect("run operator-gen");
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for operator-gen") {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let text = |f: &mut std::fs::File| {
        let mut bytes = Vec::new();
        f.rewind().expect("rewind");
        f.read_to_end(&mut bytes).expect("read output");
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let (stdout, stderr) = (text(&mut out), text(&mut err));
    status.map(|s| Output {
        code: s.code().unwrap_or(-1),
        stdout,
        stderr,
    })
}

/// Runs `git args...` in `dir`; panics with its stderr when it fails, else returns its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    git_with(dir, args, &[])
}

/// [`git`] with the variables `env` set.
fn git_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The commit date of [`git_commit_all`]: two repositories made from the same files have the
/// same commits.
pub const GIT_DATE: &str = "2026-01-01T00:00:00Z";

/// Makes `dir` a git repository on branch `main` (committer Crew, unsigned) and commits every
/// file in it as `scaffold`, dated [`GIT_DATE`].
pub fn git_commit_all(dir: &Path) {
    for args in [
        &["init", "--quiet", "--initial-branch", "main"][..],
        &["config", "user.name", "Crew"],
        &["config", "user.email", "crew@example.com"],
        &["config", "commit.gpgsign", "false"],
        &["add", "--all"],
    ] {
        git(dir, args);
    }
    git_with(
        dir,
        &["commit", "--quiet", "-m", "scaffold"],
        &[
            ("GIT_AUTHOR_DATE", GIT_DATE),
            ("GIT_COMMITTER_DATE", GIT_DATE),
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_quoted_words() {
        assert_eq!(
            split_args(r#"init --owner "The Authors"  --yes"#),
            ["init", "--owner", "The Authors", "--yes"]
        );
        assert_eq!(split_args(r#"a "" b"#), ["a", "", "b"]);
    }
}
