//! `operator-gen envtest use`: the directory of etcd, kube-apiserver and kubectl for
//! `KUBEBUILDER_ASSETS`, from the per-user cache, setup-envtest's directories, or a build from
//! the Go module proxy through the wrapper modules of `hack/envtest/` (embedded here). The
//! repository's `hack/envtest/build.sh` runs this command: one builder for its tests and for
//! generated projects.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Args;

use crate::error::{Error, Result};
use crate::printer::Printer;
use crate::transaction::Steps;

/// Flags of `envtest use`.
#[derive(Debug, Args)]
pub struct EnvtestUseArgs {
    /// The Kubernetes version of the binaries (`1.37.2`, `1.37`, `v1.37.x`); default: the one
    /// operator-gen builds.
    #[arg(long, value_name = "VERSION")]
    pub k8s_version: Option<String>,
}

/// One file of the wrapper modules, by its path under `hack/envtest/`.
struct Embedded {
    path: &'static str,
    text: &'static str,
}

macro_rules! embedded {
    ($path:literal) => {
        Embedded {
            path: $path,
            text: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../hack/envtest/",
                $path
            )),
        }
    };
}

/// The kube-apiserver (and kubectl) wrapper module, in the order the stamp hashes it.
const KUBE_MODULE: &[Embedded] = &[
    embedded!("kubernetes/go.mod"),
    embedded!("kubernetes/go.sum"),
    embedded!("kubernetes/kube-apiserver/main.go"),
    embedded!("kubernetes/kubectl/main.go"),
];

/// The etcd wrapper module, in the order the stamp hashes it.
const ETCD_MODULE: &[Embedded] = &[
    embedded!("etcd/go.mod"),
    embedded!("etcd/go.sum"),
    embedded!("etcd/main.go"),
];

/// The binaries of an assets directory.
pub const BINARIES: &[&str] = &["etcd", "kube-apiserver", "kubectl"];

/// The file beside the binaries naming what they were built from.
pub const STAMP: &str = ".stamp";

/// What the embedded wrapper modules build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buildable {
    /// `v1.37.2`.
    pub kubernetes: String,
    /// `v3.7.0`.
    pub etcd: String,
}

impl Buildable {
    /// The versions the embedded `go.mod` files require.
    pub fn embedded() -> Result<Buildable> {
        let kubernetes = require_version(KUBE_MODULE[0].text, "k8s.io/kubernetes")?;
        let etcd = require_version(ETCD_MODULE[0].text, "go.etcd.io/etcd/server/v3")?;
        Ok(Buildable { kubernetes, etcd })
    }

    /// `1.37.2`: the cache directory's name.
    pub fn version(&self) -> &str {
        self.kubernetes.trim_start_matches('v')
    }
}

/// The version `go.mod` requires of `module`.
fn require_version(go_mod: &str, module: &str) -> Result<String> {
    go_mod
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let first = words.next()?;
            let name = if first == "require" {
                words.next()?
            } else {
                first
            };
            let version = words.next()?;
            (name == module && version.starts_with('v')).then(|| version.to_owned())
        })
        .next()
        .ok_or_else(|| {
            Error::msg(format!(
                "the embedded wrapper module requires no {module}; rebuild operator-gen from a checkout whose hack/envtest is intact"
            ))
        })
}

/// The environment the command reads, so tests can give their own.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// `PATH`.
    pub path: Option<OsString>,
    /// `OPERATOR_GEN_CACHE`: the cache root.
    pub cache: Option<PathBuf>,
    /// `XDG_CACHE_HOME`.
    pub xdg_cache: Option<PathBuf>,
    /// `XDG_DATA_HOME`: setup-envtest's data root.
    pub xdg_data: Option<PathBuf>,
    /// `KUBEBUILDER_ASSETS`.
    pub assets: Option<PathBuf>,
    /// `ENVTEST_BUILD_KUBECTL=1`: build kubectl even when the machine has one.
    pub build_kubectl: bool,
}

impl Env {
    /// The process's environment.
    pub fn from_process() -> Env {
        let dir = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Env {
            home: dir("HOME"),
            path: std::env::var_os("PATH"),
            cache: dir("OPERATOR_GEN_CACHE"),
            xdg_cache: dir("XDG_CACHE_HOME"),
            xdg_data: dir("XDG_DATA_HOME"),
            assets: dir("KUBEBUILDER_ASSETS"),
            build_kubectl: std::env::var("ENVTEST_BUILD_KUBECTL").is_ok_and(|v| v == "1"),
        }
    }

    /// The cache root: `OPERATOR_GEN_CACHE`, else `$XDG_CACHE_HOME/operator-gen`, else
    /// `$HOME/.cache/operator-gen`.
    pub fn cache_root(&self) -> Result<PathBuf> {
        if let Some(root) = &self.cache {
            return Ok(root.clone());
        }
        if let Some(xdg) = &self.xdg_cache {
            return Ok(xdg.join("operator-gen"));
        }
        match &self.home {
            Some(home) => Ok(home.join(".cache/operator-gen")),
            None => Err(Error::msg(
                "neither HOME nor XDG_CACHE_HOME is set, so there is no cache for the envtest binaries; set HOME or OPERATOR_GEN_CACHE",
            )),
        }
    }

    /// setup-envtest's directory of versions (`<data>/kubebuilder-envtest/k8s`).
    fn setup_envtest_root(&self) -> Option<PathBuf> {
        let data = match &self.xdg_data {
            Some(dir) => dir.clone(),
            None if cfg!(target_os = "macos") => {
                self.home.as_ref()?.join("Library/Application Support")
            }
            None => self.home.as_ref()?.join(".local/share"),
        };
        let name = if cfg!(target_os = "macos") {
            "io.kubebuilder.envtest"
        } else {
            "kubebuilder-envtest"
        };
        Some(data.join(name).join("k8s"))
    }

    /// The first executable `name` on `PATH`, as the shell's `command -v` finds it.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        self.which_outside(name, None)
    }

    /// [`which`](Self::which), passing over the directory `skip`.
    fn which_outside(&self, name: &str, skip: Option<&Path>) -> Option<PathBuf> {
        let skip = skip.and_then(|s| std::fs::canonicalize(s).ok());
        std::env::split_paths(self.path.as_ref()?)
            .filter(|dir| !dir.as_os_str().is_empty())
            .filter(|dir| skip.is_none() || std::fs::canonicalize(dir).ok() != skip)
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
    }
}

/// A requested version: `1.37.2`, or a minor (`1.37`, `1.37.x`) matching any patch.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Wanted {
    minor: String,
    patch: Option<String>,
}

impl Wanted {
    fn parse(text: &str) -> Result<Wanted> {
        let bare = text.trim().trim_start_matches('v');
        let parts: Vec<&str> = bare.split('.').collect();
        let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        match parts.as_slice() {
            [major, minor] if number(major) && number(minor) => Ok(Wanted {
                minor: format!("{major}.{minor}"),
                patch: None,
            }),
            [major, minor, "x"] if number(major) && number(minor) => Ok(Wanted {
                minor: format!("{major}.{minor}"),
                patch: None,
            }),
            [major, minor, patch] if number(major) && number(minor) && number(patch) => {
                Ok(Wanted {
                    minor: format!("{major}.{minor}"),
                    patch: Some((*patch).to_owned()),
                })
            }
            _ => Err(Error::msg(format!(
                "--k8s-version {text} is not a kubernetes version; pass e.g. --k8s-version 1.37.2 or 1.37"
            ))),
        }
    }

    /// Whether `version` (`1.37.2`, maybe `v`-prefixed) is this one.
    fn matches(&self, version: &str) -> bool {
        let version = version.trim_start_matches('v');
        match &self.patch {
            Some(patch) => version == format!("{}.{patch}", self.minor),
            None => version
                .strip_prefix(&self.minor)
                .is_some_and(|rest| rest.starts_with('.')),
        }
    }
}

/// Runs `envtest use`: prints the assets directory on stdout.
pub fn run(args: &EnvtestUseArgs, printer: &Printer) -> Result<()> {
    let dir = assets_dir(args.k8s_version.as_deref(), &Env::from_process(), printer)?;
    printer.out(&format!("{}\n", dir.display()));
    Ok(())
}

/// The assets directory for `version` (default: the buildable one), built when missing.
pub fn assets_dir(version: Option<&str>, env: &Env, printer: &Printer) -> Result<PathBuf> {
    let buildable = Buildable::embedded()?;
    let wanted = match version {
        Some(v) => Wanted::parse(v)?,
        None => Wanted::parse(buildable.version())?,
    };
    let ours = wanted.matches(buildable.version());
    let cache = env.cache_root()?.join("envtest").join(buildable.version());
    if ours && complete(&cache) {
        match env.which("go") {
            Some(go) => {
                // the Go version from the toolchain's VERSION file: no go process when fresh
                let go_version = match go_version_file(&go) {
                    Some(v) => v,
                    None => go_env_version(&go)?,
                };
                if read_stamp(&cache).as_deref()
                    == Some(stamp(&buildable, &kubectl_choice(env, &cache), &go_version).as_str())
                {
                    return Ok(cache);
                }
            }
            None => {
                // nothing could rebuild them; a complete directory with a stamp is used as built
                if cache.join(STAMP).is_file() {
                    return Ok(cache);
                }
            }
        }
    }
    if let Some(dir) = setup_envtest_dir(&wanted, env) {
        return Ok(dir);
    }
    if let Some(dir) = env.assets.as_ref().filter(|d| assets_of(d, &wanted)) {
        return Ok(dir.clone());
    }
    if !ours {
        let requested = version.unwrap_or_default();
        return Err(Error::msg(format!(
            "kubernetes {requested} is neither in the cache nor in setup-envtest's directories, and operator-gen builds only {}; pass --k8s-version {}, or install {requested} with `setup-envtest use {requested}`",
            buildable.version(),
            buildable.version()
        )));
    }
    let Some(go) = env.which("go") else {
        return Err(Error::msg(format!(
            "go not found on PATH, so etcd and kube-apiserver {} cannot be built; install Go 1.26 or newer (https://go.dev/dl) and run `operator-gen envtest use` again",
            buildable.version()
        )));
    };
    build(&buildable, &go, &cache, env, printer)?;
    Ok(cache)
}

/// The three binaries are there.
fn complete(dir: &Path) -> bool {
    BINARIES.iter().all(|b| is_executable(&dir.join(b)))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

fn read_stamp(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join(STAMP))
        .ok()
        .map(|s| s.trim().to_owned())
}

/// What kubectl the assets directory `out` gets: the machine's (its path on PATH, not `out`'s
/// own, which a user may have put on PATH) or `built`.
fn kubectl_choice(env: &Env, out: &Path) -> String {
    match env
        .which_outside("kubectl", Some(out))
        .filter(|_| !env.build_kubectl)
    {
        Some(path) => path.to_string_lossy().into_owned(),
        None => "built".to_owned(),
    }
}

/// The stamp: a SHA-256 over the versions, the kubectl choice, every wrapper file and the Go
/// version, in that order (the order the stamps of caches built before this command were
/// written in, so those caches stay fresh).
pub fn stamp(buildable: &Buildable, kubectl: &str, go_version: &str) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    ctx.update(
        format!(
            "k8s={} etcd={} kubectl={kubectl}\n",
            buildable.kubernetes, buildable.etcd
        )
        .as_bytes(),
    );
    for file in KUBE_MODULE.iter().chain(ETCD_MODULE) {
        ctx.update(file.text.as_bytes());
    }
    ctx.update(format!("{go_version}\n").as_bytes());
    ctx.finish()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `go1.26.8` from `<GOROOT>/VERSION` beside `<GOROOT>/bin/go`.
fn go_version_file(go: &Path) -> Option<String> {
    let real = std::fs::canonicalize(go).ok()?;
    let root = real.parent()?.parent()?;
    let text = std::fs::read_to_string(root.join("VERSION")).ok()?;
    text.lines()
        .next()
        .map(str::trim)
        .filter(|l| l.starts_with("go"))
        .map(str::to_owned)
}

fn go_env_version(go: &Path) -> Result<String> {
    let out = Command::new(go)
        .args(["env", "GOVERSION"])
        .output()
        .map_err(|e| {
            Error::msg(format!(
                "cannot run {} env GOVERSION: {e}; check the Go installation",
                go.display()
            ))
        })?;
    if !out.status.success() {
        return Err(Error::msg(format!(
            "{} env GOVERSION failed: {}; check the Go installation",
            go.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// setup-envtest's `<version>-<os>-<arch>` directory for `wanted` with the binaries, the
/// newest patch when only a minor is wanted.
fn setup_envtest_dir(wanted: &Wanted, env: &Env) -> Option<PathBuf> {
    let root = env.setup_envtest_root()?;
    let suffix = format!("-{}-{}", go_os(), go_arch());
    let mut found: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(&root)
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let version = name.strip_suffix(&suffix)?.to_owned();
            let dir = entry.path();
            (wanted.matches(&version)
                && dir.join("kube-apiserver").is_file()
                && dir.join("etcd").is_file())
            .then(|| (crate::project::versions::numbers(&version), dir))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, dir)| dir)
}

/// `KUBEBUILDER_ASSETS` holds etcd and a kube-apiserver of the wanted version.
fn assets_of(dir: &Path, wanted: &Wanted) -> bool {
    let apiserver = dir.join("kube-apiserver");
    if !dir.join("etcd").is_file() || !apiserver.is_file() {
        return false;
    }
    // `Kubernetes v1.37.2`
    Command::new(&apiserver)
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| {
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .nth(1)
                .map(str::to_owned)
        })
        .is_some_and(|v| wanted.matches(&v))
}

fn go_os() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        os => os,
    }
}

fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        arch => arch,
    }
}

/// Builds etcd and kube-apiserver (and kubectl, unless the machine has one) with the stamp into
/// a build directory beside `out`, `.<version>.build.<random>`, which then replaces `out` by a
/// rename: a build stopped anywhere leaves `out` as it was (or, replacing a stale one, absent),
/// never part of a version. One build of a cache runs at a time (a lock on its directory); a
/// second `envtest use` waits and takes the first one's binaries, and a build first removes
/// the build directories a killed one left.
fn build(buildable: &Buildable, go: &Path, out: &Path, env: &Env, printer: &Printer) -> Result<()> {
    let go_version = go_env_version(go)?;
    let kubectl = kubectl_choice(env, out);
    let stamp = stamp(buildable, &kubectl, &go_version);
    let (Some(parent), Some(name)) = (out.parent(), out.file_name()) else {
        return Err(Error::msg(format!(
            "{} is not a directory in a cache; set OPERATOR_GEN_CACHE to a directory",
            out.display()
        )));
    };
    // each file operation of the build counts for the test-only pause hook, and so does each
    // go build (the binary it writes)
    let mut steps = Steps::from_env();
    std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
    steps.done();
    let _lock = crate::transaction::lock_dir(parent, printer)?;
    steps.done();
    if complete(out) && read_stamp(out).as_deref() == Some(stamp.as_str()) {
        return Ok(());
    }
    let prefix = format!(".{}.build.", name.to_string_lossy());
    // what killed builds left
    for entry in std::fs::read_dir(parent)
        .map_err(|e| Error::io("read", parent, e))?
        .flatten()
    {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let left = entry.path();
            std::fs::remove_dir_all(&left).map_err(|e| Error::io("remove", &left, e))?;
            steps.done();
        }
    }
    let work = tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir_in(parent)
        .map_err(|e| Error::io("create a build directory in", parent, e))?;
    steps.done();
    let started = std::time::Instant::now();
    compile(
        buildable,
        go,
        work.path(),
        &kubectl,
        env,
        printer,
        &mut steps,
    )?;
    let stamp_path = work.path().join(STAMP);
    std::fs::write(&stamp_path, format!("{stamp}\n"))
        .map_err(|e| Error::io("write", &stamp_path, e))?;
    steps.done();
    set_readable(work.path())?;
    steps.done();
    if out.exists() {
        // the stale version goes beside, under the build directories' prefix, then away
        let old = parent.join(format!("{prefix}old"));
        std::fs::rename(out, &old).map_err(|e| Error::io("move aside", out, e))?;
        steps.done();
        std::fs::remove_dir_all(&old).map_err(|e| Error::io("remove", &old, e))?;
        steps.done();
    }
    let built = work.keep();
    std::fs::rename(&built, out).map_err(|e| Error::io("move into place", out, e))?;
    steps.done();
    printer.status(
        "Built",
        &format!("in {}s into {}", started.elapsed().as_secs(), out.display()),
    );
    Ok(())
}

/// Builds etcd and kube-apiserver, and kubectl when `kubectl` is `built` (else links the
/// machine's), into `work` from the embedded wrapper modules (written to `work/modules`, removed
/// after).
fn compile(
    buildable: &Buildable,
    go: &Path,
    work: &Path,
    kubectl: &str,
    env: &Env,
    printer: &Printer,
    steps: &mut Steps,
) -> Result<()> {
    let modules = work.join("modules");
    for file in KUBE_MODULE.iter().chain(ETCD_MODULE) {
        let path = modules.join(file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
            steps.done();
        }
        std::fs::write(&path, file.text).map_err(|e| Error::io("write", &path, e))?;
        steps.done();
    }
    let root = env.cache_root()?;
    let go_cache = |name: &str, sub: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| root.join("go").join(sub).into_os_string())
    };
    let flags = format!(
        "{} -mod=readonly -modcacherw -trimpath",
        std::env::var("GOFLAGS").unwrap_or_default()
    );
    let mut go_build = |dir: &str, ldflags: &str, output: &str, package: &str| -> Result<()> {
        let status = Command::new(go)
            .current_dir(modules.join(dir))
            .env("GOMODCACHE", go_cache("GOMODCACHE", "mod"))
            .env("GOCACHE", go_cache("GOCACHE", "build"))
            .env("CGO_ENABLED", "0")
            .env("GOFLAGS", &flags)
            .args(["build", "-ldflags", ldflags, "-o"])
            .arg(work.join(output))
            .arg(package)
            .status()
            .map_err(|e| {
                Error::msg(format!(
                    "cannot run {}: {e}; check the Go installation",
                    go.display()
                ))
            })?;
        if status.success() {
            steps.done();
            Ok(())
        } else {
            Err(Error::msg(format!(
                "go build of {output} failed ({status}); see go's output above, fix it and run `operator-gen envtest use` again"
            )))
        }
    };
    printer.status("Building", &format!("etcd {}", buildable.etcd));
    go_build("etcd", "-s -w", "etcd", ".")?;
    let minor = buildable
        .version()
        .split('.')
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let version_flags = format!(
        "-s -w -X k8s.io/component-base/version.gitVersion={k} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor={minor} -X k8s.io/component-base/version.gitTreeState=clean",
        k = buildable.kubernetes
    );
    printer.status(
        "Building",
        &format!(
            "kube-apiserver {} (a cold build takes a long while)",
            buildable.kubernetes
        ),
    );
    go_build(
        "kubernetes",
        &version_flags,
        "kube-apiserver",
        "./kube-apiserver",
    )?;
    if kubectl == "built" {
        printer.status("Building", &format!("kubectl {}", buildable.kubernetes));
        go_build("kubernetes", &version_flags, "kubectl", "./kubectl")?;
    } else {
        let link = work.join("kubectl");
        symlink(Path::new(kubectl), &link)?;
        steps.done();
    }
    std::fs::remove_dir_all(&modules).map_err(|e| Error::io("remove", &modules, e))?;
    steps.done();
    Ok(())
}

/// A build directory as a directory of binaries is: readable by all (a temporary directory is
/// its owner's only).
#[cfg(unix)]
fn set_readable(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io("set permissions on", dir, e))
}

#[cfg(not(unix))]
fn set_readable(_dir: &Path) -> Result<()> {
    Ok(())
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> Result<()> {
    std::os::unix::fs::symlink(target, link).map_err(|e| Error::io("link", link, e))
}

#[cfg(not(unix))]
fn symlink(target: &Path, link: &Path) -> Result<()> {
    std::fs::copy(target, link)
        .map(|_| ())
        .map_err(|e| Error::io("copy", link, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrappers_build_one_kubernetes_and_its_etcd() {
        let b = Buildable::embedded().expect("versions");
        assert!(b.kubernetes.starts_with("v1."), "{b:?}");
        assert!(b.etcd.starts_with("v3."), "{b:?}");
        assert_eq!(b.version(), b.kubernetes.trim_start_matches('v'));
    }

    #[test]
    fn versions_match_by_patch_or_minor() {
        let exact = Wanted::parse("v1.37.2").expect("exact");
        assert!(exact.matches("1.37.2") && !exact.matches("1.37.3"));
        let minor = Wanted::parse("1.37.x").expect("minor");
        assert!(minor.matches("v1.37.9") && !minor.matches("1.3.7") && !minor.matches("1.370.1"));
        assert_eq!(Wanted::parse("1.37").expect("minor"), minor);
        for bad in ["latest", "1", "1.x", "1.37.2.1", "one.two"] {
            let err = Wanted::parse(bad).expect_err(bad).to_string();
            assert!(
                err.starts_with(&format!("--k8s-version {bad} is not")),
                "{err}"
            );
        }
    }

    #[test]
    fn the_stamp_changes_with_each_input() {
        let b = Buildable::embedded().expect("versions");
        let base = stamp(&b, "built", "go1.26.8");
        assert_eq!(base.len(), 64);
        assert_ne!(base, stamp(&b, "/usr/bin/kubectl", "go1.26.8"));
        assert_ne!(base, stamp(&b, "built", "go1.26.9"));
    }
}
