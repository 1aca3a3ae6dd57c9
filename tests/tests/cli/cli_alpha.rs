//! `alpha update` against an older operator-gen, and `alpha generate`: its backup in place, an
//! interrupted replay, the replay of every command-only directory case and of the Helm plugin.
//!
//! The older operator-gen is the one [`older`] builds from this checkout and a patch. A project
//! made by that binary is committed in a fresh git repository, the user edits and commits, and
//! `alpha update --from-binary` merges this version's scaffold in.

use std::path::Path;
use std::process::{Command, Stdio};

use operator_gen_tests::cli::git;
use operator_gen_tests::{cli, older};

const OLDER: &str = older::VERSION;
const CURRENT: &str = env!("CARGO_PKG_VERSION");

fn older_binary() -> Option<&'static Path> {
    older::operator_gen()
}

pub(crate) fn run_with(bin: &Path, dir: &Path, args: &str) -> cli::Output {
    let out = Command::new(bin)
        .args(cli::split_args(args))
        .current_dir(dir)
        .env("OPERATOR_GEN_YEAR", cli::YEAR)
        .stdin(Stdio::null())
        .output()
        .expect("run operator-gen");
    cli::Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

pub(crate) fn replace(dir: &Path, rel: &str, from: &str, to: &str) {
    let text = read(dir, rel);
    assert!(text.contains(from), "{rel} lacks {from:?}");
    std::fs::write(dir.join(rel), text.replacen(from, to, 1)).expect("write");
}

pub(crate) const OLD_IMG: &str = "IMG ?= controller:0.0.1";
const NEW_IMG: &str = "IMG ?= controller:latest";
pub(crate) const USER_IMG: &str = "IMG ?= registry.example.com/crew/captain:1.0";
const OLD_DOCKERFILE: &str = "# Build the manager binary, statically linked with musl.\n";
const NEW_DOCKERFILE: &str = "# Build the manager binary as a static musl executable.";
pub(crate) const USER_CODE: &str = "    let _ships = 3; // the crew's own reconcile\n";
pub(crate) const TODO: &str = "    // TODO(user): make the cluster match `obj.spec` here.\n";

/// A project scaffolded by the older operator-gen (init, Captain), committed on `main` of a
/// fresh repository, then the user's edits committed; returns the user's commit.
fn older_project(older: &Path, dir: &Path, edit_makefile: bool) -> String {
    std::fs::create_dir_all(dir).expect("mkdir");
    for args in [
        "init --domain example.com --project-name demo",
        "create api --group crew --version v1 --kind Captain",
    ] {
        let out = run_with(older, dir, args);
        assert_eq!(out.code, 0, "older `{args}` failed: {}", out.stderr);
    }
    assert!(read(dir, "PROJECT").contains(&format!("cliVersion: {OLDER}")));
    assert!(read(dir, "Makefile").contains(OLD_IMG));
    assert!(read(dir, "Dockerfile").starts_with(OLD_DOCKERFILE));
    cli::git_commit_all(dir);
    replace(dir, "src/controller/captain.rs", TODO, USER_CODE);
    if edit_makefile {
        replace(dir, "Makefile", OLD_IMG, USER_IMG);
    }
    git(
        dir,
        &["commit", "--quiet", "--all", "-m", "the crew's changes"],
    );
    git(dir, &["rev-parse", "HEAD"]).trim().to_owned()
}

fn branches(dir: &Path) -> Vec<String> {
    git(dir, &["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_owned)
        .collect()
}

pub(crate) fn merge_branch() -> String {
    format!("operator-gen-update-from-{OLDER}-to-{CURRENT}")
}

#[test]
fn update_merges_the_new_scaffold_and_commits_conflicts_with_markers() {
    let Some(older) = older_binary() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    let user = older_project(older, &dir, true);

    let out = cli::run(
        &dir,
        &cli::split_args("alpha update --from-binary")
            .into_iter()
            .chain([older.display().to_string()])
            .collect::<Vec<_>>(),
    );
    assert_eq!(out.code, 0, "alpha update failed: {}", out.stderr);
    let mut names = branches(&dir);
    names.sort();
    assert_eq!(
        names,
        [
            "main".to_owned(),
            "operator-gen-update-ancestor-0.0.1".to_owned(),
            merge_branch(),
            "operator-gen-update-original-0.0.1".to_owned(),
            "operator-gen-update-upgrade-0.0.1".to_owned(),
        ]
    );
    // left on the merge branch, one commit on top of the user's, committed; main untouched
    assert_eq!(
        git(&dir, &["symbolic-ref", "--short", "HEAD"]).trim(),
        merge_branch()
    );
    assert_eq!(git(&dir, &["rev-parse", "main"]).trim(), user);
    assert_eq!(git(&dir, &["rev-parse", "HEAD^"]).trim(), user);
    assert_eq!(git(&dir, &["status", "--porcelain"]), "");
    // the branches hold the old scaffold, the user's tree and the new scaffold
    let ancestor = git(
        &dir,
        &["show", "operator-gen-update-ancestor-0.0.1:Makefile"],
    );
    assert!(ancestor.contains(OLD_IMG), "{ancestor}");
    let original = git(
        &dir,
        &["show", "operator-gen-update-original-0.0.1:Makefile"],
    );
    assert!(original.contains(USER_IMG), "{original}");
    let upgrade = git(
        &dir,
        &["show", "operator-gen-update-upgrade-0.0.1:Makefile"],
    );
    assert!(upgrade.contains(NEW_IMG), "{upgrade}");
    // where only the scaffold changed: the new scaffold's line
    let dockerfile = read(&dir, "Dockerfile");
    assert!(dockerfile.starts_with(NEW_DOCKERFILE), "{dockerfile}");
    assert!(!dockerfile.contains(OLD_DOCKERFILE));
    // where only the user changed: the user's code
    let controller = read(&dir, "src/controller/captain.rs");
    assert!(controller.contains(USER_CODE) && !controller.contains(TODO));
    assert!(read(&dir, "PROJECT").contains(&format!("cliVersion: {CURRENT}")));
    // where both changed: both sides between conflict markers, and the file listed
    let makefile = read(&dir, "Makefile");
    // labelled as `git merge` labels them: the project's side HEAD, the other the upgrade branch
    let theirs = ">>>>>>> operator-gen-update-upgrade-0.0.1\n";
    for expected in ["<<<<<<< HEAD\n", USER_IMG, "=======", NEW_IMG, theirs] {
        assert!(
            makefile.contains(expected),
            "Makefile lacks {expected:?}:\n{makefile}"
        );
    }
    assert!(!makefile.contains(OLD_IMG));
    assert_eq!(out.stdout, "Makefile\n", "stderr: {}", out.stderr);
    assert!(
        out.stderr
            .contains("1 files have conflicts, committed with their markers on branch"),
        "{}",
        out.stderr
    );

    // a second run is refused while the branches exist, and --force replaces them
    git(&dir, &["checkout", "--quiet", "main"]);
    let again = cli::run(
        &dir,
        &[
            "alpha".into(),
            "update".into(),
            "--from-binary".into(),
            older.display().to_string(),
        ],
    );
    assert_eq!(again.code, 1);
    assert!(
        again.stderr.contains("exists from an earlier alpha update"),
        "{}",
        again.stderr
    );
    let forced = cli::run(
        &dir,
        &[
            "alpha".into(),
            "update".into(),
            "--force".into(),
            "--from-binary".into(),
            older.display().to_string(),
        ],
    );
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert_eq!(git(&dir, &["rev-parse", "HEAD^"]).trim(), user);
}

#[test]
fn update_without_overlapping_edits_merges_cleanly() {
    let Some(older) = older_binary() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    let user = older_project(older, &dir, false);

    let out = cli::run(
        &dir,
        &[
            "alpha".into(),
            "update".into(),
            "--from-binary".into(),
            older.display().to_string(),
        ],
    );
    assert_eq!(out.code, 0, "alpha update failed: {}", out.stderr);
    assert_eq!(out.stdout, "", "no conflicts to list");
    assert!(out.stderr.contains("with no conflicts"), "{}", out.stderr);
    assert_eq!(
        git(&dir, &["symbolic-ref", "--short", "HEAD"]).trim(),
        merge_branch()
    );
    assert_eq!(git(&dir, &["rev-parse", "HEAD^"]).trim(), user);
    assert_eq!(git(&dir, &["rev-parse", "main"]).trim(), user);
    assert!(read(&dir, "Makefile").contains(NEW_IMG));
    assert!(read(&dir, "Dockerfile").starts_with(NEW_DOCKERFILE));
    assert!(read(&dir, "src/controller/captain.rs").contains(USER_CODE));
    let markers = Command::new("git")
        .args(["grep", "-l", "-e", "^<<<<<<< "])
        .current_dir(&dir)
        .output()
        .expect("run git grep");
    assert_eq!(
        String::from_utf8_lossy(&markers.stdout),
        "",
        "no conflict markers"
    );
}

#[test]
fn generate_in_place_keeps_the_old_tree_in_a_backup() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for args in [
        "init --domain example.com",
        "create api --group crew --version v1 --kind Captain",
    ] {
        let out = cli::run(&dir, &cli::split_args(args));
        assert_eq!(out.code, 0, "`{args}` failed: {}", out.stderr);
    }
    replace(&dir, "Makefile", NEW_IMG, USER_IMG);
    replace(&dir, "src/controller/captain.rs", TODO, USER_CODE);
    std::fs::create_dir_all(dir.join("docs")).expect("mkdir docs");
    std::os::unix::fs::symlink("../README.md", dir.join("docs/readme.md")).expect("symlink");
    std::fs::create_dir_all(dir.join("target/debug")).expect("mkdir target");
    std::fs::write(dir.join("target/debug/marker"), "build output").expect("write");
    let before = cli::snapshot(&dir);

    let out = cli::run(&dir, &cli::split_args("alpha generate"));
    assert_eq!(out.code, 0, "alpha generate failed: {}", out.stderr);
    let backup = tmp.path().join("demo-backup");
    // the backup is the tree as it was, build output aside, which stays in place
    assert_eq!(cli::snapshot(&backup), before);
    assert!(!backup.join("target").exists());
    assert_eq!(read(&dir, "target/debug/marker"), "build output");
    assert!(read(&dir, "Makefile").contains(NEW_IMG));
    assert!(read(&dir, "src/controller/captain.rs").contains(USER_CODE));
    assert!(!tmp.path().join(".demo.operator-gen-generate").exists());
    // the user's symbolic link is carried over as a link
    let link = std::fs::read_link(dir.join("docs/readme.md")).expect("a symbolic link");
    assert_eq!(link, Path::new("../README.md"));

    // a second run would overwrite the backup: refused, nothing changed
    let now = cli::snapshot(&dir);
    let again = cli::run(&dir, &cli::split_args("alpha generate"));
    assert_eq!(again.code, 1);
    assert!(
        again
            .stderr
            .contains("demo-backup exists from an earlier alpha generate"),
        "{}",
        again.stderr
    );
    assert_eq!(cli::snapshot(&dir), now);
}

/// What `manifests` writes, which `alpha generate` runs after the replay.
fn written_by_manifests(rel: &str) -> bool {
    rel.starts_with("config/crd/bases/")
        || rel == "config/rbac/role.yaml"
        || rel == "config/webhook/manifests.yaml"
}

/// The lines of `bytes`, sorted.
fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// The replay is faithful: every directory case's project made by commands alone (no `in/`, no
/// `@` edits) and re-scaffolded by `alpha generate --output-dir` gives the same files, but for
/// what `manifests` writes (built-in types, conversion webhooks and spokes, multigroup, a moved
/// storage version, `--plural`, deleted APIs, the Helm chart), with no file added;
/// `src/main.rs` holds the same lines, in the order of the replay (every `create api`, then every
/// `create webhook`, as kubebuilder replays), which may not be the order the case ran them in.
#[test]
fn generate_reproduces_every_case_project() {
    let cases = cli::workspace_root().join("tests/cases");
    let mut names: Vec<String> = std::fs::read_dir(&cases)
        .expect("read tests/cases")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut checked = Vec::new();
    let mut failures = Vec::new();
    for name in names {
        let case = cases.join(&name);
        let Ok(cmd) = std::fs::read_to_string(case.join("cmd")) else {
            continue;
        };
        let lines: Vec<&str> = cmd
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        if case.join("in").exists() || lines.iter().any(|l| l.starts_with('@')) {
            continue;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("demo");
        std::fs::create_dir_all(&dir).expect("mkdir");
        for line in &lines {
            let out = cli::run(&dir, &cli::split_args(line));
            assert_eq!(out.code, 0, "{name}: `{line}` failed: {}", out.stderr);
        }
        let out = cli::run(&dir, &cli::split_args("alpha generate --output-dir ../out"));
        assert_eq!(out.code, 0, "{name}: alpha generate failed: {}", out.stderr);
        let input = cli::snapshot(&dir);
        let output = cli::snapshot(&tmp.path().join("out"));
        for (rel, bytes) in &input {
            match output.get(rel) {
                _ if written_by_manifests(rel) => {}
                Some(b) if rel == "src/main.rs" => {
                    if sorted_lines(b) != sorted_lines(bytes) {
                        failures.push(format!("{name}: src/main.rs has other lines"));
                    }
                }
                None => failures.push(format!("{name}: {rel} missing")),
                Some(b) if b != bytes => failures.push(format!(
                    "{name}: {rel} differs, {}",
                    cli::first_line_difference(
                        &String::from_utf8_lossy(bytes),
                        &String::from_utf8_lossy(b)
                    )
                )),
                Some(_) => {}
            }
        }
        for rel in output.keys() {
            if !input.contains_key(rel) && !written_by_manifests(rel) {
                failures.push(format!("{name}: {rel} added"));
            }
        }
        checked.push(name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for expected in [
        "create-api-core",
        "create-api-image",
        "create-api-multigroup",
        "create-api-storage-version",
        "create-webhook-conversion",
        "create-webhook-core",
        "create-webhook-paths",
        "delete-api",
        "edit-multigroup",
    ] {
        assert!(
            checked.iter().any(|c| c == expected),
            "{expected} was not replayed: {checked:?}"
        );
    }
}

/// With the Helm plugin, the replay copies the manifests PROJECT records and runs `edit
/// --plugins helm`: the re-scaffold's chart and PROJECT are the project's.
#[test]
fn generate_replays_the_helm_plugin() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    std::fs::create_dir_all(dir.join("dist")).expect("mkdir");
    let out = cli::run(&dir, &cli::split_args("init --domain example.com"));
    assert_eq!(out.code, 0, "init failed: {}", out.stderr);
    std::fs::write(dir.join("dist/install.yaml"), cli::MINIMAL_INSTALL).expect("write");
    let out = cli::run(&dir, &cli::split_args("edit --plugins helm"));
    assert_eq!(out.code, 0, "edit failed: {}", out.stderr);
    let out = cli::run(&dir, &cli::split_args("alpha generate --output-dir ../out"));
    assert_eq!(out.code, 0, "alpha generate failed: {}", out.stderr);
    assert!(
        out.stderr
            .contains("replay operator-gen edit --plugins helm --manifests dist/install.yaml"),
        "{}",
        out.stderr
    );
    let input = cli::snapshot(&dir);
    let output = cli::snapshot(&tmp.path().join("out"));
    let chart: Vec<&String> = input
        .keys()
        .filter(|k| k.starts_with("dist/chart/"))
        .collect();
    assert!(
        chart.iter().any(|k| k.as_str() == "dist/chart/values.yaml"),
        "{chart:?}"
    );
    for rel in chart {
        assert_eq!(output.get(rel), input.get(rel), "{rel}");
    }
    assert_eq!(output.get("PROJECT"), input.get("PROJECT"));
}

/// `alpha generate --output-dir` waits for a command holding the project's lock, then reads
/// `PROJECT` as that command left it: the test holds the lock (on the project directory, as the
/// CLI takes it), waits for the message that the command is waiting, adds a kind to the project
/// while still holding it (the files `create api --kind Sloop` writes), and releases it; the
/// output's `PROJECT` and types have Sloop.
#[test]
fn generate_with_output_dir_reads_the_project_after_taking_its_lock() {
    use std::io::{BufRead, BufReader, Read};
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("before/demo");
    let next = tmp.path().join("next/demo");
    for d in [&dir, &next] {
        std::fs::create_dir_all(d).expect("mkdir");
        for setup in [
            "init --domain example.com",
            "create api --group crew --version v1 --kind Captain",
        ] {
            let out = cli::run(d, &cli::split_args(setup));
            assert_eq!(out.code, 0, "`{setup}` failed: {}", out.stderr);
        }
    }
    let sloop = "create api --group crew --version v1 --kind Sloop";
    let out = cli::run(&next, &cli::split_args(sloop));
    assert_eq!(out.code, 0, "`{sloop}` failed: {}", out.stderr);

    let lock = std::fs::File::open(&dir).expect("open the project directory");
    lock.lock().expect("lock the project");
    let mut child = Command::new(cli::operator_gen_bin())
        .args(cli::split_args("alpha generate --output-dir ../out"))
        .current_dir(&dir)
        .env("OPERATOR_GEN_YEAR", cli::YEAR)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn operator-gen");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    let waiting = loop {
        let mut line = String::new();
        if err.read_line(&mut line).expect("read stderr") == 0 {
            break false;
        }
        seen.push_str(&line);
        if line.contains("waiting for it to finish") {
            break true;
        }
    };
    if !waiting {
        let _ = child.wait();
        panic!("alpha generate did not wait for the lock: {seen}");
    }
    // the command is blocked on the lock: the project changes as create api would change it
    cli::copy_dir(&next, &dir);
    lock.unlock().expect("unlock the project");
    err.read_to_string(&mut seen).expect("read stderr");
    let status = child.wait().expect("wait");
    assert!(status.success(), "alpha generate failed: {seen}");
    let out = tmp.path().join("before/out");
    assert!(
        read(&out, "PROJECT").contains("kind: Sloop"),
        "the output's PROJECT lacks Sloop: {}",
        read(&out, "PROJECT")
    );
    assert!(read(&out, "src/api/v1/sloop.rs").contains("pub struct SloopSpec"));
    // main.rs is written by the replay of PROJECT, not carried over
    assert!(read(&out, "src/main.rs").contains("controller::sloop::register"));
}
