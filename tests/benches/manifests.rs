//! Benchmark (not a test) of `operator-gen manifests` on generated projects of 10, 20, 100 and
//! 1000 kinds, with the kube-rs way of getting CRD YAML measured in the same run.
//!
//! Run it with
//!
//!     cargo bench -p operator-gen-tests --bench manifests
//!
//! Each project is made the way a user makes one, `operator-gen init` and one `operator-gen
//! create api` per kind (in process, in a temp dir). It prints, per size: the median time of
//! `operator_gen::manifests::generate` (scan + every emitter, in memory) and of the release
//! `operator-gen manifests` binary end to end (process start, scan, emit, write), in ms and in
//! ms per kind, then the growth ratio per kind 1000/10 (1.0 is linear). The target: 20
//! kinds under 50 ms, linear growth.
//!
//! The peer: kube-rs users get CRD YAML by compiling and running a `crdgen` binary that prints
//! each kind's `crd()`. The bench adds such a binary (calling the derive's `crd_yaml()`) to the
//! 10-kind project, builds it with cargo in the shared `target/generated-projects` directory
//! (where the CLI tests build generated projects), once as it comes and once more after touching
//! one API file (what every edit costs), runs it, and prints both against `operator-gen
//! manifests`. `BENCH_SKIP_CRDGEN=1` leaves the peer out; `BENCH_KINDS=10,100` picks sizes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use operator_gen::manifests::{self, ManifestsOptions};

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

/// A project made by `init` and `create api` for `kinds` kinds.
fn project(parent: &Path, kinds: usize) -> PathBuf {
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

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    let _ = f(); // warm-up: page cache, allocator
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(f());
                start.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// The release `operator-gen` binary, built in the shared target directory.
fn release_binary() -> PathBuf {
    let status = Command::new(cargo())
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

fn run_manifests_binary(bin: &Path, dir: &Path) {
    let out = Command::new(bin)
        .args(["--quiet", "manifests"])
        .current_dir(dir)
        .output()
        .expect("run operator-gen manifests");
    assert!(
        out.status.success(),
        "operator-gen manifests failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

struct Row {
    kinds: usize,
    library: Duration,
    binary: Duration,
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse
    let sizes: Vec<usize> = std::env::var("BENCH_KINDS")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10, 20, 100, 1000]);
    let tmp = tempfile::tempdir().expect("temp dir");
    let bin = release_binary();
    println!(
        "operator-gen manifests (median; library = scan + emitters in memory, binary = release process end to end)"
    );
    println!(
        "{:>6} {:>12} {:>14} {:>12} {:>14}",
        "kinds", "library ms", "library ms/k", "binary ms", "binary ms/k"
    );
    let mut rows = Vec::new();
    let mut ten = None;
    for &kinds in &sizes {
        let made = Instant::now();
        let dir = project(tmp.path(), kinds);
        let made = made.elapsed();
        let opts = ManifestsOptions::default();
        let runs = if kinds >= 1000 { 5 } else { 21 };
        let library = time(runs, || {
            let out = manifests::generate(&dir, &opts).expect("manifests");
            assert_eq!(
                out.keys()
                    .filter(|k| k.starts_with("config/crd/bases/"))
                    .count(),
                kinds
            );
            out
        });
        let binary = time(runs, || run_manifests_binary(&bin, &dir));
        println!(
            "{kinds:>6} {:>12.2} {:>14.4} {:>12.2} {:>14.4}   (project made in {:.1} s)",
            ms(library),
            ms(library) / kinds as f64,
            ms(binary),
            ms(binary) / kinds as f64,
            made.as_secs_f64()
        );
        if kinds == 10 {
            ten = Some(dir.clone());
        }
        rows.push(Row {
            kinds,
            library,
            binary,
        });
    }
    let per_kind = |r: &Row, d: Duration| ms(d) / r.kinds as f64;
    if let (Some(small), Some(large)) = (
        rows.iter().find(|r| r.kinds == 10),
        rows.iter().find(|r| r.kinds == 1000),
    ) {
        println!(
            "growth per kind 1000/10: library {:.2}, binary {:.2} (1.0 = linear)",
            per_kind(large, large.library) / per_kind(small, small.library),
            per_kind(large, large.binary) / per_kind(small, small.binary),
        );
    }
    if let Some(r) = rows.iter().find(|r| r.kinds == 20) {
        let verdict = if ms(r.binary) < 50.0 { "met" } else { "MISSED" };
        println!(
            "target 20 kinds under 50 ms: {verdict} (binary {:.2} ms, library {:.2} ms)",
            ms(r.binary),
            ms(r.library)
        );
    }
    if std::env::var_os("BENCH_SKIP_CRDGEN").is_none()
        && let (Some(dir), Some(r)) = (ten, rows.iter().find(|r| r.kinds == 10))
    {
        crdgen_peer(&dir, r.binary);
    }
}

/// The kube-rs way: a `crdgen` binary printing every kind's CRD, compiled, then run.
fn crdgen_peer(dir: &Path, ours: Duration) {
    let crate_name = std::fs::read_to_string(dir.join("Cargo.toml"))
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("name = ")
                    .map(|n| n.trim_matches('"').replace('-', "_"))
            })
        })
        .expect("package name");
    let api = dir.join("src/api/v1");
    let mut kinds: Vec<(String, String)> = std::fs::read_dir(&api)
        .expect("src/api/v1")
        .filter_map(|e| {
            let p = e.ok()?.path();
            let module = p.file_stem()?.to_str()?.to_string();
            let text = std::fs::read_to_string(&p).ok()?;
            let kind = text.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("kind = \"")?
                    .split('"')
                    .next()
                    .map(str::to_string)
            })?;
            Some((module, kind))
        })
        .collect();
    kinds.sort();
    let body: String = kinds
        .iter()
        .map(|(m, k)| {
            format!("    print!(\"{{}}\", {crate_name}::api::v1::{m}::{k}::crd_yaml());\n")
        })
        .collect();
    let bin_dir = dir.join("src/bin");
    std::fs::create_dir_all(&bin_dir).expect("src/bin");
    std::fs::write(
        bin_dir.join("crdgen.rs"),
        format!("//! kube-rs style: print every CRD.\n\nfn main() {{\n{body}}}\n"),
    )
    .expect("write crdgen.rs");
    let target = workspace().join("target/generated-projects");
    let build = || {
        let start = Instant::now();
        let status = Command::new(cargo())
            .args(["build", "--quiet", "--bin", "crdgen"])
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(dir)
            .status()
            .expect("cargo build --bin crdgen");
        assert!(status.success(), "crdgen does not build");
        start.elapsed()
    };
    let first = build();
    // an edit to one API file: what every `make manifests` after a change would cost
    let touched = api.join(format!("{}.rs", kinds[0].0));
    let text = std::fs::read_to_string(&touched).expect("api file");
    std::fs::write(&touched, format!("{text}\n// edited\n")).expect("touch api file");
    let rebuild = build();
    let exe = target.join("debug/crdgen");
    let run = time(5, || {
        let out = Command::new(&exe).output().expect("run crdgen");
        assert!(out.status.success(), "crdgen failed");
        out.stdout.len()
    });
    // the YAML is the same either way (the derive end-to-end test holds them to it)
    println!("peer, 10 kinds, kube-rs style crdgen (debug build in target/generated-projects):");
    println!(
        "  first build {:.0} ms, rebuild after one edit {:.0} ms, run {:.2} ms",
        ms(first),
        ms(rebuild),
        ms(run)
    );
    println!(
        "  crdgen (rebuild + run) / operator-gen manifests = {:.0}x; with the first build {:.0}x",
        (ms(rebuild) + ms(run)) / ms(ours),
        (ms(first) + ms(run)) / ms(ours)
    );
}
