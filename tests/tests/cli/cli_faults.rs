//! Faults across commands, beside `cli_interrupt.rs` (commands killed after every file
//! operation; `alpha migrate`, `envtest use` and `alpha generate` there in this file's worlds)
//! and `cli_hostile.rs` (hostile files). Every command that writes is
//! a row of [`COMMANDS`], run in its world ([`World`]: the project; an empty directory for
//! `init`; a kubebuilder project for `alpha migrate` to write an output beside; an empty cache
//! and a stand-in `go` for `envtest use`; a git repository holding a project of the older
//! operator-gen for `alpha update`), and the whole world's tree is what is compared:
//!
//! - every pair of the commands of one world (each command with itself included), started
//!   together, ends as one of the two serial orders: the tree and both exit codes are those of
//!   running one and then the other;
//! - each command SIGKILLed at seeded pseudo-random times over its run leaves the old or the new
//!   tree once recovered (the staging directories of [`LEFTOVERS`] aside), and a re-run gives
//!   the new tree exactly; every row is killed ([`NOT_KILL_SAFE`], the rows left out, is empty);
//! - on a real tmpfs, filled so that only a few bytes to a few pages are left, each command
//!   either completes as on a roomy disk or fails with one line saying the disk is full, and
//!   leaves the tree as it was; remounted read-only, each refuses with one line saying the file
//!   system is read-only (or, with nothing to write, succeeds), and changes nothing.
//!
//! Each test prints what it tried.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use operator_gen::printer::{Printer, Verbosity};
use operator_gen::transaction;
use operator_gen_tests::{cli, older};

use cli::{GIT_DATE, tree_differences as differences};

/// The project of [`World::Project`]: one kind, its manifests not yet generated (so that
/// `manifests` has files to write).
const SETUP: &[&str] = &[
    "init",
    "create api --group crew --version v1 --kind Captain",
];

/// What a command starts from: a directory, its *world*, holding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum World {
    /// `demo/`, the project of [`SETUP`] with a CRD to import (`barge-crd.yaml`) and the
    /// release manifest the Helm plugin reads; the command runs in `demo/`.
    Project,
    /// `demo/`, an empty directory; the command runs in it.
    Empty,
    /// `kb/`, a kubebuilder v4 project of one kind ([`cli::kubebuilder_project`]); the command
    /// runs in the world and writes `demo/`.
    Kubebuilder,
    /// `cache/envtest/`, an empty cache (`OPERATOR_GEN_CACHE=cache`), with the stand-in
    /// [`FAKE_GO`] first on `PATH`; the command runs in the world.
    Cache,
    /// `demo/`, a project scaffolded by the older operator-gen of [`older`] (init, crew/v1
    /// Captain) committed on `main` of a git repository; the command runs in `demo/` with
    /// `--from-binary` that operator-gen, and git's commit dates fixed ([`GIT_DATE`]) so that
    /// two runs make the same commits. Git's state is compared by HEAD, the branches and `git
    /// status` (see [`tree`]).
    Git,
}

const WORLDS: &[World] = &[
    World::Project,
    World::Empty,
    World::Kubebuilder,
    World::Cache,
    World::Git,
];

/// A command that writes, as a user types it in its world; `again` is what a re-run after it
/// completed says, when it refuses (exit 1), else `None` (exit 0).
pub(super) struct Row {
    pub(super) name: &'static str,
    pub(super) args: &'static str,
    pub(super) world: World,
    pub(super) again: Option<&'static str>,
}

const fn row(
    name: &'static str,
    args: &'static str,
    world: World,
    again: Option<&'static str>,
) -> Row {
    Row {
        name,
        args,
        world,
        again,
    }
}

const API_EXISTS: Option<&str> = Some("API resource already exists");

/// The commands that write.
pub(super) const COMMANDS: &[Row] = &[
    row(
        "create api Frigate",
        "create api --group crew --version v1 --kind Frigate",
        World::Project,
        API_EXISTS,
    ),
    row(
        "create api Captain v2",
        "create api --group crew --version v2 --kind Captain",
        World::Project,
        API_EXISTS,
    ),
    row(
        "create webhook",
        "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation",
        World::Project,
        Some("defaulting webhook already exists"),
    ),
    row("manifests", "manifests", World::Project, None),
    row(
        "delete api",
        "delete api --group crew --version v1 --kind Captain",
        World::Project,
        Some("is not in PROJECT"),
    ),
    row(
        "edit --multigroup",
        "edit --multigroup",
        World::Project,
        Some("the project is already multigroup"),
    ),
    row(
        "edit --plugins helm",
        "edit --plugins helm",
        World::Project,
        None,
    ),
    // in place it leaves the old tree in `demo-backup`, which a second run will not replace
    row(
        "alpha generate",
        "alpha generate",
        World::Project,
        Some("exists from an earlier alpha generate"),
    ),
    row(
        "create api --image",
        "create api --group crew --version v1 --kind Sloop --image busybox:1.36",
        World::Project,
        API_EXISTS,
    ),
    row(
        "create api --from-crd",
        "create api --from-crd barge-crd.yaml",
        World::Project,
        API_EXISTS,
    ),
    row(
        "edit --plugins grafana",
        "edit --plugins grafana",
        World::Project,
        None,
    ),
    row(
        "edit --plugins autoupdate",
        "edit --plugins autoupdate",
        World::Project,
        None,
    ),
    row(
        "init",
        "init",
        World::Empty,
        Some("target directory is already initialized"),
    ),
    row(
        "alpha migrate",
        "alpha migrate --input-dir kb --output-dir demo",
        World::Kubebuilder,
        Some("is not empty"),
    ),
    row("envtest use", "envtest use", World::Cache, None),
    // a re-run on the merge branch it leaves checked out finds this version's cliVersion there
    row(
        "alpha update",
        "alpha update",
        World::Git,
        Some("so there is nothing to update"),
    ),
];

/// The rows the random kills leave out, and why: none now that `alpha update` checks out its
/// merge through the journal (`cli_interrupt.rs` kills it after every file operation as well).
const NOT_KILL_SAFE: &[(&str, &str)] = &[];

/// The staging directories a killed command may leave in its world (by path prefix), each
/// removed by the command's next run, and why recovery does not take them.
const LEFTOVERS: &[(&str, &str)] = &[
    (
        ".demo.operator-gen-migrate/",
        "alpha migrate writes its output there and renames it into place; a kill before the rename leaves it, and the next alpha migrate replaces it",
    ),
    (
        ".demo.operator-gen-generate/",
        "alpha generate writes the new tree there; a kill before the swap leaves it, and the next alpha generate replaces it",
    ),
    (
        ".out.operator-gen-generate/",
        "alpha generate --output-dir out writes the new tree there; a kill before the rename leaves it, and the next alpha generate --output-dir out replaces it",
    ),
    (
        "cache/envtest/.1.37.2.build.",
        "envtest use builds there and renames the directory into place; a kill before the rename leaves it, and the next build removes it",
    ),
];

/// A stand-in for `go` (no network, no compiler): `go env GOVERSION` prints a version, and
/// `go build ... -o OUT ...` waits a little, as a build does, then writes to OUT a small
/// executable that prints the kube-apiserver version.
const FAKE_GO: &str = "#!/bin/sh
case \"$1\" in
env) echo go1.26.0 ;;
build)
  while [ \"$#\" -gt 0 ]; do
    if [ \"$1\" = -o ]; then out=\"$2\"; fi
    shift
  done
  sleep 0.05
  printf '#!/bin/sh\\necho Kubernetes v1.37.2\\n' > \"$out\" || exit 1
  chmod +x \"$out\" || exit 1 ;;
*) exit 2 ;;
esac
";

/// The world `world` in `dir` (see [`World`]).
fn make_world(world: World, dir: &Path) {
    let demo = dir.join("demo");
    match world {
        World::Project => {
            std::fs::create_dir_all(&demo).expect("mkdir");
            for args in SETUP {
                let out = cli::run(&demo, &cli::split_args(args));
                assert_eq!(out.code, 0, "setup `{args}`: {}", out.stderr);
            }
            std::fs::write(demo.join("barge-crd.yaml"), cli::BARGE_CRD).expect("write");
            let install = demo.join("dist/install.yaml");
            std::fs::create_dir_all(install.parent().expect("parent")).expect("mkdir");
            std::fs::write(install, cli::MINIMAL_INSTALL).expect("write");
        }
        World::Empty => std::fs::create_dir_all(&demo).expect("mkdir"),
        World::Kubebuilder => {
            cli::kubebuilder_project(&dir.join("kb"));
        }
        World::Cache => std::fs::create_dir_all(dir.join("cache/envtest")).expect("mkdir"),
        World::Git => {
            let older = older::operator_gen().expect("the older operator-gen");
            std::fs::create_dir_all(&demo).expect("mkdir");
            for args in SETUP {
                let ok = Command::new(older)
                    .args(cli::split_args(args))
                    .current_dir(&demo)
                    .env("OPERATOR_GEN_YEAR", cli::YEAR)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "older `{args}` failed");
            }
            cli::git_commit_all(&demo);
        }
    }
}

/// What every test needs: each world made once (runs copy them), the stand-in `go` and the
/// older operator-gen (`None` after the skip rule where it cannot be built: its rows skip).
pub(super) struct Fixture {
    bases: BTreeMap<World, PathBuf>,
    go: PathBuf,
    older: Option<&'static Path>,
}

impl Fixture {
    fn new(tmp: &Path) -> Fixture {
        Fixture::of(tmp, WORLDS)
    }

    /// The fixture of the worlds `worlds` only (the older operator-gen built only for
    /// [`World::Git`]).
    pub(super) fn of(tmp: &Path, worlds: &[World]) -> Fixture {
        use std::os::unix::fs::PermissionsExt;
        let older = worlds
            .contains(&World::Git)
            .then(older::operator_gen)
            .flatten();
        let bases = worlds
            .iter()
            .filter(|w| **w != World::Git || older.is_some())
            .map(|w| {
                let dir = tmp.join(format!("base-{w:?}"));
                make_world(*w, &dir);
                (*w, dir)
            })
            .collect();
        let go = tmp.join("fake-go/bin");
        std::fs::create_dir_all(&go).expect("mkdir");
        std::fs::write(go.join("go"), FAKE_GO).expect("write");
        std::fs::set_permissions(go.join("go"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        Fixture { bases, go, older }
    }

    /// The rows of [`COMMANDS`] this machine can run.
    pub(super) fn rows(&self) -> impl Iterator<Item = &'static Row> + '_ {
        COMMANDS
            .iter()
            .filter(|r| self.bases.contains_key(&r.world))
    }

    /// A copy of `row`'s world at `<parent>/<name>`, replacing what was there.
    pub(super) fn fresh(&self, parent: &Path, name: &str, row: &Row) -> PathBuf {
        let dir = parent.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        cli::copy_dir(&self.bases[&row.world], &dir);
        dir
    }

    /// `row`'s command, to spawn in the world `world`.
    pub(super) fn command(&self, world: &Path, row: &Row) -> Command {
        match row.world {
            World::Project | World::Empty => cli::command(&world.join("demo"), row.args),
            World::Kubebuilder => cli::command(world, row.args),
            World::Cache => {
                let mut c = cli::command(world, row.args);
                c.env("OPERATOR_GEN_CACHE", world.join("cache"))
                    .env("PATH", format!("{}:/usr/bin:/bin", self.go.display()))
                    .env("HOME", world.join("home"))
                    .env("ENVTEST_BUILD_KUBECTL", "1")
                    .env_remove("XDG_CACHE_HOME")
                    .env_remove("XDG_DATA_HOME")
                    .env_remove("KUBEBUILDER_ASSETS")
                    .env_remove("GOFLAGS");
                c
            }
            World::Git => {
                let mut c = cli::command(&world.join("demo"), row.args);
                c.arg("--from-binary")
                    .arg(self.older.expect("the older operator-gen"))
                    .env("GIT_AUTHOR_DATE", GIT_DATE)
                    .env("GIT_COMMITTER_DATE", GIT_DATE);
                c
            }
        }
    }

    fn spawn(&self, world: &Path, row: &Row) -> Child {
        self.command(world, row).spawn().expect("spawn")
    }

    /// `row` run to the end in `world`.
    pub(super) fn run(&self, world: &Path, row: &Row) -> Outcome {
        finish(self.spawn(world, row))
    }
}

/// A command's exit code and stderr.
pub(super) type Outcome = (i32, String);

pub(super) fn finish(child: Child) -> Outcome {
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The world's tree (of [`cli::tree_with_dirs`]) without the project's `target/` (build output
/// and the scan's cache, not the project's sources).
pub(super) fn tree(world: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut tree = cli::tree_with_dirs(world);
    tree.retain(|path, _| !path.starts_with("demo/target/") && !path.starts_with("demo/.git/"));
    let repo = world.join("demo");
    if repo.join(".git").is_dir() {
        // git's state as a user sees it; its objects, index and logs are git's business
        for (name, args) in [
            ("HEAD", &["symbolic-ref", "HEAD"][..]),
            (
                "branches",
                &["for-each-ref", "--format=%(refname) %(objectname)"],
            ),
            ("status", &["--no-optional-locks", "status", "--porcelain"]),
        ] {
            tree.insert(format!("git {name}"), cli::git(&repo, args).into_bytes());
        }
    }
    tree
}

/// `tree` without the [`LEFTOVERS`], and their paths.
pub(super) fn settled(tree: BTreeMap<String, Vec<u8>>) -> (BTreeMap<String, Vec<u8>>, Vec<String>) {
    let (left, kept): (BTreeMap<_, _>, BTreeMap<_, _>) = tree
        .into_iter()
        .partition(|(k, _)| LEFTOVERS.iter().any(|(l, _)| k.starts_with(l)));
    (kept, left.into_keys().collect())
}

#[test]
fn every_pair_of_commands_started_together_ends_as_one_serial_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let fx = Fixture::new(tmp.path());
    let mut report = Vec::new();
    let rows: Vec<&Row> = fx.rows().collect();
    for (i, a) in rows.iter().enumerate() {
        for b in rows[i..].iter().filter(|b| b.world == a.world) {
            let pair = format!("{} | {}", a.name, b.name);
            // the two serial orders
            let mut orders = Vec::new();
            for (k, (first, second)) in [(a, b), (b, a)].into_iter().enumerate() {
                let dir = fx.fresh(tmp.path(), "serial", a);
                let one = fx.run(&dir, first).0;
                let two = fx.run(&dir, second).0;
                // codes keyed by the command's place in the pair, not the order it ran in
                let codes = if k == 0 { (one, two) } else { (two, one) };
                orders.push((codes, tree(&dir)));
            }
            let mut landed = [0usize; 2];
            for trial in 0..2 {
                let dir = fx.fresh(tmp.path(), "race", a);
                // each of the two spawned first once
                let (x, y) = if trial == 0 {
                    let x = fx.spawn(&dir, a);
                    (x, fx.spawn(&dir, b))
                } else {
                    let y = fx.spawn(&dir, b);
                    (fx.spawn(&dir, a), y)
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
                    let near: Vec<String> =
                        orders.iter().map(|(_, t)| differences(&now, t)).collect();
                    panic!(
                        "{pair}, race {trial}: exit codes ({xc}, {yc}) and the tree match neither \
                         serial order (serial codes {:?} and {:?}; against each: {near:?}); \
                         stderr:\n{xe}\n{ye}",
                        orders[0].0, orders[1].0
                    );
                };
                landed[k] += 1;
            }
            report.push(if orders[0] == orders[1] {
                format!("{pair}: 2 races, each as both serial orders (which agree)")
            } else {
                format!(
                    "{pair}: 2 races, {} as `{}` first, {} as `{}` first",
                    landed[0], a.name, landed[1], b.name
                )
            });
        }
    }
    println!(
        "{} pairs of {} commands raced:\n{}",
        report.len(),
        rows.len(),
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

#[test]
fn a_command_killed_at_random_times_leaves_the_old_or_the_new_tree() {
    const TRIALS: usize = 12;
    let quiet = Printer::new(Verbosity::Quiet);
    let tmp = tempfile::tempdir().expect("tempdir");
    let fx = Fixture::new(tmp.path());
    let mut seed = Seeded(0x005e_ed0f_fa17);
    let mut report = Vec::new();
    for row in fx.rows() {
        if let Some((_, why)) = NOT_KILL_SAFE.iter().find(|(name, _)| *name == row.name) {
            report.push(format!("{}: not killed: {why}", row.name));
            continue;
        }
        let args = row.args;
        let done = fx.fresh(tmp.path(), "done", row);
        let before = tree(&done);
        let start = Instant::now();
        let (code, err) = fx.run(&done, row);
        let took = start.elapsed();
        assert_eq!(code, 0, "`{args}`: {err}");
        let after = tree(&done);
        let (mut old, mut new, mut left) = (0, 0, 0);
        for trial in 0..TRIALS {
            let dir = fx.fresh(tmp.path(), "kill", row);
            // anywhere from the start to a little past the uninterrupted run's length
            let at = took.mul_f64(seed.next() * 1.2);
            let mut child = fx.spawn(&dir, row);
            std::thread::sleep(at);
            let _ = child.kill();
            let (_, err) = finish(child);
            let what = format!("`{args}` killed {at:?} in (trial {trial})");
            assert!(!err.contains("panicked"), "{what}: {err}");
            if dir.join("demo").is_dir() {
                transaction::recover(&dir.join("demo"), &quiet).expect("recover");
            }
            let (now, leftovers) = settled(tree(&dir));
            left += usize::from(!leftovers.is_empty());
            if now == before {
                old += 1;
            } else if now == after {
                new += 1;
            } else {
                panic!(
                    "{what}: recovered, the tree is neither the old nor the new one; against the \
                     new: {}",
                    differences(&now, &after)
                );
            }
            let (code, err) = fx.run(&dir, row);
            let completed = match row.again {
                None => code == 0,
                Some(m) => code == 0 || (code == 1 && err.contains(m)),
            };
            assert!(completed, "{what}: the re-run failed: {err}");
            let now = tree(&dir);
            assert!(
                now == after,
                "{what}: the re-run does not give the new tree: {}",
                differences(&now, &after)
            );
        }
        report.push(format!(
            "{}: {TRIALS} kills over its {took:?} run, {old} left the old tree, {new} the new, \
             {left} a staging directory the re-run removed",
            row.name
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
    let fx = Fixture::new(tmp.path());
    let Some(fs) = Tmpfs::mount(tmp.path(), "8m") else {
        return;
    };
    let filler = fs.0.join("filler");
    let mut report = Vec::new();
    for row in fx.rows() {
        let args = row.args;
        let roomy = fx.fresh(tmp.path(), "roomy", row);
        let before = tree(&roomy);
        let (code, err) = fx.run(&roomy, row);
        assert_eq!(code, 0, "`{args}`: {err}");
        let after = tree(&roomy);
        let (mut full, mut fit) = (0, 0);
        for left in [0u64, 2 << 10, 8 << 10, 32 << 10, 128 << 10, 2 << 20] {
            let _ = std::fs::remove_file(&filler);
            let dir = fx.fresh(&fs.0, "world", row);
            fill(&fs, &filler, left);
            let what = format!("`{args}` with {left} bytes left");
            let (code, err) = fx.run(&dir, row);
            assert!(!err.contains("panicked"), "{what}: {err}");
            let now = tree(&dir);
            if code == 0 {
                assert!(
                    now == after,
                    "{what}: completed, but not as on a roomy disk: {}",
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
            assert!(
                now == before,
                "{what}: the refusal changed the world: {}",
                differences(&now, &before)
            );
        }
        assert!(
            full > 0,
            "`{args}`: never ran out of room with 0 bytes left"
        );
        report.push(format!(
            "{}: 6 fill levels, {full} refused as a full disk with the tree unchanged, {fit} completed",
            row.name
        ));
    }

    let _ = std::fs::remove_file(&filler);
    // a world for each command, all made before the remount
    let worlds: Vec<(PathBuf, BTreeMap<String, Vec<u8>>)> = fx
        .rows()
        .enumerate()
        .map(|(i, row)| {
            let dir = fx.fresh(&fs.0, &format!("read-only-{i}"), row);
            let before = tree(&dir);
            (dir, before)
        })
        .collect();
    fs.remount("ro");
    for (row, (dir, before)) in fx.rows().zip(&worlds) {
        let what = format!("`{}` on a read-only file system", row.args);
        let (code, err) = fx.run(dir, row);
        assert!(!err.contains("panicked"), "{what}: {err}");
        // a command with nothing to write may succeed; one that must write refuses, saying why
        assert!(
            code == 0 || (code == 1 && err.contains("the file system is read-only")),
            "{what}: failed without saying the file system is read-only: {err}"
        );
        let now = tree(dir);
        assert!(now == *before, "{what}: {}", differences(&now, before));
        let verdict = if code == 0 {
            "had nothing to write"
        } else {
            "refused"
        };
        report.push(format!(
            "{}: {verdict} on the read-only mount, nothing changed",
            row.name
        ));
    }
    fs.remount("rw");
    println!("{}", report.join("\n"));
}
