//! Hostile files: a table of what a project may hold in place of a source file (a device, a
//! FIFO, a symlink loop or one leading out of the project, a huge or deeply nested file, text or
//! a name that is not UTF-8, a tree the user cannot write) × every command that reads a
//! project's files (`manifests`, `create api` plain and `--from-crd`, `create webhook`, `delete
//! api`, `edit --multigroup`, `edit --plugins` helm, grafana and autoupdate, `alpha generate`,
//! `init --existing` on the crate). Each run must end within a time bound, in a bounded address
//! space, without a panic or an abort; a refusal is one `error:` line naming the file and leaves
//! the project as it was. The commands that never read `src/main.rs` are listed with the reason
//! in [`NOT_READING_MAIN`]. Then the temporary files: a killed `manifests`' cache file is removed
//! by a later run, and `alpha generate` in place on a project it cannot write leaves nothing
//! beside it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::time::{Duration, Instant};

use operator_gen_tests::cli;

/// How long one command may run: each takes well under a second; a hang fails the row.
const LIMIT: Duration = Duration::from_secs(60);

/// The address space one command may use: a read that runs on fails instead of exhausting the
/// machine.
const MEMORY: u64 = 4 << 30;

const CAPTAIN: &str = "create api --group crew --version v1 --kind Captain";

/// The commands of the table: every command that reads a project's files.
const COMMANDS: &[&str] = &[
    "manifests",
    "create api --group crew --version v1 --kind Mate",
    "create webhook --group crew --version v1 --kind Captain --defaulting",
    "delete api --group crew --version v1 --kind Captain",
    "edit --multigroup",
    "create api --from-crd barge-crd.yaml",
    "edit --plugins helm",
    "edit --plugins grafana",
    "edit --plugins autoupdate",
    "alpha generate --output-dir ../generated",
    INIT_EXISTING,
];

/// The commands that never read `src/main.rs`, and why: a row that plants its hostile thing
/// there ([`Row::in_main`]) succeeds for them.
const NOT_READING_MAIN: &[(&str, &str)] = &[
    (
        "edit --plugins helm",
        "the chart is made from PROJECT and dist/install.yaml",
    ),
    (
        "edit --plugins grafana",
        "the dashboards are made from PROJECT",
    ),
    (
        "edit --plugins autoupdate",
        "the workflow is made from PROJECT",
    ),
    (
        "alpha generate --output-dir ../generated",
        "src/main.rs is the scaffold's: the output gets it anew from the templates",
    ),
];

/// `init --existing` runs on the crate without what init adds around it ([`without_project`]).
const INIT_EXISTING: &str = "init --existing";

/// What `init --existing` adds around a crate, taken out of the project before it runs.
const ADDED_BY_INIT: &[&str] = &["PROJECT", "Makefile", "hack/boilerplate.rs.txt", "config"];

/// The project as the crate `init --existing` starts from.
fn without_project(dir: &Path) {
    for rel in ADDED_BY_INIT {
        let path = dir.join(rel);
        if path.is_dir() {
            std::fs::remove_dir_all(path).expect("remove");
        } else {
            std::fs::remove_file(path).expect("remove");
        }
    }
}

/// What a command does with a hostile project.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Exits 1 with one `error:` line holding each fragment (the file's name among them), and
    /// changes nothing.
    Refused(&'static [&'static str]),
    /// Exits 0: the command never reads the hostile file, or reads it as defined.
    Succeeds,
}

/// One row: a hostile thing put in a fresh project (`outside` is a directory beside it), and
/// what each command does with it.
struct Row {
    what: &'static str,
    plant: fn(&Path, &Path),
    expect: fn(&str) -> Expect,
    /// Whether the commands run as a user who cannot write the tree.
    unprivileged: bool,
    /// Whether the hostile thing is in `src/main.rs` (see [`NOT_READING_MAIN`]).
    in_main: bool,
}

const MAIN: &str = "src/main.rs";

fn replace_main(dir: &Path, with: impl FnOnce(&Path)) {
    let main = dir.join(MAIN);
    std::fs::remove_file(&main).expect("remove main.rs");
    with(&main);
}

fn symlink(to: impl AsRef<Path>, at: &Path) {
    std::os::unix::fs::symlink(to, at).expect("symlink");
}

fn append(dir: &Path, rel: &str, bytes: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(rel))
        .expect("open for append");
    f.write_all(bytes).expect("append");
}

fn mkfifo(at: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(at)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfifo {} failed", at.display());
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            what: "src/main.rs a symlink to /dev/zero",
            plant: |dir, _| replace_main(dir, |main| symlink("/dev/zero", main)),
            expect: |_| {
                Expect::Refused(&[
                    "src/main.rs",
                    "symbolic link to /dev/zero, a character device, not a regular file",
                ])
            },
            unprivileged: false,
            in_main: true,
        },
        Row {
            what: "#[path = \"/dev/zero\"] mod zero; in src/main.rs",
            plant: |dir, _| append(dir, MAIN, b"\n#[path = \"/dev/zero\"]\nmod zero;\n"),
            // only the scan follows module declarations; the scaffold commands read no file
            // through them
            expect: |command| match command {
                "manifests" | INIT_EXISTING => {
                    Expect::Refused(&["/dev/zero:", "a character device, not a regular file"])
                }
                _ => Expect::Succeeds,
            },
            unprivileged: false,
            in_main: true,
        },
        Row {
            what: "src/main.rs a FIFO",
            plant: |dir, _| replace_main(dir, mkfifo),
            expect: |_| {
                Expect::Refused(&["src/main.rs", "a FIFO (named pipe), not a regular file"])
            },
            unprivileged: false,
            in_main: true,
        },
        Row {
            what: "src/main.rs a symlink loop",
            plant: |dir, _| replace_main(dir, |main| symlink("main.rs", main)),
            expect: |_| Expect::Refused(&["src/main.rs", "a symbolic link loop"]),
            unprivileged: false,
            in_main: true,
        },
        Row {
            what: "src/main.rs a symlink to a regular file outside the project",
            plant: |dir, outside| {
                std::fs::rename(dir.join(MAIN), outside.join("main.rs")).expect("move main.rs");
                symlink(outside.join("main.rs"), &dir.join(MAIN));
            },
            // read as the file it leads to; a command that changes it writes a regular file in
            // the project, never the file outside (checked after every row)
            expect: |_| Expect::Succeeds,
            unprivileged: false,
            in_main: true,
        },
        Row {
            what: "src/main.rs of 9 MiB",
            plant: |dir, _| {
                let mut comment = b"// ".to_vec();
                comment.resize(9 << 20, b'x');
                comment.push(b'\n');
                append(dir, MAIN, &comment);
            },
            expect: |_| Expect::Refused(&["src/main.rs", "more than the 8.0 MiB"]),
            unprivileged: false,
            in_main: true,
        },
        Row {
            what: "3,000 nested brackets in src/main.rs",
            plant: |dir, _| {
                let deep = format!("type Deep = {}{};\n", "(".repeat(3000), ")".repeat(3000));
                append(dir, MAIN, deep.as_bytes());
            },
            expect: |_| {
                Expect::Refused(&["src/main.rs:", "brackets nest more than 128 levels deep"])
            },
            unprivileged: false,
            in_main: true,
        },
        Row {
            what: "src/main.rs not UTF-8",
            plant: |dir, _| append(dir, MAIN, b"// caf\xe9\n"),
            expect: |_| Expect::Refused(&["src/main.rs", "not UTF-8 text"]),
            unprivileged: false,
            in_main: true,
        },
        Row {
            what: "a file named caf\\xe9.rs (not UTF-8) in src/api/v1",
            plant: |dir, _| {
                let mut name = dir.join("src/api/v1").into_os_string().into_vec();
                name.extend_from_slice(b"/caf\xe9.rs");
                std::fs::write(OsString::from_vec(name), "pub struct X;\n").expect("write");
            },
            // no module can be such a file (a module's name and a #[path] are UTF-8); only
            // `edit --multigroup`, which moves the directory's files, and `alpha generate`,
            // which carries them over, must name it
            expect: |command| match command {
                "edit --multigroup" | "alpha generate --output-dir ../generated" => {
                    Expect::Refused(&["src/api/v1/caf", "its name is not UTF-8"])
                }
                _ => Expect::Succeeds,
            },
            unprivileged: false,
            in_main: false,
        },
        Row {
            what: "a tree the user cannot write",
            plant: |dir, _| cli::make_read_only(dir),
            expect: |_| Expect::Refused(&["permission denied"]),
            unprivileged: true,
            in_main: false,
        },
    ]
}

/// What is at each path under `dir` (`target/` left out: build output and the scan's cache),
/// found without following a symlink or reading anything but a regular file.
fn snapshot(dir: &Path) -> BTreeMap<OsString, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<OsString, String>) {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).expect("under root").as_os_str();
            if rel == "target" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            let kind = meta.file_type();
            let mode = meta.permissions().mode();
            let what = if kind.is_dir() {
                walk(root, &path, out);
                format!("dir {mode:o}")
            } else if kind.is_symlink() {
                format!("link to {:?}", std::fs::read_link(&path).expect("readlink"))
            } else if kind.is_fifo() {
                format!("fifo {mode:o}")
            } else {
                let bytes = std::fs::read(&path).expect("read");
                format!("file {mode:o} {:x}", fingerprint(&bytes))
            };
            out.insert(rel.to_owned(), what);
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn fingerprint(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// A project with Captain in v1, made once: each run gets a copy.
fn base(tmp: &Path) -> std::path::PathBuf {
    let dir = tmp.join("base");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for args in ["init", CAPTAIN] {
        let out = cli::run(&dir, &cli::split_args(args));
        assert_eq!(out.code, 0, "`{args}` failed: {}", out.stderr);
    }
    // what `create api --from-crd` and `edit --plugins helm` read besides the sources
    std::fs::write(dir.join("barge-crd.yaml"), cli::BARGE_CRD).expect("write");
    std::fs::create_dir_all(dir.join("dist")).expect("mkdir");
    std::fs::write(dir.join("dist/install.yaml"), cli::MINIMAL_INSTALL).expect("write");
    dir
}

/// Write permission back on everything under `dir`, so that it can be removed.
fn make_writable(dir: &Path) {
    let _ = std::process::Command::new("chmod")
        .args(["-R", "u+w"])
        .arg(dir)
        .status();
}

/// Runs `command` on a copy of `base` with `row` planted; what is wrong, if anything.
fn try_one(base: &Path, row: &Row, command: &str, as_root: bool) -> Vec<String> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (dir, outside) = (tmp.path().join("demo"), tmp.path().join("outside"));
    cli::copy_dir(base, &dir);
    if command == INIT_EXISTING {
        without_project(&dir);
    }
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(outside.join("keep"), "").expect("write");
    (row.plant)(&dir, &outside);
    let (before, outside_before) = (snapshot(&dir), snapshot(&outside));
    let prefix = if row.unprivileged && as_root {
        cli::UNPRIVILEGED
    } else {
        &[]
    };
    let started = Instant::now();
    let out = cli::run_bounded(&dir, prefix, &cli::split_args(command), MEMORY, LIMIT);
    let took = started.elapsed();
    let (after, outside_after) = (snapshot(&dir), snapshot(&outside));
    make_writable(tmp.path());
    let expect = if row.in_main && NOT_READING_MAIN.iter().any(|(c, _)| *c == command) {
        Expect::Succeeds
    } else {
        (row.expect)(command)
    };
    let what = format!("{} × `{command}`", row.what);
    let Some(out) = out else {
        return vec![format!("{what}: still running after {LIMIT:?}; killed")];
    };
    let stderr = out.stderr.trim_end();
    println!(
        "{what}: exit {} in {took:.2?}: {}",
        out.code,
        stderr.lines().last().unwrap_or("")
    );
    let mut wrong = Vec::new();
    if stderr.contains("panicked") || stderr.contains("overflow") || out.code < 0 {
        wrong.push(format!("{what}: crashed (exit {}): {stderr}", out.code));
    }
    if outside_before != outside_after {
        wrong.push(format!("{what}: a file outside the project changed"));
    }
    match expect {
        Expect::Succeeds if out.code != 0 => {
            wrong.push(format!("{what}: exit {} instead of 0: {stderr}", out.code));
        }
        Expect::Succeeds => {}
        Expect::Refused(fragments) => {
            // the error is the last line; before it only `alpha generate` prints, its replay's
            // status lines
            let lines: Vec<&str> = stderr.lines().collect();
            let status =
                |l: &&str| command.starts_with("alpha generate") && l.starts_with("      replay ");
            let missing: Vec<&&str> = fragments.iter().filter(|f| !stderr.contains(*f)).collect();
            let (last, earlier) = lines.split_last().unwrap_or((&"", &[]));
            if out.code != 1 || !last.starts_with("error: ") || !earlier.iter().all(status) {
                wrong.push(format!(
                    "{what}: exit {} with {stderr:?}, not one `error:` line",
                    out.code
                ));
            }
            if !missing.is_empty() {
                wrong.push(format!("{what}: the error lacks {missing:?}: {stderr}"));
            }
            if before != after {
                wrong.push(format!("{what}: the project changed"));
            }
        }
    }
    wrong
}

#[test]
fn hostile_files_are_refused_by_name_in_bounded_time_and_change_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = base(tmp.path());
    let as_root = cli::running_as_root(tmp.path());
    let mut wrong = Vec::new();
    let mut tried = 0;
    for row in rows() {
        if row.unprivileged
            && as_root
            && !cli::setpriv_available("the row of a tree the user cannot write")
        {
            println!(
                "{}: skipped (root ignores permissions and setpriv is missing)",
                row.what
            );
            continue;
        }
        for command in COMMANDS {
            wrong.extend(try_one(&base, &row, command, as_root));
            tried += 1;
        }
    }
    println!("tried {tried} hostile projects");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_later_manifests_removes_the_temporary_files_a_killed_one_left() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = base(tmp.path());
    let manifests = || {
        let out = cli::run_bounded(&dir, &[], &cli::split_args("manifests"), MEMORY, LIMIT)
            .expect("manifests ended");
        assert_eq!(out.code, 0, "manifests failed: {}", out.stderr);
    };
    // run_bounded runs without CARGO_TARGET_DIR: the cache is in the project's target/
    manifests();
    let cache = dir.join("target/operator-gen/scan-cache");
    let record = cache.join("last-run");
    assert!(
        record.is_file(),
        "no record of the run in {}",
        cache.display()
    );
    // what a run killed while writing its record leaves, long ago, and one being written now
    let stale = cache.join(".last-run-K1LLED");
    let fresh = cache.join(".last-run-WRITNG");
    for f in [&stale, &fresh] {
        std::fs::write(f, "half a rec").expect("write");
    }
    let long_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .and_then(|f| f.set_modified(long_ago))
        .expect("age the stale file");
    // the killed run left no record: the next one runs and writes it
    std::fs::remove_file(&record).expect("remove the record");
    manifests();
    println!(
        "after a run: {} {}, {} {}",
        stale.display(),
        if stale.exists() { "kept" } else { "removed" },
        fresh.display(),
        if fresh.exists() { "kept" } else { "removed" }
    );
    assert!(!stale.exists(), "{} was left", stale.display());
    assert!(
        fresh.exists(),
        "{} (a minute old at most) was removed",
        fresh.display()
    );
}

#[test]
fn alpha_generate_in_place_on_a_project_it_cannot_write_leaves_nothing_beside_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = base(tmp.path());
    let parent = tmp.path().join("parent");
    let dir = parent.join("demo");
    cli::copy_dir(&base, &dir);
    cli::make_read_only(&dir);
    // the parent stays writable: the re-scaffold is staged there
    std::fs::set_permissions(&parent, std::os::unix::fs::PermissionsExt::from_mode(0o777))
        .expect("chmod");
    let as_root = cli::running_as_root(tmp.path());
    if as_root && !cli::setpriv_available("alpha generate on a read-only project") {
        make_writable(tmp.path());
        return;
    }
    let prefix = if as_root { cli::UNPRIVILEGED } else { &[] };
    let before = snapshot(&dir);
    let out = cli::run_bounded(
        &dir,
        prefix,
        &cli::split_args("alpha generate"),
        MEMORY,
        LIMIT,
    )
    .expect("alpha generate ended");
    let after = snapshot(&dir);
    let beside: Vec<OsString> = std::fs::read_dir(&parent)
        .expect("read parent")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    make_writable(tmp.path());
    println!(
        "alpha generate on a read-only project: exit {}: {}",
        out.code,
        out.stderr.trim()
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert!(
        matches!(errors[..], [e] if e.starts_with("error: cannot move ") && e.contains(&*dir.to_string_lossy()) && e.contains("permission denied")),
        "{}",
        out.stderr
    );
    assert_eq!(beside, [OsString::from("demo")], "left beside the project");
    assert!(before == after, "the project changed");
}

/// `alpha migrate`'s input: the Go types file of a kubebuilder project made hostile, and the
/// fragments its one `error:` line must hold (the file's name among them), or `None` where the
/// migration is defined to succeed.
type GoRow = (&'static str, fn(&Path), Option<&'static [&'static str]>);

const GO_ROWS: &[GoRow] = &[
    (
        "a symlink to /dev/zero",
        |go| symlink("/dev/zero", go),
        Some(&[cli::KB_TYPES_FILE, "a character device, not a regular file"]),
    ),
    (
        "a FIFO",
        |go| mkfifo(go),
        Some(&[
            cli::KB_TYPES_FILE,
            "a FIFO (named pipe), not a regular file",
        ]),
    ),
    (
        "a symlink loop",
        |go| symlink("captain_types.go", go),
        Some(&[cli::KB_TYPES_FILE, "a symbolic link loop"]),
    ),
    (
        "9 MiB",
        |go| {
            let mut text = cli::KB_TYPES.as_bytes().to_vec();
            text.extend_from_slice(b"// ");
            text.resize(9 << 20, b'x');
            std::fs::write(go, text).expect("write");
        },
        Some(&[cli::KB_TYPES_FILE, "more than the 8.0 MiB"]),
    ),
    (
        "3,000 nested brackets",
        |go| {
            let deep = format!("var deep = {}0{}\n", "(".repeat(3000), ")".repeat(3000));
            std::fs::write(go, format!("{}{deep}", cli::KB_TYPES)).expect("write");
        },
        // the Go reader takes the nesting: the constant is not a type, and the kind migrates
        None,
    ),
    (
        "not UTF-8",
        |go| {
            std::fs::write(go, [cli::KB_TYPES.as_bytes(), b"// caf\xe9\n"].concat()).expect("write")
        },
        Some(&[cli::KB_TYPES_FILE, "not UTF-8 text"]),
    ),
];

#[test]
fn alpha_migrate_refuses_a_hostile_go_file_by_name_and_writes_nothing() {
    let mut wrong = Vec::new();
    for (what, plant, fragments) in GO_ROWS {
        let tmp = tempfile::tempdir().expect("tempdir");
        let kb = tmp.path().join("kb");
        cli::kubebuilder_project(&kb);
        let go = kb.join(cli::KB_TYPES_FILE);
        std::fs::remove_file(&go).expect("remove");
        plant(&go);
        let before = snapshot(&kb);
        let args = cli::split_args("alpha migrate --input-dir kb --output-dir out");
        let out = cli::run_bounded(tmp.path(), &[], &args, MEMORY, LIMIT);
        let what = format!("{} {what} × `alpha migrate`", cli::KB_TYPES_FILE);
        let Some(out) = out else {
            wrong.push(format!("{what}: still running after {LIMIT:?}; killed"));
            continue;
        };
        let stderr = out.stderr.trim_end();
        println!(
            "{what}: exit {}: {}",
            out.code,
            stderr.lines().last().unwrap_or("")
        );
        if snapshot(&kb) != before {
            wrong.push(format!("{what}: the input changed"));
        }
        let Some(fragments) = *fragments else {
            if out.code != 0 || !tmp.path().join("out/PROJECT").is_file() {
                wrong.push(format!(
                    "{what}: exit {} without the output: {stderr}",
                    out.code
                ));
            }
            continue;
        };
        let lines: Vec<&str> = stderr.lines().collect();
        if out.code != 1 || lines.len() != 1 || !lines[0].starts_with("error: ") {
            wrong.push(format!(
                "{what}: exit {} with {stderr:?}, not one `error:` line",
                out.code
            ));
        }
        let missing: Vec<&&str> = fragments.iter().filter(|f| !stderr.contains(*f)).collect();
        if !missing.is_empty() {
            wrong.push(format!("{what}: the error lacks {missing:?}: {stderr}"));
        }
        let beside: Vec<OsString> = std::fs::read_dir(tmp.path())
            .expect("read dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        if beside != [OsString::from("kb")] {
            wrong.push(format!("{what}: wrote beside the input: {beside:?}"));
        }
    }
    println!("tried {} hostile Go projects", GO_ROWS.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
