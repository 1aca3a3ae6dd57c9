//! Benchmark (not a test: nothing here asserts a time) of `operator-gen manifests` against
//! controller-gen, each on projects made by its own tool with the same kinds.
//!
//! Run it with
//!
//!     cargo bench -p operator-gen-tests --bench manifests
//!
//! Per size (1, 20 and 200 kinds; `BENCH_KINDS=1,20` picks others) it makes two projects the
//! way a user makes them: ours with `operator-gen init` and one `operator-gen create api
//! --group fleet --version v1 --kind ShipN` per kind (in process), and a Go project with
//! `kubebuilder init` and the same `kubebuilder create api` calls (`--make=false`, then the
//! Makefile's `generate` step once). kubebuilder and controller-gen come from the tools cache,
//! built by `hack/tools/build.sh` (which the bench runs first; it does nothing when they are
//! fresh); the Go side runs offline (`GOPROXY=off`) on the module cache that script filled.
//!
//! It then times, as medians of whole processes:
//! - controller-gen: the Makefile's `manifests` command (`rbac:roleName=manager-role crd webhook
//!   paths="./..." output:crd:artifacts:config=config/crd/bases`), as it is and after a one-file
//!   edit (controller-gen has no cache, so the two match);
//! - the release `operator-gen manifests` binary: cold (its scan cache removed before each run),
//!   unchanged (cache warm), after a one-file edit (a comment added to one API file before each
//!   run, the same edit as controller-gen's), and after a one-file edit that changes what the
//!   file means to the scan (a type added to it, documented differently each time, so its
//!   summary changes and the scan runs), on a project whose manifests were written once and
//!   whose files then rested for 2.5 s, as a user's have between commands;
//!
//! and prints controller-gen's time over ours for cold, for the one-file edit and for the
//! edit that changes a type. With `BENCH_BASELINE=/path/to/operator-gen` (another build, an
//! earlier commit's say) it times that binary the same way in the same run, on a project of its
//! own, and prints its row beside this build's.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use operator_gen_tests::tools;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn cli(dir: &Path, args: &[&str]) {
    std::env::set_current_dir(dir).expect("cd into the project");
    let mut argv = vec!["operator-gen", "--quiet"];
    argv.extend_from_slice(args);
    let code = operator_gen::cli::run_from(argv.iter().copied());
    assert_eq!(code, 0, "operator-gen {} failed", args.join(" "));
}

/// A project made by our `init` and `create api` for `kinds` kinds.
fn ours(parent: &Path, kinds: usize) -> PathBuf {
    let dir = parent.join(format!("fleet{kinds}"));
    std::fs::create_dir_all(&dir).expect("project dir");
    let runtime = workspace().join("runtime");
    let runtime = runtime.to_string_lossy();
    cli(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--runtime-path",
            &runtime,
        ],
    );
    for i in 0..kinds {
        let kind = format!("Ship{i}");
        cli(
            &dir,
            &[
                "create",
                "api",
                "--group",
                "fleet",
                "--version",
                "v1",
                "--kind",
                &kind,
                "--resource=true",
                "--controller=true",
            ],
        );
    }
    dir
}

/// The Go toolchain's environment for the tools cache, offline.
fn go_env(cmd: &mut Command) -> &mut Command {
    let cache = tools::tools_bin()
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    cmd.env("GOMODCACHE", cache.join("go/mod"))
        .env("GOCACHE", cache.join("go/build"))
        .env("GOPROXY", "off")
        .env("GOSUMDB", "off")
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", "local")
        .env("CGO_ENABLED", "0")
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// kubebuilder and controller-gen, built (or found fresh) by `hack/tools/build.sh`.
fn go_tools() -> Option<(PathBuf, PathBuf)> {
    if Command::new("go").arg("version").output().is_err() {
        tools::skip_or_fail(
            "go not found on PATH: the controller-gen side needs it",
            "install Go (https://go.dev/dl) and put its bin directory on PATH",
        );
        return None;
    }
    let built = Command::new("bash")
        .arg(workspace().join("hack/tools/build.sh"))
        .args(["controller-gen", "kubebuilder"])
        .status();
    if !built.is_ok_and(|s| s.success()) {
        tools::skip_or_fail(
            "hack/tools/build.sh controller-gen kubebuilder failed",
            "hack/tools/build.sh controller-gen kubebuilder (see its output above)",
        );
        return None;
    }
    Some((
        tools::go_tool("kubebuilder")?,
        tools::go_tool("controller-gen")?,
    ))
}

/// A project made by `kubebuilder init` and `kubebuilder create api` for `kinds` kinds.
fn kubebuilder_project(parent: &Path, kinds: usize, kubebuilder: &Path, cg: &Path) -> PathBuf {
    let dir = parent.join(format!("fleet{kinds}-go"));
    std::fs::create_dir_all(&dir).expect("project dir");
    let repo = format!("example.com/fleet{kinds}");
    run(
        go_env(Command::new(kubebuilder).current_dir(&dir).args([
            "init",
            "--domain",
            "example.com",
            "--repo",
            &repo,
            "--skip-go-version-check",
        ])),
        "kubebuilder init",
    );
    for i in 0..kinds {
        let kind = format!("Ship{i}");
        run(
            go_env(Command::new(kubebuilder).current_dir(&dir).args([
                "create",
                "api",
                "--group",
                "fleet",
                "--version",
                "v1",
                "--kind",
                &kind,
                "--resource",
                "--controller",
                "--make=false",
            ])),
            "kubebuilder create api",
        );
    }
    // the Makefile's `generate`: DeepCopy methods, without which the API package does not
    // type-check
    run(
        go_env(
            Command::new(cg)
                .current_dir(&dir)
                .args(["object:headerFile=hack/boilerplate.go.txt", "paths=./..."]),
        ),
        "controller-gen object",
    );
    dir
}

/// The Makefile's `manifests` command of a kubebuilder project.
fn controller_gen_manifests(cg: &Path, dir: &Path) {
    run(
        go_env(Command::new(cg).current_dir(dir).args([
            "rbac:roleName=manager-role",
            "crd",
            "webhook",
            "paths=./...",
            "output:crd:artifacts:config=config/crd/bases",
        ])),
        "controller-gen manifests",
    );
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Median of `runs` timed calls of `f`, each after an untimed `prepare`, after one warm-up.
fn time(runs: usize, mut prepare: impl FnMut(), mut f: impl FnMut()) -> Duration {
    prepare();
    f();
    median(
        (0..runs)
            .map(|_| {
                prepare();
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The release `operator-gen` binary, built in the workspace's target directory.
fn release_binary() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--quiet",
            "-p",
            "operator-gen",
            "--bin",
            "operator-gen",
        ])
        .current_dir(workspace())
        .status()
        .expect("cargo build --release -p operator-gen");
    assert!(
        status.success(),
        "cargo build --release -p operator-gen failed"
    );
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"));
    target.join("release/operator-gen")
}

fn operator_gen_manifests(bin: &Path, dir: &Path) {
    run(
        Command::new(bin)
            .args(["--quiet", "manifests"])
            .current_dir(dir)
            .env_remove("CARGO_TARGET_DIR"),
        "operator-gen manifests",
    );
}

/// Changes `file` a little (a comment that differs each time), as an edit would.
fn edit(file: &Path, n: &mut usize, comment: &str) {
    *n += 1;
    let text = std::fs::read_to_string(file).expect("read the edited file");
    let base = text.split(comment).next().unwrap_or(&text).to_string();
    std::fs::write(file, format!("{base}{comment} {n}\n")).expect("edit the file");
}

/// `operator-gen manifests`'s medians on one project: cold, warm, after a comment edit and
/// after a type edit.
struct Ours {
    cold: Duration,
    warm: Duration,
    edited: Duration,
    typed: Duration,
}

fn measure_ours(bin: &Path, project: &Path, runs: usize) -> Ours {
    // a user's project between commands: its manifests written, and no file changed in the
    // last two seconds (`manifests` stamps no file younger than that, see `cli/src/manifests/cache/stamps.rs`)
    operator_gen_manifests(bin, project);
    std::thread::sleep(Duration::from_millis(2500));
    let cache = project.join("target/operator-gen");
    let cold = time(
        runs,
        || {
            let _ = std::fs::remove_dir_all(&cache);
        },
        || operator_gen_manifests(bin, project),
    );
    let warm = time(runs, || {}, || operator_gen_manifests(bin, project));
    let api_file = project.join("src/api/v1/ship0.rs");
    let mut n = 0;
    let edited = time(
        runs,
        || edit(&api_file, &mut n, "// bench edit"),
        || operator_gen_manifests(bin, project),
    );
    let typed = time(
        runs,
        || {
            edit(&api_file, &mut n, "/// bench type");
            let mut text = std::fs::read_to_string(&api_file).expect("read the edited file");
            text.push_str("pub struct BenchEdit;\n");
            std::fs::write(&api_file, text).expect("edit the file");
        },
        || operator_gen_manifests(bin, project),
    );
    Ours {
        cold,
        warm,
        edited,
        typed,
    }
}

/// controller-gen's medians on the kubebuilder project: as it is and after a one-file edit.
fn measure_controller_gen(cg: &Path, go: &Path) -> (Duration, Duration) {
    let cg_runs = 5;
    let plain = time(cg_runs, || {}, || controller_gen_manifests(cg, go));
    let types = go.join("api/v1/ship0_types.go");
    let mut m = 0;
    let edited = time(
        cg_runs,
        || edit(&types, &mut m, "// bench edit"),
        || controller_gen_manifests(cg, go),
    );
    (plain, edited)
}

/// One row of the table: `who`'s times and, with controller-gen's, the ratios.
fn print_row(kinds: usize, who: &str, ours: &Ours, cg: Option<(Duration, Duration)>) {
    let cells = |cg: Option<(Duration, Duration)>| match cg {
        Some((plain, edit)) => format!("{:>10.1} {:>10.1}", ms(plain), ms(edit)),
        None => format!("{:>10} {:>10}", "-", "-"),
    };
    let ratios = match cg {
        Some((plain, edit)) => format!(
            "{:>8.0}x {:>8.0}x {:>8.0}x",
            ms(plain) / ms(ours.cold),
            ms(edit) / ms(ours.edited),
            ms(edit) / ms(ours.typed),
        ),
        None => "  (controller-gen skipped)".to_owned(),
    };
    println!(
        "{kinds:>6} {who:>9} {} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {ratios}",
        cells(cg),
        ms(ours.cold),
        ms(ours.warm),
        ms(ours.edited),
        ms(ours.typed),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse
    let sizes: Vec<usize> = std::env::var("BENCH_KINDS")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 20, 200]);
    // another `operator-gen` binary (an earlier build, say) timed in the same run on a project
    // of its own made the same way, so that two builds compare side by side
    let baseline = std::env::var_os("BENCH_BASELINE").map(PathBuf::from);
    let tmp = tempfile::tempdir().expect("temp dir");
    let bin = release_binary();
    let peers = go_tools();
    println!("operator-gen manifests vs controller-gen v0.21.0 (median ms of whole processes)");
    if let Some(b) = &baseline {
        println!("baseline: {} (BENCH_BASELINE)", b.display());
    }
    println!(
        "{:>6} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "kinds",
        "binary",
        "cg",
        "cg edit",
        "ours cold",
        "ours warm",
        "ours edit",
        "ours type",
        "cold x",
        "edit x",
        "type x"
    );
    for &kinds in &sizes {
        let runs = if kinds >= 100 { 11 } else { 21 };
        let project = ours(tmp.path(), kinds);
        let measured = measure_ours(&bin, &project, runs);
        let earlier = baseline.as_ref().map(|b| {
            let dir = tmp.path().join("baseline");
            std::fs::create_dir_all(&dir).expect("baseline dir");
            measure_ours(b, &ours(&dir, kinds), runs)
        });
        let cg = peers.as_ref().map(|(kubebuilder, cg)| {
            measure_controller_gen(cg, &kubebuilder_project(tmp.path(), kinds, kubebuilder, cg))
        });
        print_row(kinds, "this", &measured, cg);
        if let Some(earlier) = &earlier {
            print_row(kinds, "baseline", earlier, cg);
        }
    }
    println!(
        "cold x = controller-gen / operator-gen without its cache; edit x = the same after a one-file edit (a comment); type x = after an edit that changes a type (controller-gen: its one-file edit)"
    );
}
