//! Helpers for running a generated operator against a real control plane: scaffold and build a
//! project, run its manager binary as a child process (killed on drop, also on panic), read its
//! log and metrics, and write a kubeconfig for a ServiceAccount token.

use std::cell::Cell;
use std::future::Future;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::cli;

/// The target directory every generated project shares, so kube is compiled once.
pub fn generated_target_dir() -> PathBuf {
    cli::workspace_root().join("target/generated-projects")
}

/// Sets what every cargo build of a generated project in the tests shares: the shared target
/// directory, no incremental data (each project's own crates are built once per run) and line
/// tables in place of full debug info, which keep the directory a few GB smaller. The project's
/// own `Cargo.toml` is left as generated.
pub fn generated_build_env(command: &mut Command) -> &mut Command {
    command
        .env("CARGO_TARGET_DIR", generated_target_dir())
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
}

/// The lock every build in [`generated_target_dir`] holds in this test process, with what it
/// then reads of what it built: every project's `manager` binary is copied to the same
/// `debug/manager` path, and two projects of one name share their test binaries' paths, so a
/// build running between another's build and its copy (or its test run) would hand it the wrong
/// binary. Taken again on the thread that holds it, it returns at once (a helper holding it
/// calls [`shell`]); released when the outermost guard is dropped.
pub fn build_lock() -> BuildLock {
    static BUILDS: Mutex<()> = Mutex::new(());
    if BUILD_HELD.get() {
        return BuildLock(None);
    }
    let guard = BUILDS.lock().unwrap_or_else(PoisonError::into_inner);
    BUILD_HELD.set(true);
    BuildLock(Some(guard))
}

thread_local! {
    /// Whether this thread holds [`build_lock`].
    static BUILD_HELD: Cell<bool> = const { Cell::new(false) };
}

/// A hold on [`build_lock`].
pub struct BuildLock(Option<MutexGuard<'static, ()>>);

impl Drop for BuildLock {
    fn drop(&mut self) {
        if self.0.take().is_some() {
            BUILD_HELD.set(false);
        }
    }
}

/// Runs `command` with [`generated_build_env`] under [`build_lock`] and returns its output.
pub fn generated_output(command: &mut Command) -> std::io::Result<Output> {
    let _build = build_lock();
    generated_build_env(command).output()
}

/// Runs `program args...` in `dir` with [`generated_build_env`] under [`build_lock`]; panics
/// with its output when it fails, else returns its stdout.
pub fn shell(dir: &Path, program: &str, args: &[&str]) -> String {
    let out = generated_output(Command::new(program).args(args).current_dir(dir))
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "`{program} {}` failed:\n{}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `operator-gen args` (split on whitespace) in `dir`; panics when it fails.
pub fn operator_gen(dir: &Path, args: &str) {
    let out = cli::run(dir, &cli::split_args(args));
    assert_eq!(out.code, 0, "`operator-gen {args}` failed: {}", out.stderr);
}

/// A scaffolded project whose manager binary is built.
#[derive(Debug)]
pub struct Project {
    /// The project directory (its name is the project name).
    pub dir: PathBuf,
    /// A private copy of the built `manager` binary.
    pub manager: PathBuf,
}

impl Project {
    /// The CRDs `make manifests` wrote to `config/crd/bases`; at least one.
    pub fn crds(&self) -> Vec<CustomResourceDefinition> {
        let bases = self.dir.join("config/crd/bases");
        let mut crds = Vec::new();
        for entry in std::fs::read_dir(&bases).expect("crd bases") {
            let text = std::fs::read_to_string(entry.expect("dir entry").path()).expect("crd");
            crds.push(serde_saphyr::from_str(&text).expect("crd yaml"));
        }
        assert!(
            !crds.is_empty(),
            "make manifests wrote no CRD in {}",
            bases.display()
        );
        crds
    }
}

/// Scaffolds `<parent>/<name>` with `init --domain my.domain`, runs `create api` with `api_args`
/// and `make manifests` with this checkout's CLI, builds the `manager` binary in the shared target
/// directory and copies it to `<parent>/manager`.
///
/// Every generated project's binary lands on the same `debug/manager` path of the shared target
/// directory, so the binary is built and copied out under [`build_lock`].
/// Call only after [`cli::require_tool`]`("make", ..)` returned true.
pub fn scaffold_and_build(parent: &Path, name: &str, api_args: &str) -> Project {
    scaffold_and_build_with(parent, name, &[&format!("create api {api_args}")], |_| {})
}

/// As [`scaffold_and_build`], with the `operator-gen` commands `commands` after `init` (such as
/// `create api ...` and `create webhook ...`) and `edit` run on the project directory before
/// `make manifests` (the user's code in the scaffold's TODOs).
pub fn scaffold_and_build_with(
    parent: &Path,
    name: &str,
    commands: &[&str],
    edit: impl FnOnce(&Path),
) -> Project {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).expect("create the project directory");
    operator_gen(&dir, "init --domain my.domain");
    for command in commands {
        operator_gen(&dir, command);
    }
    edit(&dir);
    let tool = format!("OPERATOR_GEN={}", cli::operator_gen_bin().display());
    shell(&dir, "make", &["manifests", &tool]);

    let _build = build_lock();
    let out = shell(
        &dir,
        &cli::cargo(),
        &["build", "--bin", "manager", "--message-format=json"],
    );
    let built = out
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["reason"] == "compiler-artifact" && v["target"]["name"] == "manager")
        .find_map(|v| v["executable"].as_str().map(PathBuf::from))
        .expect("cargo build reported no manager executable");
    let manager = parent.join("manager");
    std::fs::copy(&built, &manager).expect("copy the manager binary");
    Project { dir, manager }
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind a free loopback port")
}

/// How to run one manager replica.
#[derive(Clone, Debug)]
pub struct ManagerSettings {
    /// The built `manager` binary.
    pub binary: PathBuf,
    /// The kubeconfig the manager uses (`KUBECONFIG`).
    pub kubeconfig: PathBuf,
    /// `POD_NAME`: the replica's name, prefix of its leader-election identity.
    pub pod_name: String,
    /// `POD_NAMESPACE`: the leader-election namespace.
    pub pod_namespace: String,
    /// Where the replica's stdout and stderr go.
    pub log: PathBuf,
    /// More command-line arguments (e.g. `--webhook-port`).
    pub args: Vec<String>,
}

/// A running manager replica; killed (SIGKILL) and reaped on drop unless it already exited.
#[derive(Debug)]
pub struct ManagerProcess {
    child: Child,
    log: PathBuf,
    /// Where `/metrics` is served.
    pub metrics_port: u16,
    /// Where `/healthz` and `/readyz` are served.
    pub probe_port: u16,
    exited: Option<ExitStatus>,
}

impl ManagerProcess {
    /// Starts the manager with `--leader-elect` and plain-HTTP metrics (`--metrics-secure=false`)
    /// and probes on free loopback ports,
    /// and waits until `/readyz` answers. A freed port can be taken before the manager binds it:
    /// then it starts again on new ports.
    pub fn start(settings: &ManagerSettings) -> ManagerProcess {
        const ATTEMPTS: u32 = 3;
        for attempt in 1..=ATTEMPTS {
            let mut manager = ManagerProcess::spawn(settings);
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                if http_get(manager.probe_port, "/readyz").is_ok() {
                    return manager;
                }
                if let Some(status) = manager.exited() {
                    let log = manager.log();
                    if attempt < ATTEMPTS && log.contains("cannot listen on") {
                        break;
                    }
                    panic!("the manager exited at start ({status}); log:\n{log}");
                }
                assert!(
                    Instant::now() < deadline,
                    "the manager does not serve /readyz after 30s; log:\n{}",
                    manager.log()
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        unreachable!("the last attempt returns or panics")
    }

    fn spawn(settings: &ManagerSettings) -> ManagerProcess {
        let metrics_port = free_port();
        let mut probe_port = free_port();
        while probe_port == metrics_port {
            probe_port = free_port();
        }
        let log = std::fs::File::create(&settings.log).expect("create the manager log");
        let child = Command::new(&settings.binary)
            .arg("--leader-elect")
            .arg(format!("--metrics-bind-address=127.0.0.1:{metrics_port}"))
            // plain HTTP: the tests read /metrics without a token (the secure default is
            // checked on the apiserver by tests/tests/apiserver/metrics_secure.rs)
            .arg("--metrics-secure=false")
            .arg(format!(
                "--health-probe-bind-address=127.0.0.1:{probe_port}"
            ))
            .args(&settings.args)
            .env("KUBECONFIG", &settings.kubeconfig)
            .env("POD_NAME", &settings.pod_name)
            .env("POD_NAMESPACE", &settings.pod_namespace)
            .env_remove("WATCH_NAMESPACE")
            // debug for the runtime: its lines for each reconcile's start and end
            .env("RUST_LOG", "info,operator_gen_runtime=debug")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone the log handle"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", settings.binary.display()));
        ManagerProcess {
            child,
            log: settings.log.clone(),
            metrics_port,
            probe_port,
            exited: None,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The log so far, without ANSI colour sequences.
    pub fn log(&self) -> String {
        strip_ansi(&std::fs::read_to_string(&self.log).unwrap_or_default())
    }

    /// The exit status, when the process has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().ok().flatten();
        }
        self.exited
    }

    /// The body of `GET /metrics`, or why it could not be fetched.
    pub fn metrics(&self) -> Result<String, String> {
        http_get(self.metrics_port, "/metrics")
    }

    /// The value of the metric sample `line_prefix` (the name with its labels), 0 when absent.
    pub fn metric(&self, line_prefix: &str) -> Result<f64, String> {
        let body = self.metrics()?;
        Ok(metric_value(&body, line_prefix).unwrap_or(0.0))
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("run kill -TERM");
        assert!(status.success(), "kill -TERM {} failed", self.pid());
    }

    /// Sends SIGKILL and reaps the process: it is gone when this returns.
    pub fn kill(&mut self) -> ExitStatus {
        if let Some(status) = self.exited() {
            return status;
        }
        self.child.kill().expect("SIGKILL the manager");
        let status = self.child.wait().expect("reap the manager");
        self.exited = Some(status);
        status
    }

    /// Waits (blocking) up to `timeout` for the process to exit; panics with its log when it
    /// does not.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exited() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the manager did not exit within {timeout:?}; log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for ManagerProcess {
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Polls `check` every 250 ms until it returns `Ok`, for at most `timeout`; on timeout the error
/// names `what` and the last reason `check` gave.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        match check().await {
            Ok(value) => return Ok(value),
            Err(reason) if Instant::now() >= deadline => {
                return Err(format!("{what}: not within {timeout:?}; last: {reason}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}

/// The default of the flag `--<flag>` as the manager's `--help` states it (`[default: 15s]`).
pub fn flag_default(binary: &Path, flag: &str) -> String {
    let out = Command::new(binary)
        .arg("--help")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} --help: {e}", binary.display()));
    let help = String::from_utf8_lossy(&out.stdout);
    help_default(&help, flag)
        .unwrap_or_else(|| panic!("`manager --help` states no default for --{flag}:\n{help}"))
}

/// The `[default: ...]` value in the help text of `--<flag>`: its first line and the lines
/// after it up to the next flag.
fn help_default(help: &str, flag: &str) -> Option<String> {
    let name = format!("--{flag} ");
    let start = help
        .lines()
        .position(|l| l.trim_start().starts_with(&name))?;
    let mut text = String::new();
    for (i, line) in help.lines().skip(start).enumerate() {
        if i > 0 && line.trim_start().starts_with("--") {
            break;
        }
        text.push_str(line);
        text.push(' ');
    }
    let value = text.split_once("[default: ")?.1.split_once(']')?.0;
    Some(value.trim().to_owned())
}

/// The value of the first sample line starting with `line_prefix` and a space.
pub fn metric_value(body: &str, line_prefix: &str) -> Option<f64> {
    body.lines().find_map(|l| {
        l.strip_prefix(line_prefix)
            .and_then(|rest| rest.strip_prefix(' '))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    })
}

/// `GET path` on `127.0.0.1:port` over HTTP/1.1 with `Connection: close`; the body of a 200.
pub fn http_get(port: u16, path: &str) -> Result<String, String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .map_err(|e| e.to_string())?;
    let response = String::from_utf8_lossy(&response);
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no HTTP response: {response}"))?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(format!("GET {path}: {head}"));
    }
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return Ok(dechunk(body));
    }
    Ok(body.to_owned())
}

/// The body of a chunked HTTP/1.1 response, its chunks joined.
pub(crate) fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// `text` without ANSI escape sequences (`ESC [ ... letter`).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The value of `key=` in the first log line containing `message`.
pub fn log_field(log: &str, message: &str, key: &str) -> Option<String> {
    let line = log.lines().find(|l| l.contains(message))?;
    let start = line.find(&format!("{key}="))? + key.len() + 1;
    let value = line[start..].split_whitespace().next()?;
    Some(value.trim_matches('"').to_owned())
}

/// Writes a kubeconfig at `out` with the cluster (server URL and CA) of the kubeconfig `admin`
/// and one user authenticated by `token`.
pub fn token_kubeconfig(admin: &Path, token: &str, out: &Path) {
    let text = std::fs::read_to_string(admin).expect("read the admin kubeconfig");
    let mut config: serde_json::Value = serde_saphyr::from_str(&text).expect("kubeconfig is YAML");
    let cluster = config["clusters"][0]["name"]
        .as_str()
        .expect("kubeconfig names a cluster")
        .to_owned();
    let token_config = serde_saphyr::from_str::<serde_json::Value>(&format!(
        "users:\n- name: token\n  user:\n    token: {token}\n\
         contexts:\n- name: token\n  context:\n    cluster: {cluster}\n    user: token\n\
         current-context: token\n"
    ))
    .expect("token kubeconfig parts");
    for key in ["users", "contexts", "current-context"] {
        config[key] = token_config[key].clone();
    }
    std::fs::write(
        out,
        serde_saphyr::to_string(&config).expect("serialize kubeconfig"),
    )
    .expect("write the token kubeconfig");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_metrics_and_log_fields() {
        let body = "# TYPE x counter\nx_total{controller=\"c\",result=\"success\"} 3\nx_total{controller=\"c\",result=\"error\"} 1\n";
        assert_eq!(
            metric_value(body, "x_total{controller=\"c\",result=\"success\"}"),
            Some(3.0)
        );
        assert_eq!(metric_value(body, "x_total{controller=\"d\"}"), None);
        let log = "\u{1b}[2m2026\u{1b}[0m INFO acquired lease \u{1b}[3midentity\u{1b}[0m\u{1b}[2m=\u{1b}[0ma_1f lease=x\n";
        assert_eq!(
            log_field(&strip_ansi(log), "acquired lease", "identity").as_deref(),
            Some("a_1f")
        );
        assert_eq!(dechunk("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), "abcde");
        let help = "Options:\n      --leader-election-lease-duration <DURATION>\n          How long\n          [default: 15s]\n\n      --leader-election-renew-deadline <DURATION>\n          [default: 10s]\n      --leader-election-id <NAME>\n          The name\n";
        assert_eq!(
            help_default(help, "leader-election-lease-duration").as_deref(),
            Some("15s")
        );
        assert_eq!(
            help_default(help, "leader-election-renew-deadline").as_deref(),
            Some("10s")
        );
        assert_eq!(help_default(help, "leader-election-id"), None);
        assert_eq!(help_default(help, "leader-election"), None);
    }
}
