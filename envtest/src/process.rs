//! A child process that logs to a file and is killed when dropped.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::error::{Error, Result};

/// How many log lines an error message quotes.
const LOG_TAIL_LINES: usize = 25;

/// A running control-plane process; killed (and reaped) on drop.
pub(crate) struct Process {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Process {
    /// Starts `binary` with `args`, stdout and stderr appended to `log` (created when missing: a
    /// process started again adds to the log of the one before).
    pub(crate) fn spawn(
        name: &'static str,
        binary: &Path,
        args: &[String],
        log: PathBuf,
    ) -> Result<Process> {
        let out = File::options()
            .create(true)
            .append(true)
            .open(&log)
            .map_err(Error::io(&log))?;
        let err = out.try_clone().map_err(Error::io(&log))?;
        let child = Command::new(binary)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|error| Error::Spawn {
                path: binary.to_path_buf(),
                error,
            })?;
        Ok(Process { name, child, log })
    }

    /// An error when the process has already exited.
    pub(crate) fn check_running(&mut self) -> Result<()> {
        match self.child.try_wait() {
            Ok(Some(status)) => Err(Error::Exited {
                name: self.name,
                status,
                log: self.log.clone(),
                log_tail: self.log_tail(),
            }),
            Ok(None) | Err(_) => Ok(()),
        }
    }

    pub(crate) fn log(&self) -> &Path {
        &self.log
    }

    /// The last lines of the process's log, for error messages.
    pub(crate) fn log_tail(&self) -> String {
        tail(&self.log, LOG_TAIL_LINES)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // the process may be gone already; either way it must not outlive the test
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The last `lines` lines of a file (reading at most its last 64 KiB), or a note why not.
fn tail(path: &Path, lines: usize) -> String {
    const MAX: u64 = 64 * 1024;
    let read = || -> std::io::Result<String> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(MAX)))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    match read() {
        Ok(text) => {
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(error) => format!("(cannot read {}: {error})", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("log");
        std::fs::write(&path, "one\ntwo\nthree\nfour\n").expect("write");
        assert_eq!(tail(&path, 2), "three\nfour");
        assert_eq!(tail(&path, 10), "one\ntwo\nthree\nfour");
        assert!(tail(&dir.path().join("missing"), 2).starts_with("(cannot read "));
    }

    #[test]
    fn exited_process_is_reported_with_its_log() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("sh.log");
        let args = ["-c".to_owned(), "echo boom >&2; exit 3".to_owned()];
        let mut process =
            Process::spawn("etcd", Path::new("/bin/sh"), &args, log).expect("spawn sh");
        let _ = process.child.wait();
        let error = process.check_running().expect_err("exited");
        let message = error.to_string();
        assert!(
            message.starts_with("etcd exited (exit status: 3)"),
            "{message}"
        );
        assert!(message.ends_with("boom"), "{message}");
    }
}
