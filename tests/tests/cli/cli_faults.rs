//! Faults across commands, beside `cli_interrupt.rs` (each command killed after every file
//! operation of its commit) and `cli_hostile.rs` (hostile files):
//!
//! - every pair of the commands that change a project (each command with itself included),
//!   started together on one project, ends as one of the two serial orders: the tree and both
//!   exit codes are those of running one and then the other;
//! - each command SIGKILLed at seeded pseudo-random times over its run leaves the old or the new
//!   tree once recovered, and a re-run gives the new tree;
//! - on a real tmpfs, filled so that only a few bytes to a few pages are left, each command
//!   either completes or fails with one line saying the disk is full, and leaves the tree as it
//!   was; remounted read-only, each refuses with one line saying the file system is read-only
//!   (or, with nothing to write, succeeds), and changes nothing.
//!
//! Each test prints what it tried.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use operator_gen::printer::{Printer, Verbosity};
use operator_gen::transaction;
use operator_gen_tests::cli;

use cli::tree_with_dirs as tree;

/// The project every row starts from: one kind, its manifests not yet generated (so that
/// `manifests` has files to write), the release manifest the Helm plugin reads and a CRD to
/// import.
const SETUP: &[&str] = &[
    "init",
    "create api --group crew --version v1 --kind Captain",
];

/// The commands that change a project, each as a user types it on the project of [`SETUP`].
const COMMANDS: &[(&str, &str)] = &[
    (
        "create api Frigate",
        "create api --group crew --version v1 --kind Frigate",
    ),
    (
        "create api Captain v2",
        "create api --group crew --version v2 --kind Captain",
    ),
    (
        "create webhook",
        "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation",
    ),
    ("manifests", "manifests"),
    (
        "delete api",
        "delete api --group crew --version v1 --kind Captain",
    ),
    ("edit --multigroup", "edit --multigroup"),
    ("edit --plugins helm", "edit --plugins helm"),
    ("alpha generate", "alpha generate"),
    (
        "create api --image",
        "create api --group crew --version v1 --kind Sloop --image busybox:1.36",
    ),
    (
        "create api --from-crd",
        "create api --from-crd barge-crd.yaml",
    ),
    ("edit --plugins grafana", "edit --plugins grafana"),
    ("edit --plugins autoupdate", "edit --plugins autoupdate"),
];

/// A small CRD of the project's group that `create api --from-crd` imports.
const BARGE_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
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

/// A project of [`SETUP`] in `dir`.
fn base_project(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    for args in SETUP {
        let out = cli::run(dir, &cli::split_args(args));
        assert_eq!(out.code, 0, "setup `{args}`: {}", out.stderr);
    }
    std::fs::write(dir.join("barge-crd.yaml"), BARGE_CRD).expect("write");
    let install = dir.join("dist/install.yaml");
    std::fs::create_dir_all(install.parent().expect("parent")).expect("mkdir");
    std::fs::write(install, cli::MINIMAL_INSTALL).expect("write");
}

/// `parent/<name>/demo`, with nothing in `parent/<name>` (`alpha generate` in place leaves its
/// backup beside the project).
fn fresh(parent: &Path, name: &str) -> PathBuf {
    let _ = std::fs::remove_dir_all(parent.join(name));
    parent.join(name).join("demo")
}

fn command(dir: &Path, args: &str) -> Command {
    let mut c = Command::new(cli::operator_gen_bin());
    c.args(cli::split_args(args))
        .current_dir(dir)
        .env("OPERATOR_GEN_YEAR", cli::YEAR)
        .env("NO_COLOR", "1")
        .env_remove("CARGO_TARGET_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// A command's exit code and the project's tree after it.
type Outcome = (i32, String);

/// Run `args` to the end in `dir`: its exit code and stderr.
fn finish(child: Child) -> Outcome {
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn differences(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

#[test]
fn every_pair_of_commands_started_together_ends_as_one_serial_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = tmp.path().join("base/demo");
    base_project(&base);
    let mut report = Vec::new();
    for (i, (a_name, a)) in COMMANDS.iter().enumerate() {
        for (b_name, b) in &COMMANDS[i..] {
            let pair = format!("{a_name} | {b_name}");
            // the two serial orders
            let mut orders = Vec::new();
            for (k, (first, second)) in [(a, b), (b, a)].into_iter().enumerate() {
                let dir = fresh(tmp.path(), "serial");
                cli::copy_dir(&base, &dir);
                let one = finish(command(&dir, first).spawn().expect("spawn")).0;
                let two = finish(command(&dir, second).spawn().expect("spawn")).0;
                // codes keyed by the command's place in the pair, not the order it ran in
                let codes = if k == 0 { (one, two) } else { (two, one) };
                orders.push((codes, tree(&dir)));
            }
            let mut landed = [0usize; 2];
            for trial in 0..2 {
                let dir = fresh(tmp.path(), "race");
                cli::copy_dir(&base, &dir);
                // each of the two spawned first once
                let (x, y) = if trial == 0 {
                    let x = command(&dir, a).spawn().expect("spawn");
                    (x, command(&dir, b).spawn().expect("spawn"))
                } else {
                    let y = command(&dir, b).spawn().expect("spawn");
                    (command(&dir, a).spawn().expect("spawn"), y)
                };
                let ((xc, xe), (yc, ye)) = (finish(x), finish(y));
                for err in [&xe, &ye] {
                    assert!(!err.contains("panicked"), "{pair}: {err}");
                }
                let now = tree(&dir);
                let Some(k) = orders
                    .iter()
                    .position(|(codes, t)| *codes == (xc, yc) && *t == now)
                else {
                    let near: Vec<Vec<String>> =
                        orders.iter().map(|(_, t)| differences(&now, t)).collect();
                    panic!(
                        "{pair}, race {trial}: exit codes ({xc}, {yc}) and the tree match neither \
                         serial order (serial codes {:?} and {:?}; files differing from each: \
                         {near:?}); stderr:\n{xe}\n{ye}",
                        orders[0].0, orders[1].0
                    );
                };
                landed[k] += 1;
            }
            report.push(if orders[0] == orders[1] {
                format!("{pair}: 2 races, each as both serial orders (which agree)")
            } else {
                format!(
                    "{pair}: 2 races, {} as `{a_name}` first, {} as `{b_name}` first",
                    landed[0], landed[1]
                )
            });
        }
    }
    println!(
        "{} pairs of {} commands raced:\n{}",
        report.len(),
        COMMANDS.len(),
        report.join("\n")
    );
}

/// A seeded xorshift: the same kill times on every run.
struct Seeded(u64);

impl Seeded {
    /// A fraction in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Re-running a command that already completed: its exit code is 0, or 1 with this message.
fn done_again(args: &str) -> Option<&'static str> {
    match args
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["create", "api"] => Some("API resource already exists"),
        ["create", "webhook"] => Some("defaulting webhook already exists"),
        ["delete", "api"] => Some("is not in PROJECT"),
        ["edit", "--multigroup"] => Some("the project is already multigroup"),
        // in place it leaves the old tree in `<dir>-backup`, which a second run will not replace
        ["alpha", "generate"] => Some("exists from an earlier alpha generate"),
        _ => None,
    }
}

#[test]
fn a_command_killed_at_random_times_leaves_the_old_or_the_new_tree() {
    const TRIALS: usize = 12;
    let quiet = Printer::new(Verbosity::Quiet);
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = tmp.path().join("base/demo");
    base_project(&base);
    let before = tree(&base);
    let mut seed = Seeded(0x005e_ed0f_fa17);
    let mut report = Vec::new();
    for (name, args) in COMMANDS {
        let done = fresh(tmp.path(), "done");
        cli::copy_dir(&base, &done);
        let start = Instant::now();
        let (code, err) = finish(command(&done, args).spawn().expect("spawn"));
        let took = start.elapsed();
        assert_eq!(code, 0, "`{args}`: {err}");
        let after = tree(&done);
        let (mut old, mut new) = (0, 0);
        for trial in 0..TRIALS {
            let dir = fresh(tmp.path(), "kill");
            cli::copy_dir(&base, &dir);
            // anywhere from the start to a little past the uninterrupted run's length
            let at = took.mul_f64(seed.next() * 1.2);
            let mut child = command(&dir, args).spawn().expect("spawn");
            std::thread::sleep(at);
            let _ = child.kill();
            let (_, err) = finish(child);
            let what = format!("`{args}` killed {at:?} in (trial {trial})");
            assert!(!err.contains("panicked"), "{what}: {err}");
            transaction::recover(&dir, &quiet).expect("recover");
            let now = tree(&dir);
            if now == before {
                old += 1;
            } else if now == after {
                new += 1;
            } else {
                panic!(
                    "{what}: recovered, the tree is neither the old nor the new one; differing \
                     from the new: {:?}",
                    differences(&now, &after)
                );
            }
            let out = cli::run(&dir, &cli::split_args(args));
            let completed = out.code == 0
                || done_again(args).is_some_and(|m| out.code == 1 && out.stderr.contains(m));
            assert!(completed, "{what}: the re-run failed: {}", out.stderr);
            assert!(
                tree(&dir) == after,
                "{what}: the re-run does not give the new tree: {:?}",
                differences(&tree(&dir), &after)
            );
        }
        report.push(format!(
            "{name}: {TRIALS} kills over its {took:?} run, {old} left the old tree, {new} the new"
        ));
    }
    println!("{}", report.join("\n"));
}

/// A tmpfs of `size` mounted at a new directory under `parent`, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// `None` (after the skip rule) where this process cannot mount one.
    fn mount(parent: &Path, size: &str) -> Option<Tmpfs> {
        let dir = parent.join("tmpfs");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            operator_gen_tests::tools::skip_or_fail(
                "cannot mount a tmpfs (needs root and mount); the full-disk and read-only rows need one",
                "run the tests as root, as CI does",
            );
            return None;
        }
        Some(Tmpfs(dir))
    }

    fn remount(&self, option: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,{option}")])
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "remount {option} {}", self.0.display());
    }

    /// Bytes free on it.
    fn free(&self) -> u64 {
        let out = Command::new("df")
            .args(["-B1", "--output=avail"])
            .arg(&self.0)
            .output()
            .expect("df");
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .expect("df's avail column")
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fill `fs` with a file at `filler` until `left` bytes are free (as near as its pages allow).
fn fill(fs: &Tmpfs, filler: &Path, left: u64) {
    let _ = std::fs::remove_file(filler);
    let free = fs.free();
    let size = free.saturating_sub(left);
    let file = std::fs::File::create(filler).expect("filler");
    // written, not set_len: a sparse file takes no room on tmpfs
    let chunk = vec![0u8; 64 << 10];
    let mut w = std::io::BufWriter::new(file);
    let mut n = 0;
    while n < size {
        let k = chunk.len().min((size - n) as usize);
        if std::io::Write::write_all(&mut w, &chunk[..k]).is_err() {
            break;
        }
        n += k as u64;
    }
    let _ = std::io::Write::flush(&mut w);
}

#[test]
fn on_a_full_or_read_only_disk_each_command_completes_or_says_why_and_changes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = tmp.path().join("base/demo");
    base_project(&base);
    let Some(fs) = Tmpfs::mount(tmp.path(), "8m") else {
        return;
    };
    let before = tree(&base);
    let filler = fs.0.join("filler");
    let mut report = Vec::new();
    for (name, args) in COMMANDS {
        let roomy = fresh(tmp.path(), "roomy");
        cli::copy_dir(&base, &roomy);
        let out = cli::run(&roomy, &cli::split_args(args));
        assert_eq!(out.code, 0, "`{args}`: {}", out.stderr);
        let after = tree(&roomy);
        let (mut full, mut fit) = (0, 0);
        for left in [0u64, 2 << 10, 8 << 10, 32 << 10, 128 << 10, 2 << 20] {
            let _ = std::fs::remove_file(&filler);
            let dir = fresh(&fs.0, "project");
            cli::copy_dir(&base, &dir);
            fill(&fs, &filler, left);
            let what = format!("`{args}` with {left} bytes left");
            let (code, err) = finish(command(&dir, args).spawn().expect("spawn"));
            assert!(!err.contains("panicked"), "{what}: {err}");
            if code == 0 {
                let now = tree(&dir);
                assert!(
                    now == after,
                    "{what}: completed, but not as on a roomy disk: {:?}",
                    differences(&now, &after)
                );
                fit += 1;
                continue;
            }
            full += 1;
            assert!(
                err.contains("the disk is full"),
                "{what}: failed without saying the disk is full: {err}"
            );
            assert_eq!(
                err.lines().filter(|l| l.starts_with("error")).count(),
                1,
                "{what}: not one error line: {err}"
            );
            let now = tree(&dir);
            assert!(
                now == before,
                "{what}: the refusal changed the project: {:?}",
                differences(&now, &before)
            );
        }
        assert!(
            full > 0,
            "`{args}`: never ran out of room with 0 bytes left"
        );
        report.push(format!(
            "{name}: 6 fill levels, {full} refused as a full disk with the tree unchanged, {fit} completed"
        ));
    }

    let _ = std::fs::remove_file(&filler);
    let dir = fresh(&fs.0, "project");
    cli::copy_dir(&base, &dir);
    fs.remount("ro");
    for (name, args) in COMMANDS {
        let what = format!("`{args}` on a read-only file system");
        let (code, err) = finish(command(&dir, args).spawn().expect("spawn"));
        assert!(!err.contains("panicked"), "{what}: {err}");
        // a command with nothing to write may succeed; one that must write refuses, saying why
        assert!(
            code == 0 || (code == 1 && err.contains("the file system is read-only")),
            "{what}: failed without saying the file system is read-only: {err}"
        );
        let now = tree(&dir);
        assert!(now == before, "{what}: {:?}", differences(&now, &before));
        let verdict = if code == 0 {
            "had nothing to write"
        } else {
            "refused"
        };
        report.push(format!(
            "{name}: {verdict} on the read-only mount, nothing changed"
        ));
    }
    fs.remount("rw");
    println!("{}", report.join("\n"));
}
