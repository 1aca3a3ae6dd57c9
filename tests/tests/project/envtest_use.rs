//! `operator-gen envtest use`: a fresh cache is printed without running go (the real cache the
//! apiserver tests use, with a `go` on PATH that records being run), a complete cache is used
//! when go is missing, setup-envtest's directory serves a version operator-gen cannot build, and
//! without go and binaries the command fails with one line and writes nothing.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use operator_gen_tests::cli;

/// The version the embedded wrapper modules build.
const BUILDABLE: &str = "1.37.2";

/// Runs `operator-gen envtest use <args>` with only the given environment.
fn envtest_use(args: &[&str], env: &[(&str, OsString)]) -> cli::Output {
    let mut cmd = Command::new(cli::operator_gen_bin());
    cmd.env_clear()
        .arg("envtest")
        .arg("use")
        .args(args)
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run operator-gen");
    cli::Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `PATH` without the directories that hold a `go`.
fn path_without_go() -> Vec<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| !d.join("go").is_file())
        .collect()
}

#[test]
fn a_fresh_cache_is_printed_without_running_go() {
    let Some(assets) = operator_gen_envtest::require_assets() else {
        return;
    };
    if !cli::require_tool("go", &["version"], "install Go 1.26 or newer") {
        return;
    }
    // the cache the tests use: <root>/envtest/<version>, from hack/envtest/build.sh (this command)
    let assets = std::fs::canonicalize(&assets).expect("assets dir");
    assert_eq!(
        assets.file_name().and_then(|n| n.to_str()),
        Some(BUILDABLE),
        "KUBEBUILDER_ASSETS is not operator-gen's cache directory for {BUILDABLE}: {}",
        assets.display()
    );
    let root = assets
        .parent()
        .filter(|p| p.file_name() == Some("envtest".as_ref()))
        .and_then(Path::parent)
        .expect("the assets directory sits in <cache root>/envtest/");
    // a go that notes each run and fails (so a stale stamp can never start a real build into the
    // shared cache), beside a copy of the real toolchain's VERSION file
    let goroot = Command::new("go")
        .args(["env", "GOROOT"])
        .output()
        .expect("go env GOROOT");
    let goroot = PathBuf::from(String::from_utf8_lossy(&goroot.stdout).trim());
    let tmp = tempfile::tempdir().expect("tempdir");
    let fake = tmp.path().join("go");
    let ran = tmp.path().join("go-ran");
    executable(
        &fake.join("bin/go"),
        &format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", ran.display()),
    );
    std::fs::copy(goroot.join("VERSION"), fake.join("VERSION")).expect("copy VERSION");
    let mut path = vec![fake.join("bin")];
    path.extend(path_without_go());
    let out = envtest_use(
        &[],
        &[
            ("PATH", std::env::join_paths(&path).expect("PATH")),
            ("HOME", std::env::var_os("HOME").unwrap_or_default()),
            ("OPERATOR_GEN_CACHE", root.as_os_str().to_owned()),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!("{}\n", assets.display()),
        "{}",
        out.stderr
    );
    assert!(
        !ran.exists(),
        "envtest use ran go on a fresh cache: {}",
        std::fs::read_to_string(&ran).unwrap_or_default()
    );
    // the same with an explicit version, by minor and by patch
    for version in ["1.37", "v1.37.2", "1.37.x"] {
        let again = envtest_use(
            &["--k8s-version", version],
            &[
                ("PATH", std::env::join_paths(&path).expect("PATH")),
                ("OPERATOR_GEN_CACHE", root.as_os_str().to_owned()),
            ],
        );
        assert_eq!(again.stdout, out.stdout, "{version}: {}", again.stderr);
    }
    assert!(!ran.exists(), "envtest use ran go");
}

#[test]
fn without_go_a_complete_cache_is_used() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp
        .path()
        .join("cache/operator-gen/envtest")
        .join(BUILDABLE);
    for binary in ["etcd", "kube-apiserver", "kubectl"] {
        executable(&dir.join(binary), "#!/bin/sh\n");
    }
    std::fs::write(dir.join(".stamp"), "built elsewhere\n").expect("stamp");
    let out = envtest_use(
        &[],
        &[
            (
                "PATH",
                std::env::join_paths(path_without_go()).expect("PATH"),
            ),
            ("HOME", tmp.path().as_os_str().to_owned()),
            ("XDG_CACHE_HOME", tmp.path().join("cache").into_os_string()),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, format!("{}\n", dir.display()));
}

#[test]
fn setup_envtest_directories_serve_other_versions() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (os, arch) = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("macos", a) => ("darwin", a),
        (o, a) => (o, a),
    };
    let arch = match arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        a => a,
    };
    let data = if os == "darwin" {
        tmp.path()
            .join("Library/Application Support/io.kubebuilder.envtest/k8s")
    } else {
        tmp.path().join(".local/share/kubebuilder-envtest/k8s")
    };
    for version in ["1.30.0", "1.30.4", "1.31.1"] {
        let dir = data.join(format!("{version}-{os}-{arch}"));
        for binary in ["etcd", "kube-apiserver", "kubectl"] {
            executable(&dir.join(binary), "#!/bin/sh\n");
        }
    }
    let env = [
        (
            "PATH",
            std::env::join_paths(path_without_go()).expect("PATH"),
        ),
        ("HOME", tmp.path().as_os_str().to_owned()),
    ];
    for (asked, found) in [
        ("1.30", "1.30.4"),
        ("1.30.0", "1.30.0"),
        ("v1.31.x", "1.31.1"),
    ] {
        let out = envtest_use(&["--k8s-version", asked], &env);
        assert_eq!(out.code, 0, "{asked}: {}", out.stderr);
        assert_eq!(
            out.stdout,
            format!("{}\n", data.join(format!("{found}-{os}-{arch}")).display()),
            "{asked}"
        );
    }
    let missing = envtest_use(&["--k8s-version", "1.32"], &env);
    assert_eq!(missing.code, 1);
    assert!(
        missing.stderr.starts_with(
            "error: kubernetes 1.32 is neither in the cache nor in setup-envtest's directories"
        ),
        "{}",
        missing.stderr
    );
}

#[test]
fn without_go_or_binaries_it_fails_in_one_line_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).expect("mkdir");
    let out = envtest_use(
        &[],
        &[
            (
                "PATH",
                std::env::join_paths(path_without_go()).expect("PATH"),
            ),
            ("HOME", home.clone().into_os_string()),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        format!(
            "error: go not found on PATH, so etcd and kube-apiserver {BUILDABLE} cannot be built; install Go 1.26 or newer (https://go.dev/dl) and run `operator-gen envtest use` again\n"
        )
    );
    assert_eq!(
        std::fs::read_dir(&home).expect("read home").count(),
        0,
        "envtest use wrote into HOME"
    );
}
