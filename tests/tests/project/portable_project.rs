//! A scaffolded project is portable: the files a user commits name operator-gen's crates by
//! version only and hold no path of this machine, while the local, git-ignored cargo config
//! (`.cargo/config.toml`) patches the crates to this checkout (or a git URL) so the project builds
//! before they are published.
//!
//! The project (`init`, `create api`, `manifests`) is copied to another directory without
//! `.cargo/`; no file of the copy may contain this checkout's path, the project's or the temporary
//! directory's path, `$HOME` or `$CARGO_HOME` (each as given and canonical), and its `Cargo.toml`
//! must name `operator-gen-runtime` (and the dev-dependency `operator-gen-envtest`) by this version
//! with no `path`, `git` or `[patch]` anywhere.
//! The original then resolves operator-gen's crates to this checkout and builds, in the shared
//! `target/generated-projects`; and its image build is checked without a container engine: the
//! builder image's Rust is the project's `rust-version`, which every locked package accepts, and
//! the Dockerfile's copies from the build context (less `.dockerignore`) suffice for its two
//! `--locked` builds, the dependency layer and the manager.

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
    // the controller tests' control plane, a dev-dependency named the same way
    let envtest = manifest
        .get("dev-dependencies")
        .and_then(|d| d.get("operator-gen-envtest"))
        .expect("Cargo.toml has the dev-dependency operator-gen-envtest");
    assert_eq!(
        envtest.as_str(),
        Some(env!("CARGO_PKG_VERSION")),
        "operator-gen-envtest is named by this version only"
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

    assert_image_builds(&project, &metadata);
}

/// A `COPY` of the Dockerfile's builder stage: sources in the build context, destination under
/// the working directory.
struct Copy {
    sources: Vec<String>,
    dest: String,
}

/// The Dockerfile's first (builder) stage: its base image, and its `COPY` and `RUN` instructions
/// in order.
struct BuilderStage {
    image: String,
    steps: Vec<Step>,
}

enum Step {
    Copy(Copy),
    Run(String),
}

/// Parses the builder stage: continuation lines joined, comments dropped.
fn builder_stage(dockerfile: &str) -> BuilderStage {
    let mut instructions = Vec::new();
    let mut current = String::new();
    for line in dockerfile.lines() {
        let line = line.trim();
        if current.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part.trim());
                current.push(' ');
            }
            None => {
                current.push_str(line);
                instructions.push(std::mem::take(&mut current));
            }
        }
    }
    let mut image = None;
    let mut steps = Vec::new();
    for instruction in instructions {
        let (word, rest) = instruction
            .split_once(' ')
            .unwrap_or((instruction.as_str(), ""));
        match word {
            "FROM" if image.is_some() => break,
            "FROM" => image = rest.split_whitespace().next().map(str::to_owned),
            "COPY" => {
                let mut words: Vec<String> = rest.split_whitespace().map(str::to_owned).collect();
                assert!(
                    !words.iter().any(|w| w.starts_with("--")),
                    "the builder stage copies with flags the test does not model: {instruction}"
                );
                let dest = words.pop().expect("COPY has a destination");
                steps.push(Step::Copy(Copy {
                    sources: words,
                    dest,
                }));
            }
            "RUN" => steps.push(Step::Run(rest.to_owned())),
            _ => {}
        }
    }
    BuilderStage {
        image: image.expect("the Dockerfile has a FROM"),
        steps,
    }
}

/// The build context: the project's files that `.dockerignore` leaves in. Its patterns are
/// top-level names (`target/`, `.cargo/`); a pattern with a wildcard fails the test, which does
/// not model them.
fn build_context(project: &Path) -> BTreeSet<String> {
    let ignore = std::fs::read_to_string(project.join(".dockerignore")).expect(".dockerignore");
    let ignored: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.trim_end_matches('/'))
        .collect();
    for pattern in &ignored {
        assert!(
            !pattern.contains(['*', '?', '[', '!']) && !pattern.contains('/'),
            ".dockerignore pattern {pattern:?} is not a top-level name"
        );
    }
    cli::snapshot(project)
        .into_keys()
        .filter(|file| {
            let top = file.split('/').next().unwrap_or(file);
            !ignored.contains(&top)
        })
        .collect()
}

/// `rust-version` strings compare as dotted numbers, a missing patch number being 0.
fn version_key(version: &str) -> [u64; 3] {
    let mut key = [0; 3];
    for (slot, n) in key.iter_mut().zip(version.split('.')) {
        *slot = n.parse().unwrap_or(u64::MAX);
    }
    key
}

/// The image build, without a container engine: the builder stage's base image carries the
/// project's `rust-version`, which every locked package accepts; each `COPY` takes files that the
/// build context (the project less `.dockerignore`) holds; the dependency layer builds from
/// `Cargo.toml` and `Cargo.lock` alone with the placeholder sources its `RUN` writes, and the
/// project then builds from what the copies bring. The builds run `--locked` as the Dockerfile
/// does, in the shared target directory, without `--release` (the profile changes code
/// generation, not which files the build reads), and with the local config's patches given on
/// the command line, standing in for the published crates.
fn assert_image_builds(project: &Path, metadata: &serde_json::Value) {
    let dockerfile = std::fs::read_to_string(project.join("Dockerfile")).expect("Dockerfile");
    let stage = builder_stage(&dockerfile);

    let manifest = toml_file(&project.join("Cargo.toml"));
    let rust_version = manifest["package"]["rust-version"]
        .as_str()
        .expect("Cargo.toml has a rust-version");
    assert_eq!(
        stage.image,
        format!("rust:{rust_version}-alpine"),
        "the builder image's Rust is not the project's rust-version"
    );
    let too_new: Vec<String> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| {
            let wants = p["rust_version"].as_str()?;
            (version_key(wants) > version_key(rust_version))
                .then(|| format!("{} {} wants Rust {wants}", p["name"], p["version"]))
        })
        .collect();
    assert!(
        too_new.is_empty(),
        "locked packages need a newer Rust than the image's {rust_version}:\n{}",
        too_new.join("\n")
    );

    let context = build_context(project);
    let tmp = tempfile::tempdir().expect("tempdir");
    let workspace = tmp.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("mkdir");
    let mut config = Vec::new();
    for (name, key, value) in patches(project) {
        config.push("--config".to_owned());
        config.push(format!("patch.crates-io.{name}.{key}={value:?}"));
    }
    let build = |dir: &Path| {
        let mut args = vec!["build", "--locked", "--bin", "manager"];
        args.extend(config.iter().map(String::as_str));
        shell(dir, &cli::cargo(), &args);
    };
    let mut runs = 0;
    for step in &stage.steps {
        match step {
            Step::Copy(copy) => {
                for source in &copy.sources {
                    let source = source.trim_end_matches('/');
                    let files: Vec<&String> = context
                        .iter()
                        .filter(|f| *f == source || f.starts_with(&format!("{source}/")))
                        .collect();
                    assert!(
                        !files.is_empty(),
                        "COPY {source}: the build context holds no such file (committed, and not in .dockerignore)"
                    );
                    for file in files {
                        let dest = if copy.dest == "./" {
                            workspace.join(file)
                        } else {
                            let rel = file.strip_prefix(source).unwrap_or(file);
                            workspace
                                .join(copy.dest.trim_end_matches('/'))
                                .join(rel.trim_start_matches('/'))
                        };
                        std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
                        std::fs::copy(project.join(file), &dest).expect("copy");
                    }
                }
            }
            Step::Run(command) if command.contains("cargo build") => {
                assert!(
                    command.contains("cargo build --release --locked --bin manager"),
                    "the image builds otherwise than the test does: {command}"
                );
                runs += 1;
                if runs == 1 {
                    // the dependency layer: the placeholders the RUN writes, then removes
                    assert!(
                        command.contains("src/main.rs") && command.contains("touch src/lib.rs"),
                        "the dependency layer writes other placeholders than the test: {command}"
                    );
                    let src = workspace.join("src");
                    std::fs::create_dir_all(&src).expect("mkdir");
                    std::fs::write(src.join("main.rs"), "fn main() {}\n").expect("write");
                    std::fs::write(src.join("lib.rs"), "").expect("write");
                    build(&workspace);
                    std::fs::remove_dir_all(&src).expect("rm src");
                } else {
                    build(&workspace);
                }
            }
            Step::Run(_) => {}
        }
    }
    assert_eq!(
        runs, 2,
        "the builder stage builds the dependency layer, then the manager"
    );
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
