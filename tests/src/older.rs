//! The older operator-gen of the `alpha update` tests: there is no released one, so this
//! checkout's sources are copied to `target/older-operator-gen/src` with
//! `tests/fixtures/alpha-update/older-scaffold.patch` applied (version 0.0.1, a different `IMG`
//! line in the Makefile and first line in the Dockerfile) and built with `cargo build -p
//! operator-gen` into their own target directory beside them (not the shared one, whose
//! `operator-gen` it would replace), kept between runs and redone when the sources or the patch
//! change.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::cli;

/// The older operator-gen's version, as the patch sets it.
pub const VERSION: &str = "0.0.1";

/// The files of this checkout the CLI's build needs (workspace members and what they embed).
const SOURCES: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "cli",
    "codegen",
    "codegen-macros",
    "runtime",
    "envtest",
    "templates",
    "hack/envtest",
    "tests/Cargo.toml",
    "tests/src",
    "tests/benches",
];

/// The patched operator-gen 0.0.1, built once per test process; `None` after reporting a skip
/// when git is missing.
pub fn operator_gen() -> Option<&'static Path> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| {
        if !cli::require_tool("git", &["--version"], "apt-get install git") {
            return None;
        }
        let root = cli::workspace_root();
        let base = root.join("target/older-operator-gen");
        let src = base.join("src");
        // one copy and build at a time, whichever test process gets here first
        std::fs::create_dir_all(&base).expect("create target/older-operator-gen");
        let lock = std::fs::File::create(base.join(".lock")).expect("create the build lock");
        lock.lock().expect("take the build lock");
        let patch = root.join("tests/fixtures/alpha-update/older-scaffold.patch");
        let mut hash = std::collections::hash_map::DefaultHasher::new();
        {
            use std::hash::{Hash, Hasher};
            for rel in SOURCES {
                let path = root.join(rel);
                if path.is_dir() {
                    cli::tree_hash(&path).hash(&mut hash);
                } else {
                    std::fs::read(&path).unwrap_or_default().hash(&mut hash);
                }
            }
            std::fs::read(&patch).expect("read the patch").hash(&mut hash);
            let stamp = format!("{:x}\n", hash.finish());
            let stamp_file = base.join("sources.stamp");
            if std::fs::read_to_string(&stamp_file).ok().as_deref() != Some(stamp.as_str()) {
                let _ = std::fs::remove_dir_all(&src);
                for rel in SOURCES {
                    let from = root.join(rel);
                    let to = src.join(rel);
                    if from.is_dir() {
                        cli::copy_dir(&from, &to);
                    } else if from.is_file() {
                        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
                        std::fs::copy(&from, &to).expect("copy");
                    }
                }
                let out = Command::new("git")
                    .arg("apply")
                    .arg(&patch)
                    .current_dir(&src)
                    .output()
                    .expect("run git apply");
                assert!(
                    out.status.success(),
                    "older-scaffold.patch no longer applies to this checkout (refresh it against the templates it changes): {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                std::fs::write(&stamp_file, &stamp).expect("write the stamp");
            }
        }
        // the lock names the workspace's crates at their own version: not --locked
        let status = Command::new(cli::cargo())
            .args(["build", "--offline", "-p", "operator-gen", "--bin", "operator-gen"])
            .arg("--target-dir")
            .arg(base.join("target"))
            .current_dir(&src)
            .stdin(Stdio::null())
            .status()
            .expect("run cargo build for the older operator-gen");
        assert!(status.success(), "building the older operator-gen failed");
        Some(base.join("target/debug/operator-gen"))
    })
    .as_deref()
}
