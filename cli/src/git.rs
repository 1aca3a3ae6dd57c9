//! git, run as a subprocess in a project's work tree (as kubebuilder runs it), and the one change
//! of a repository that operator-gen makes: [`Switch`], branches set and one of them checked out,
//! which the journal ([`crate::transaction`]) finishes after the work tree's files are in place.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The prefix of every branch operator-gen sets: a journal naming any other is not one it wrote.
pub const BRANCH_PREFIX: &str = "operator-gen-update-";

/// git, run in a work tree.
#[derive(Debug)]
pub struct Git {
    root: PathBuf,
    git_dir: PathBuf,
}

impl Git {
    /// The work tree at `root`, which must be its top level.
    pub fn at(root: &Path) -> Result<Git> {
        let mut git = Git {
            root: root.to_path_buf(),
            git_dir: PathBuf::new(),
        };
        let top = git.output(&["rev-parse", "--show-toplevel"]).map_err(|_| {
            Error::msg(format!(
                "{} is not in a git work tree; alpha update merges on git branches: run `git init` and commit the project first",
                root.display()
            ))
        })?;
        let same = std::fs::canonicalize(&top).ok() == std::fs::canonicalize(root).ok();
        if !same {
            return Err(Error::msg(format!(
                "the project {} is not the top of its git work tree {top}; run alpha update in a repository whose root holds PROJECT",
                root.display()
            )));
        }
        git.git_dir = PathBuf::from(git.output(&["rev-parse", "--absolute-git-dir"])?);
        Ok(git)
    }

    /// The repository's own directory (`.git`).
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// `git args`, in the work tree, never prompting.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.args(args)
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .env("GIT_TERMINAL_PROMPT", "0");
        cmd
    }

    /// Run `cmd` (`git args`) to its end.
    pub fn run(&self, cmd: &mut Command, args: &[&str]) -> Result<Output> {
        cmd.output().map_err(|e| cannot_run(args, &e))
    }

    /// stdout of `cmd` (`git args`), which must succeed.
    pub fn checked(&self, cmd: &mut Command, args: &[&str]) -> Result<Vec<u8>> {
        let out = self.run(cmd, args)?;
        if !out.status.success() {
            return Err(failed(args, &out.stderr));
        }
        Ok(out.stdout)
    }

    /// stdout of a successful `git args`, as bytes.
    pub fn output_bytes(&self, args: &[&str]) -> Result<Vec<u8>> {
        self.checked(&mut self.command(args), args)
    }

    /// stdout of a successful `git args`, untrimmed.
    pub fn output_raw(&self, args: &[&str]) -> Result<String> {
        Ok(String::from_utf8_lossy(&self.output_bytes(args)?).into_owned())
    }

    /// stdout of a successful `git args`, trimmed.
    pub fn output(&self, args: &[&str]) -> Result<String> {
        Ok(self.output_raw(args)?.trim().to_owned())
    }

    /// Whether `git args` succeeded.
    pub fn status(&self, args: &[&str]) -> Result<bool> {
        Ok(self.run(&mut self.command(args), args)?.status.success())
    }

    /// The tree object of the files of `dir` (its `.gitignore` applied), through the index file
    /// `index`, leaving the project's own index alone.
    pub fn tree_of(&self, dir: &Path, index: &Path) -> Result<String> {
        let _ = std::fs::remove_file(index);
        let git_dir = self.git_dir.to_string_lossy().into_owned();
        let work_tree = dir.to_string_lossy().into_owned();
        let run = |tail: &[&str]| -> Result<String> {
            let args: Vec<&str> = ["--git-dir", &git_dir, "--work-tree", &work_tree]
                .into_iter()
                .chain(tail.iter().copied())
                .collect();
            let mut cmd = self.command(&args);
            cmd.current_dir(dir).env("GIT_INDEX_FILE", index);
            let out = self.checked(&mut cmd, &args)?;
            Ok(String::from_utf8_lossy(&out).trim().to_owned())
        };
        run(&["add", "--all", "."])?;
        run(&["write-tree"])
    }

    /// A commit of `tree` with the one `parent`.
    pub fn commit(&self, tree: &str, parent: &str, message: &str) -> Result<String> {
        self.output(&["commit-tree", tree, "-p", parent, "-m", message])
    }

    /// `git args` to success, tried again while another git process holds one of the
    /// repository's lock files (a git that a killed operator-gen started may still be finishing).
    fn settled(&self, args: &[&str], input: Option<&str>) -> Result<()> {
        let mut tries = 0;
        loop {
            let mut cmd = self.command(args);
            let out = match input {
                None => self.run(&mut cmd, args)?,
                Some(text) => run_with_input(&mut cmd, args, text)?,
            };
            if out.status.success() {
                return Ok(());
            }
            let locked = String::from_utf8_lossy(&out.stderr).contains(".lock");
            tries += 1;
            if !locked || tries >= 50 {
                return Err(failed(args, &out.stderr));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// `cmd` run with `input` on its stdin.
fn run_with_input(cmd: &mut Command, args: &[&str], input: &str) -> Result<Output> {
    use std::io::Write;
    let cannot = |e: std::io::Error| cannot_run(args, &e);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(cannot)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).map_err(cannot)?;
    }
    child.wait_with_output().map_err(cannot)
}

/// The error when `git args` cannot be started (or fed) at all.
fn cannot_run(args: &[&str], e: &std::io::Error) -> Error {
    Error::msg(format!(
        "cannot run `git {}`: {}; install git",
        args.join(" "),
        e.to_string().to_lowercase()
    ))
}

/// The error of a failed `git args`: the first line of its stderr and the fix, a full disk's or
/// a read-only file system's when git names one.
pub fn failed(args: &[&str], stderr: &[u8]) -> Error {
    let stderr = String::from_utf8_lossy(stderr);
    let fix = crate::error::os_message_fix(&stderr)
        .unwrap_or("fix the repository and run alpha update again");
    Error::msg(format!(
        "`git {}` failed: {}; {fix}",
        args.join(" "),
        stderr.lines().next().unwrap_or("no message").trim()
    ))
}

/// Branches set to commits and one of them checked out, the index holding its tree: what the
/// journal does in the repository once the work tree holds that tree's files. Each step is
/// all or nothing (git's own lock files) and setting a value already set changes nothing, so a
/// recovery repeats the whole of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Switch {
    /// Each branch (its short name) and the commit it is set to.
    pub branches: Vec<(String, String)>,
    /// The branch checked out, one of `branches`.
    pub head: String,
}

impl Switch {
    /// Refuse a switch that operator-gen does not write: a branch outside [`BRANCH_PREFIX`], a
    /// name git could read as something else, or a commit that is not an object name.
    pub fn check(&self) -> Result<()> {
        let name_ok = |b: &str| {
            b.starts_with(BRANCH_PREFIX)
                && !b.contains("..")
                && !b.ends_with('.')
                && b.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'))
        };
        let oid_ok =
            |c: &str| matches!(c.len(), 40 | 64) && c.chars().all(|c| c.is_ascii_hexdigit());
        let all_ok = self.branches.iter().all(|(b, c)| name_ok(b) && oid_ok(c));
        if all_ok && self.branches.iter().any(|(b, _)| *b == self.head) {
            return Ok(());
        }
        Err(Error::msg(
            "the journal names git branches operator-gen does not set; remove .operator-gen-journal and any `.*.operator-gen-new` files, then check the repository with `git status`",
        ))
    }

    /// Set the branches (one transaction), check out [`Switch::head`] and put its tree in the
    /// index; `step` is called after each of the three.
    pub fn apply(&self, git: &Git, step: &mut dyn FnMut()) -> Result<()> {
        self.check()?;
        let mut updates = String::from("start\n");
        for (branch, commit) in &self.branches {
            updates.push_str(&format!("update refs/heads/{branch} {commit}\n"));
        }
        updates.push_str("prepare\ncommit\n");
        let message = format!("operator-gen alpha update: {}", self.head);
        git.settled(&["update-ref", "-m", &message, "--stdin"], Some(&updates))?;
        step();
        let head = format!("refs/heads/{}", self.head);
        git.settled(&["symbolic-ref", "-m", &message, "HEAD", &head], None)?;
        step();
        git.settled(&["read-tree", "--reset", &head], None)?;
        // stat data for the files just written, so that `git status` need not read them again
        let _ = git.status(&["update-index", "-q", "--refresh"]);
        step();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn switch(branch: &str, commit: &str) -> Switch {
        Switch {
            branches: vec![(branch.to_owned(), commit.to_owned())],
            head: branch.to_owned(),
        }
    }

    #[test]
    fn a_journal_sets_only_branches_operator_gen_makes() {
        let commit = "0123456789abcdef0123456789abcdef01234567";
        assert!(
            switch("operator-gen-update-from-0.1.0-to-0.2.0", commit)
                .check()
                .is_ok()
        );
        for (branch, commit) in [
            ("main", commit),
            ("operator-gen-update-x/../../main", commit),
            ("operator-gen-update-x y", commit),
            ("operator-gen-update-x..y", commit),
            ("operator-gen-update-x", "HEAD"),
            ("operator-gen-update-x", "0123"),
        ] {
            assert!(
                switch(branch, commit).check().is_err(),
                "{branch} {commit} accepted"
            );
        }
        let mut elsewhere = switch("operator-gen-update-a", commit);
        elsewhere.head = "operator-gen-update-b".to_owned();
        assert!(elsewhere.check().is_err(), "a head outside the branches");
    }
}
