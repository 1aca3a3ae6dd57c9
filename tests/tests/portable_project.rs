//! A scaffolded project is portable: the files a user commits name operator-gen's crates by
//! version only and hold no path of this machine, while the local, git-ignored cargo config
//! (`.cargo/config.toml`) patches the crates to this checkout (or a git URL) so the project builds
//! before they are published.
//!
//! The project (`init`, `create api`, `manifests`) is copied to another directory without
//! `.cargo/`; no file of the copy may contain this checkout's path, the project's or the temporary
//! directory's path, `$HOME` or `$CARGO_HOME` (each as given and canonical), and its `Cargo.toml`
//! must name `operator-gen-runtime` by this version with no `path`, `git` or `[patch]` anywhere.
//! The original then resolves operator-gen's crates to this checkout and builds, in the shared
//! `target/generated-projects`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use operator_gen::commands::init::{LOCAL_CONFIG, OUR_CRATES};
use operator_gen_tests::cli;
use operator_gen_tests::operator::shell;

fn ok(dir: &Path, args: &str) {
    let out = cli::run(dir, &cli::split_args(args));
    assert_eq!(out.code, 0, "`operator-gen {args}` failed: {}", out.stderr);
}

fn toml_file(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{} is not TOML: {e}", path.display()))
}

/// Copy `from` to `to`, leaving out `.cargo/` and `target/` at the top.
fn copy_without_local_config(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read project").flatten() {
        let name = entry.file_name();
        if name == ".cargo" || name == "target" {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            cli::copy_dir(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).expect("copy");
        }
    }
}

/// Each path as given and canonical.
fn machine_paths(paths: &[PathBuf]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for p in paths {
        for form in [Some(p.clone()), std::fs::canonicalize(p).ok()]
            .into_iter()
            .flatten()
        {
            let text = form.to_string_lossy().trim_end_matches('/').to_owned();
            // `/` itself is in every absolute path a Dockerfile or manifest may rightly hold
            if text.len() > 1 {
                out.insert(text);
            }
        }
    }
    out
}

/// The `[patch.crates-io]` entries of the local config: crate name → (key, value) of its source.
fn patches(project: &Path) -> Vec<(String, String, String)> {
    let config = toml_file(&project.join(LOCAL_CONFIG));
    let table = config
        .get("patch")
        .and_then(|p| p.get("crates-io"))
        .and_then(toml::Value::as_table)
        .expect("the local config has [patch.crates-io]");
    table
        .iter()
        .map(|(name, source)| {
            let source = source.as_table().expect("an inline table");
            assert_eq!(source.len(), 1, "{name}: one key, path or git: {source:?}");
            let (key, value) = source.iter().next().expect("one key");
            (
                name.clone(),
                key.clone(),
                value.as_str().expect("a string").to_owned(),
            )
        })
        .collect()
}

/// Every dependency table of a manifest (`[dependencies]`, dev-, build-, per target).
fn dependency_tables(manifest: &toml::Table) -> Vec<&toml::Table> {
    let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut out: Vec<&toml::Table> = kinds
        .iter()
        .filter_map(|k| manifest.get(*k).and_then(toml::Value::as_table))
        .collect();
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        for target in targets.values() {
            out.extend(
                kinds
                    .iter()
                    .filter_map(|k| target.get(*k).and_then(toml::Value::as_table)),
            );
        }
    }
    out
}

/// The committed files of `copy` are portable; `machine` lists paths none may contain.
fn assert_portable(copy: &Path, machine: &BTreeSet<String>) {
    let tree = cli::snapshot(copy);
    assert!(tree.len() > 20, "the copy holds only {} files", tree.len());
    let mut found = Vec::new();
    for (file, bytes) in &tree {
        let text = String::from_utf8_lossy(bytes);
        for path in machine {
            if text.contains(path.as_str()) {
                found.push(format!("{file} holds {path}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "committed files name paths of this machine:\n{}",
        found.join("\n")
    );

    let manifest = toml_file(&copy.join("Cargo.toml"));
    for key in ["patch", "replace", "workspace"] {
        assert!(
            !manifest.contains_key(key),
            "Cargo.toml has [{key}]: {manifest:?}"
        );
    }
    let deps = dependency_tables(&manifest);
    let runtime = deps
        .iter()
        .find_map(|d| d.get("operator-gen-runtime"))
        .expect("Cargo.toml depends on operator-gen-runtime");
    assert_eq!(
        runtime.as_str(),
        Some(env!("CARGO_PKG_VERSION")),
        "operator-gen-runtime is named by this version only"
    );
    for table in deps {
        for (name, dep) in table {
            if let Some(dep) = dep.as_table() {
                for key in ["path", "git"] {
                    assert!(
                        !dep.contains_key(key),
                        "Cargo.toml names {name} by {key}: {dep:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn committed_files_are_portable_and_the_local_config_builds() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let project = tmp.path().join("here").join("guestbook");
    std::fs::create_dir_all(&project).expect("mkdir");
    ok(&project, "init --domain example.com");
    ok(
        &project,
        "create api --group webapp --version v1 --kind Guestbook --yes",
    );
    ok(&project, "manifests");

    // the local config patches every crate of ours to this checkout, and is git-ignored
    let checkout = PathBuf::from(cli::checkout_path());
    let expected: Vec<(String, String, String)> = OUR_CRATES
        .iter()
        .map(|c| {
            let dir = checkout.join(c.dir).to_string_lossy().into_owned();
            (c.name.to_owned(), "path".to_owned(), dir)
        })
        .collect();
    let mut actual = patches(&project);
    actual.sort();
    let mut sorted = expected.clone();
    sorted.sort();
    assert_eq!(actual, sorted);
    let gitignore = std::fs::read_to_string(project.join(".gitignore")).expect(".gitignore");
    assert!(
        gitignore
            .lines()
            .any(|l| l.trim() == format!("/{LOCAL_CONFIG}")),
        ".gitignore does not list {LOCAL_CONFIG}:\n{gitignore}"
    );
    let dockerignore =
        std::fs::read_to_string(project.join(".dockerignore")).expect(".dockerignore");
    assert!(
        dockerignore.lines().any(|l| l.trim() == ".cargo/"),
        ".dockerignore does not leave .cargo/ out of the image build:\n{dockerignore}"
    );

    // what a user commits, cloned elsewhere
    let copy = tmp.path().join("elsewhere").join("guestbook");
    copy_without_local_config(&project, &copy);
    let home = |var: &str| std::env::var_os(var).map(PathBuf::from);
    let machine = machine_paths(
        &[
            Some(checkout.clone()),
            Some(cli::workspace_root()),
            Some(project.clone()),
            Some(tmp.path().to_path_buf()),
            home("HOME"),
            home("CARGO_HOME"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>(),
    );
    assert_portable(&copy, &machine);

    // the original builds with the local config, taking our crates from this checkout
    let metadata = shell(
        &project,
        &cli::cargo(),
        &["metadata", "--format-version", "1"],
    );
    let metadata: serde_json::Value = serde_json::from_str(&metadata).expect("metadata JSON");
    for c in OUR_CRATES {
        let package = metadata["packages"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["name"] == c.name))
            .unwrap_or_else(|| panic!("cargo metadata lists no {}", c.name));
        let manifest = checkout.join(c.dir).join("Cargo.toml");
        assert_eq!(
            package["manifest_path"].as_str(),
            Some(manifest.to_string_lossy().as_ref()),
            "{} does not come from this checkout",
            c.name
        );
    }
    shell(&project, &cli::cargo(), &["build"]);
}

#[test]
fn runtime_git_and_runtime_path_write_the_local_config_only() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let url = "https://git.example.com/operator-gen.git";
    let by_git = tmp.path().join("by-git");
    std::fs::create_dir_all(&by_git).expect("mkdir");
    ok(&by_git, &format!("init --runtime-git {url}"));
    for (name, key, value) in patches(&by_git) {
        assert_eq!((key.as_str(), value.as_str()), ("git", url), "{name}");
    }
    assert_eq!(patches(&by_git).len(), OUR_CRATES.len());

    // the runtime/ directory stands for its checkout
    let checkout = cli::checkout_path();
    let by_path = tmp.path().join("by-path");
    std::fs::create_dir_all(&by_path).expect("mkdir");
    ok(&by_path, &format!("init --runtime-path {checkout}/runtime"));
    for (name, key, value) in patches(&by_path) {
        assert_eq!(key, "path", "{name}");
        assert!(value.starts_with(&checkout), "{name}: {value}");
    }

    for project in [&by_git, &by_path] {
        let copy = tmp.path().join("copies").join(
            project
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        copy_without_local_config(project, &copy);
        let machine = machine_paths(&[PathBuf::from(&checkout), tmp.path().to_path_buf()]);
        assert_portable(&copy, &machine);
        let committed = cli::snapshot(&copy);
        assert!(
            !committed
                .values()
                .any(|b| String::from_utf8_lossy(b).contains("git.example.com")),
            "a committed file names the --runtime-git URL"
        );
    }

    // a crate of the checkout other than the runtime is not a checkout
    let not_checkout = tmp.path().join("not-checkout");
    std::fs::create_dir_all(&not_checkout).expect("mkdir");
    let out = cli::run(
        &not_checkout,
        &cli::split_args(&format!("init --runtime-path {checkout}/codegen")),
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("is not an operator-gen checkout"),
        "{}",
        out.stderr
    );
}
