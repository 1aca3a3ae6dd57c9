//! Interrupts and contention, through the test-only `OPERATOR_GEN_TEST_PAUSE_AFTER` hook, which
//! pauses a command after its Nth file operation so that the test SIGKILLs it there, for N = 1,
//! 2, ... until the command completes without pausing:
//!
//! - each command that writes a project through the journal (`init`, `init --existing`, `create
//!   api` plain, with `--image` and with `--from-crd`, `create webhook`, `manifests`, `delete
//!   api`, `edit --multigroup`, `edit --plugins` helm, grafana and autoupdate), killed after
//!   every file operation, leaves the tree exactly as it was before or after the command once
//!   recovered (at odd points through the library's recovery, at even ones by the re-run), and
//!   running the command again gives the after state;
//! - each command that writes outside the journal, in its world of `cli_faults.rs` (`alpha
//!   migrate`, `envtest use` with the stand-in `go`, `alpha generate` in place and with
//!   `--output-dir`), killed after every file operation of its own (the staging directory and
//!   what is written in it, the lock, the renames into place, the swap in place and the
//!   clean-ups; for `envtest use` also each `go build`, the binary it writes), leaves the old or
//!   the new world, but for the staging directories of `cli_faults`' `LEFTOVERS` table (checked
//!   at every point: at odd ones after the library's recovery, which finishes an interrupted
//!   swap in place; at even ones in that swap the re-run is what finishes it), and a re-run
//!   gives the new world exactly, those gone; each command leaves the old world at some points
//!   and the new one at others;
//! - `alpha update`, in `cli_faults`' git world, killed after every file operation of its
//!   journaled commit (not of its replay into a scratch directory), leaves the old or the new
//!   repository once recovered (both seen), and a re-run gives the new one;
//! - two `create api` for different kinds started together on one project both land: the
//!   second waits for the first.
//!
//! Each test prints the commands it killed and at how many file operations.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Stdio};

use operator_gen::printer::{Printer, Verbosity};
use operator_gen::transaction;
use operator_gen_tests::cli;

use super::cli_faults::{self as faults, COMMANDS, Fixture, Row, World};

const CAPTAIN: &str = "create api --group crew --version v1 --kind Captain";
const FRIGATE: &str = "create api --group crew --version v1 --kind Frigate";

use cli::{command, tree_differences as describe, tree_with_dirs as tree};

/// Start `args` paused after file operation `n`; `None` when the command finished first.
fn start_paused(dir: &Path, args: &str, n: u64) -> Option<(Child, BufReader<ChildStderr>)> {
    spawn_paused(command(dir, args), args, n)
}

/// Spawn `cmd` (a user's `args`) paused after file operation `n`; `None` when it finished first.
fn spawn_paused(mut cmd: Command, args: &str, n: u64) -> Option<(Child, BufReader<ChildStderr>)> {
    let mut child = cmd
        .env(transaction::PAUSE_AFTER, n.to_string())
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn operator-gen");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    if wait_for_line(&mut err, "paused after file operation", &mut seen) {
        return Some((child, err));
    }
    let status = child.wait().expect("wait");
    assert!(status.success(), "`{args}` failed without a pause: {seen}");
    None
}

/// Read `err` until a line containing `needle` (true) or the end (false); the lines go to `seen`.
fn wait_for_line(err: &mut BufReader<ChildStderr>, needle: &str, seen: &mut String) -> bool {
    loop {
        let mut line = String::new();
        match err.read_line(&mut line) {
            Ok(0) | Err(_) => return false,
            Ok(_) => {
                seen.push_str(&line);
                if line.contains(needle) {
                    return true;
                }
            }
        }
    }
}

struct Case {
    name: &'static str,
    setup: &'static [&'static str],
    /// Files written after the setup commands (path, contents).
    files: &'static [(&'static str, &'static str)],
    args: &'static str,
    /// Stderr of a re-run after the command already completed.
    done_again: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        name: "init",
        setup: &[],
        files: &[],
        args: "init",
        done_again: Some("target directory is already initialized"),
    },
    Case {
        name: "create api",
        setup: &["init"],
        files: &[],
        args: CAPTAIN,
        done_again: Some("API resource already exists"),
    },
    Case {
        name: "create webhook",
        setup: &["init", CAPTAIN],
        files: &[],
        args: "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation",
        done_again: Some("defaulting webhook already exists"),
    },
    Case {
        name: "manifests",
        setup: &["init", CAPTAIN],
        files: &[],
        args: "manifests",
        done_again: None,
    },
    Case {
        name: "delete api",
        setup: &["init", CAPTAIN, "manifests"],
        files: &[],
        args: "delete api --group crew --version v1 --kind Captain",
        done_again: Some("crew/v1 Captain is not in PROJECT"),
    },
    Case {
        name: "edit --multigroup",
        setup: &["init", CAPTAIN],
        files: &[],
        args: "edit --multigroup",
        done_again: Some("the project is already multigroup"),
    },
    Case {
        name: "edit --plugins helm",
        setup: &["init"],
        files: &[("dist/install.yaml", cli::MINIMAL_INSTALL)],
        args: "edit --plugins helm",
        done_again: None,
    },
    Case {
        name: "edit --plugins grafana",
        setup: &["init"],
        files: &[],
        args: "edit --plugins grafana",
        done_again: None,
    },
    Case {
        name: "edit --plugins autoupdate",
        setup: &["init"],
        files: &[],
        args: "edit --plugins autoupdate",
        done_again: None,
    },
    Case {
        name: "create api --image",
        setup: &["init"],
        files: &[],
        args: "create api --group crew --version v1 --kind Sloop --image busybox:1.36",
        done_again: Some("API resource already exists"),
    },
    Case {
        name: "create api --from-crd",
        setup: &["init"],
        files: &[("barge-crd.yaml", cli::BARGE_CRD)],
        args: "create api --from-crd barge-crd.yaml",
        done_again: Some("API resource already exists"),
    },
    Case {
        name: "init --existing",
        setup: &[],
        files: &[
            (
                "Cargo.toml",
                "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
            ),
            ("src/main.rs", "fn main() {}\n"),
        ],
        args: "init --existing",
        done_again: Some("target directory is already initialized"),
    },
];

#[test]
fn a_command_killed_at_any_file_operation_leaves_the_old_or_the_new_tree() {
    let quiet = Printer::new(Verbosity::Quiet);
    let mut report = Vec::new();
    for case in CASES {
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = tmp.path().join("base/demo");
        std::fs::create_dir_all(&base).expect("mkdir");
        for args in case.setup {
            let out = cli::run(&base, &cli::split_args(args));
            assert_eq!(out.code, 0, "setup `{args}`: {}", out.stderr);
        }
        for (rel, text) in case.files {
            let path = base.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        let before = tree(&base);
        let done = tmp.path().join("done/demo");
        cli::copy_dir(&base, &done);
        let out = cli::run(&done, &cli::split_args(case.args));
        assert_eq!(out.code, 0, "`{}`: {}", case.args, out.stderr);
        let after = tree(&done);
        assert_ne!(before, after, "`{}` changed nothing", case.args);

        let (mut rolled_back, mut rolled_forward) = (0, 0);
        let mut n = 1;
        loop {
            let dir = tmp.path().join(format!("kill-{n}/demo"));
            cli::copy_dir(&base, &dir);
            let Some((mut child, _err)) = start_paused(&dir, case.args, n) else {
                // The command finished before operation `n`: every point was covered.
                std::fs::remove_dir_all(dir.parent().expect("parent")).expect("clean up");
                break;
            };
            child.kill().expect("SIGKILL");
            child.wait().expect("wait");
            let what = format!("`{}` killed after file operation {n}", case.args);
            if n % 2 == 1 {
                // Odd points: recover through the library, then compare before re-running.
                transaction::recover(&dir, &quiet).expect("recover");
                let now = tree(&dir);
                if now == before {
                    rolled_back += 1;
                } else if now == after {
                    rolled_forward += 1;
                } else {
                    panic!(
                        "{what}: after recovery the tree is neither the old nor the new one: {}",
                        describe(&now, &after)
                    );
                }
            }
            // Re-running recovers (even points) and completes the command.
            let out = cli::run(&dir, &cli::split_args(case.args));
            let completed = out.code == 0
                || case
                    .done_again
                    .is_some_and(|m| out.code == 1 && out.stderr.contains(m));
            assert!(completed, "{what}: the re-run failed: {}", out.stderr);
            assert!(!out.stderr.contains("panicked"), "{what}: {}", out.stderr);
            let now = tree(&dir);
            assert!(
                now == after,
                "{what}: the re-run does not give the new tree: {}",
                describe(&now, &after)
            );
            std::fs::remove_dir_all(dir.parent().expect("parent")).expect("clean up");
            n += 1;
        }
        assert!(
            rolled_back > 0 && rolled_forward > 0,
            "{}: expected kills both before and after the point of no return, got {rolled_back} rolled back and {rolled_forward} rolled forward",
            case.name
        );
        report.push(format!(
            "{}: killed at each of {} file operations ({rolled_back} odd points rolled back, {rolled_forward} rolled forward)",
            case.name,
            n - 1
        ));
    }
    println!("{}", report.join("\n"));
}

/// The rows of [`COMMANDS`] that write outside the journal: each stages its output beside
/// where it goes and renames it into place (`alpha generate` in place swaps it in, entry by
/// entry).
const OUTSIDE_THE_JOURNAL: &[&str] = &["alpha migrate", "envtest use", "alpha generate"];

/// `alpha generate` into a new directory beside the project, `out/`, which it renames its
/// staging directory to.
const GENERATE_OUT: Row = Row {
    name: "alpha generate --output-dir",
    args: "alpha generate --output-dir ../out",
    world: World::Project,
    again: Some("is not empty"),
};

#[test]
fn a_staging_command_killed_at_any_file_operation_leaves_the_old_or_the_new_world() {
    let quiet = Printer::new(Verbosity::Quiet);
    let tmp = tempfile::tempdir().expect("tempdir");
    let rows: Vec<&Row> = COMMANDS
        .iter()
        .filter(|r| OUTSIDE_THE_JOURNAL.contains(&r.name))
        .chain([&GENERATE_OUT])
        .collect();
    let mut worlds: Vec<World> = rows.iter().map(|r| r.world).collect();
    worlds.sort();
    worlds.dedup();
    let fx = Fixture::of(tmp.path(), &worlds);
    let mut report = Vec::new();
    for row in rows {
        let args = row.args;
        let done = fx.fresh(tmp.path(), "done", row);
        let before = faults::tree(&done);
        let (code, err) = fx.run(&done, row);
        assert_eq!(code, 0, "`{args}`: {err}");
        let after = faults::tree(&done);
        assert_ne!(before, after, "`{args}` changed nothing");
        let (mut old, mut new, mut left, mut swaps) = (0, 0, 0, 0);
        let mut n = 1;
        loop {
            let dir = fx.fresh(tmp.path(), "kill", row);
            let Some((mut child, _err)) = spawn_paused(fx.command(&dir, row), args, n) else {
                // The command finished before operation `n`: every point was covered.
                break;
            };
            child.kill().expect("SIGKILL");
            child.wait().expect("wait");
            let what = format!("`{args}` killed after file operation {n}");
            let demo = dir.join("demo");
            if n % 2 == 1 && demo.is_dir() {
                // Odd points: recover through the library before comparing.
                transaction::recover(&demo, &quiet).expect("recover");
            }
            if transaction::swap::interrupted(&demo) {
                // Even points in the swap in place: the re-run is what recovers.
                assert!(n % 2 == 0, "{what}: the recovery left the swap unfinished");
                swaps += 1;
            } else {
                // Nothing else to recover: these commands leave no journal in the project.
                let (now, leftovers) = faults::settled(faults::tree(&dir));
                left += usize::from(!leftovers.is_empty());
                if now == before {
                    old += 1;
                } else if now == after {
                    new += 1;
                } else {
                    panic!(
                        "{what}: recovered, the world is neither the old nor the new one: {}",
                        describe(&now, &after)
                    );
                }
            }
            // Re-running recovers (even points in the swap) and completes the command.
            let (code, err) = fx.run(&dir, row);
            let completed = code == 0 || row.again.is_some_and(|m| code == 1 && err.contains(m));
            assert!(completed, "{what}: the re-run failed: {err}");
            assert!(!err.contains("panicked"), "{what}: {err}");
            let now = faults::tree(&dir);
            assert!(
                now == after,
                "{what}: the re-run does not give the new world: {}",
                describe(&now, &after)
            );
            n += 1;
        }
        assert!(
            old > 0 && new > 0,
            "{}: expected kills leaving both the old and the new world, got {old} old and {new} new",
            row.name
        );
        report.push(format!(
            "{}: killed after each of its {} file operations ({old} left the old world, {new} the new, {left} of them with a staging leftover the re-run removed, {swaps} a swap the re-run finished)",
            row.name,
            n - 1
        ));
    }
    println!("{}", report.join("\n"));
}

/// `alpha update` (in `cli_faults`' git world) SIGKILLed after every file operation of its
/// journaled commit (the journal, the work tree's files, then the branches, the checkout and
/// the index; not its replay into a scratch directory) leaves the old or the new repository
/// once recovered, and a re-run gives the new one.
#[test]
fn alpha_update_killed_at_any_file_operation_leaves_the_old_or_the_new_repository() {
    let quiet = Printer::new(Verbosity::Quiet);
    let tmp = tempfile::tempdir().expect("tempdir");
    let fx = Fixture::of(tmp.path(), &[World::Git]);
    let row = COMMANDS
        .iter()
        .find(|r| r.name == "alpha update")
        .expect("the alpha update row");
    let done = fx.fresh(tmp.path(), "done", row);
    let before = faults::tree(&done);
    let (code, err) = fx.run(&done, row);
    assert_eq!(code, 0, "alpha update: {err}");
    let after = faults::tree(&done);
    let (mut old, mut new) = (Vec::new(), Vec::new());
    let mut n = 1;
    loop {
        let dir = fx.fresh(tmp.path(), "kill", row);
        let Some((mut child, _err)) = spawn_paused(fx.command(&dir, row), row.args, n) else {
            assert!(
                faults::tree(&dir) == after,
                "alpha update ran past its last file operation"
            );
            break;
        };
        child.kill().expect("SIGKILL");
        child.wait().expect("wait");
        transaction::recover(&dir.join("demo"), &quiet).expect("recover");
        let now = faults::tree(&dir);
        if now == before {
            old.push(n);
        } else if now == after {
            new.push(n);
        } else {
            panic!(
                "alpha update killed after file operation {n}: recovered, the repository is neither the old nor the new one: {}",
                describe(&now, &after)
            );
        }
        let (code, err) = fx.run(&dir, row);
        let completed = code == 0 || row.again.is_some_and(|m| code == 1 && err.contains(m));
        assert!(completed, "after a kill at {n}, the re-run failed: {err}");
        let again = faults::tree(&dir);
        assert!(
            again == after,
            "after a kill at {n}, the re-run does not give the new repository: {}",
            describe(&again, &after)
        );
        n += 1;
    }
    println!(
        "alpha update killed after each of its {} file operations: the old repository after {old:?}, the new after {new:?}",
        n - 1
    );
    assert!(
        !old.is_empty() && !new.is_empty(),
        "no kill before or after the commit point"
    );
}

/// What both kinds leave in the project.
fn assert_both_kinds(dir: &Path, what: &str) {
    let read = |rel: &str| std::fs::read_to_string(dir.join(rel)).unwrap_or_default();
    let expected: &[(&str, &[&str])] = &[
        ("PROJECT", &["kind: Captain", "kind: Frigate"]),
        (
            "config/crd/kustomization.yaml",
            &[
                "- bases/crew.my.domain_captains.yaml",
                "- bases/crew.my.domain_frigates.yaml",
            ],
        ),
        (
            "config/samples/kustomization.yaml",
            &["- crew_v1_captain.yaml", "- crew_v1_frigate.yaml"],
        ),
        (
            "src/main.rs",
            &[
                "demo::controller::captain::register(&mut mgr);",
                "demo::controller::frigate::register(&mut mgr);",
            ],
        ),
        (
            "src/api/v1/mod.rs",
            &["pub mod captain;", "pub mod frigate;"],
        ),
        (
            "src/controller/mod.rs",
            &["pub mod captain;", "pub mod frigate;"],
        ),
    ];
    for (file, lines) in expected {
        let text = read(file);
        for line in *lines {
            assert!(
                text.contains(line),
                "{what}: {file} lacks {line:?}:\n{text}"
            );
        }
    }
}

#[test]
fn a_second_command_waits_for_the_first_and_both_land() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = tmp.path().join("base/demo");
    std::fs::create_dir_all(&base).expect("mkdir");
    let out = cli::run(&base, &cli::split_args("init"));
    assert_eq!(out.code, 0, "init: {}", out.stderr);

    // Held: the first is paused inside its commit while the second starts.
    let dir = tmp.path().join("held/demo");
    cli::copy_dir(&base, &dir);
    let (mut first, mut first_err) =
        start_paused(&dir, CAPTAIN, 3).expect("create api has more than 3 file operations");
    let mut second = command(&dir, FRIGATE).spawn().expect("spawn");
    let mut second_err = BufReader::new(second.stderr.take().expect("stderr"));
    let mut seen = String::new();
    assert!(
        wait_for_line(
            &mut second_err,
            "another operator-gen command is changing",
            &mut seen
        ),
        "the second command did not say it waits: {seen}"
    );
    first
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"\n")
        .expect("resume the first");
    let mut rest = String::new();
    wait_for_line(&mut first_err, "\u{0}", &mut rest);
    assert!(first.wait().expect("wait").success(), "first: {rest}");
    wait_for_line(&mut second_err, "\u{0}", &mut seen);
    assert!(second.wait().expect("wait").success(), "second: {seen}");
    assert_both_kinds(&dir, "held");

    // Raced: both started at once, several times.
    for trial in 0..6 {
        let dir = tmp.path().join(format!("race-{trial}/demo"));
        cli::copy_dir(&base, &dir);
        let spawn = |args: &str| command(&dir, args).spawn().expect("spawn");
        let (a, b) = (spawn(CAPTAIN), spawn(FRIGATE));
        for (child, args) in [(a, CAPTAIN), (b, FRIGATE)] {
            let out = child.wait_with_output().expect("wait");
            assert!(
                out.status.success(),
                "race {trial}: `{args}` failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_both_kinds(&dir, &format!("race {trial}"));
    }
    println!(
        "`{CAPTAIN}` held after file operation 3 while `{FRIGATE}` waited, then 6 races of the \
         two: both kinds landed every time"
    );
}
