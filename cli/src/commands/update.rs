//! `operator-gen alpha update`: move a git-tracked project from the scaffold of the operator-gen
//! version its `PROJECT` records (`cliVersion`) to this version's, by a three-way merge on git
//! branches, as kubebuilder's `alpha update` does; git runs as a subprocess, as there.
//!
//! The project's replay ([`super::replay`]) is run by the older operator-gen binary into a
//! temporary directory (the *ancestor*) and by this one, in process, into another (the
//! *upgrade*). Three branches record them: `operator-gen-update-ancestor-<from>` (the old
//! scaffold, a child of the project's commit), `operator-gen-update-original-<from>` (the
//! project's tree, a child of the ancestor) and `operator-gen-update-upgrade-<from>` (the new
//! scaffold, a child of the ancestor). The upgrade is merged into the original with the ancestor
//! as base, and the result, conflict markers included, is committed as one commit on top of the
//! project's commit on `operator-gen-update-from-<from>-to-<to>`, which is left checked out; the
//! conflicted paths are printed one per line. The user's branch is never moved. Unlike
//! kubebuilder, which stops at a conflict unless `--force` and deletes its temporary branches,
//! the merge is always committed (the markers are for the user to resolve on the branch) and
//! the three branches stay for inspection; `--force` replaces the four branches of an earlier
//! run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::Args;

use super::replay::{self, Runner, Step};
use crate::error::{Error, Result};
use crate::printer::{Printer, Verbosity};
use crate::project::{self, Project, versions};

/// Flags of `alpha update`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The operator-gen version whose scaffold the project was made with (default: PROJECT's
    /// `cliVersion`).
    #[arg(long, value_name = "VERSION")]
    pub from_version: Option<String>,
    /// The branch holding the project (default: the current one).
    #[arg(long, value_name = "BRANCH")]
    pub from_branch: Option<String>,
    /// The operator-gen binary of the older version (default: the per-user release cache,
    /// `<cache>/releases/<version>/bin/operator-gen`, installed there with `cargo install` when
    /// missing).
    #[arg(long, value_name = "PATH")]
    pub from_binary: Option<PathBuf>,
    /// Replace the branches an earlier `alpha update` from the same version made.
    #[arg(long)]
    pub force: bool,
}

/// The branches of one update.
struct Branches {
    ancestor: String,
    original: String,
    upgrade: String,
    merge: String,
}

impl Branches {
    fn new(from: &str, to: &str) -> Branches {
        Branches {
            ancestor: format!("operator-gen-update-ancestor-{from}"),
            original: format!("operator-gen-update-original-{from}"),
            upgrade: format!("operator-gen-update-upgrade-{from}"),
            merge: format!("operator-gen-update-from-{from}-to-{to}"),
        }
    }

    fn all(&self) -> [&str; 4] {
        [&self.ancestor, &self.original, &self.upgrade, &self.merge]
    }
}

/// The project's branch and commit an update starts from.
struct Start {
    /// The branch holding the project.
    branch: String,
    /// Its commit.
    base: String,
}

/// The three commits of an update, each a child of the project's commit or of the ancestor.
struct Commits {
    ancestor: String,
    original: String,
    upgrade: String,
}

/// Run `alpha update` in the project at `root`, replaying its commands here through `runner`.
pub fn run(args: &UpdateArgs, root: &Path, printer: &Printer, runner: Runner) -> Result<()> {
    // the flag checked before anything is read or run (a release is installed by its version)
    if let Some(v) = &args.from_version {
        check_version(&normal_version(v))?;
    }
    // what the update reads (PROJECT, the branch) and the merge it leaves in the work tree,
    // under the lock: another command's commit is never half in it
    let _lock = crate::transaction::lock(root, printer)?;
    Project::load(root)?;
    let git = Git::at(root)?;
    let start = start(args, &git)?;
    let read = |rel: &str| {
        git.output_raw(&["show", &format!("{}:{rel}", start.base)])
            .ok()
    };
    let text = read(project::FILE_NAME).ok_or_else(|| {
        Error::msg(format!(
            "branch {} has no PROJECT at the root of the git work tree; run alpha update at the project's root, which must be the work tree's",
            start.branch
        ))
    })?;
    let project = Project::parse(&text)?;
    let to = versions::CLI;
    let from = from_version(args, &project)?;
    let branches = Branches::new(&from, to);
    check_branches(&git, &branches, &start.branch, args.force)?;
    let binary = older_binary(args, &from, printer)?;

    let tmp = tempfile::Builder::new()
        .prefix("operator-gen-update-")
        .tempdir()
        .map_err(|e| Error::io("create", Path::new("a temporary directory"), e))?;
    let steps = replay::steps(&project, &read);
    let ancestor_dir = tmp.path().join("ancestor");
    let upgrade_dir = tmp.path().join("upgrade");
    printer.status(
        "scaffold",
        &format!("operator-gen {from} ({})", binary.display()),
    );
    replay_with_binary(&binary, &from, &steps, &read, &ancestor_dir)?;
    printer.status("scaffold", &format!("operator-gen {to}"));
    replay_here(&steps, &read, &upgrade_dir, runner)?;

    let index = tmp.path().join("index");
    let ancestor_tree = git.tree_of(&ancestor_dir, &index)?;
    let upgrade_tree = git.tree_of(&upgrade_dir, &index)?;
    let ancestor = git.commit(
        &ancestor_tree,
        &start.base,
        &format!("operator-gen {from} scaffold of the project (alpha update ancestor)"),
    )?;
    let commits = Commits {
        original: git.commit(
            &format!("{}^{{tree}}", start.base),
            &ancestor,
            &format!("the project at {} (alpha update original)", start.branch),
        )?,
        upgrade: git.commit(
            &upgrade_tree,
            &ancestor,
            &format!("operator-gen {to} scaffold of the project (alpha update upgrade)"),
        )?,
        ancestor,
    };
    let conflicts = merge(
        &git, &branches, &commits, &start, args.force, printer, &from,
    )?;
    if let Ok(msg) = git.output(&["rev-parse", "--git-path", "SQUASH_MSG"]) {
        let _ = std::fs::remove_file(root.join(msg));
    }
    report(&conflicts, &branches, &start.branch, printer);
    Ok(())
}

/// The branch to update (`--from-branch`, else the current one) and its commit, in a clean work
/// tree.
fn start(args: &UpdateArgs, git: &Git) -> Result<Start> {
    if !git
        .output(&["--no-optional-locks", "status", "--porcelain"])?
        .is_empty()
    {
        return Err(Error::msg(
            "the git work tree has uncommitted changes; commit or stash them before alpha update",
        ));
    }
    let current = git
        .output(&["symbolic-ref", "--quiet", "--short", "HEAD"])
        .ok();
    let branch = match (&args.from_branch, current) {
        (Some(b), _) => b.clone(),
        (None, Some(b)) => b,
        (None, None) => {
            return Err(Error::msg(
                "HEAD is detached, so there is no branch to update; check out the project's branch or pass --from-branch",
            ));
        }
    };
    let base = git
        .output(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ])
        .map_err(|_| {
            Error::msg(format!(
                "branch {branch:?} does not exist; pass --from-branch with the project's branch"
            ))
        })?;
    Ok(Start { branch, base })
}

/// The version the project was scaffolded with: `--from-version`, else PROJECT's `cliVersion`;
/// an older one than this operator-gen's, or the same one when given.
fn from_version(args: &UpdateArgs, project: &Project) -> Result<String> {
    let to = versions::CLI;
    let from = match (&args.from_version, &project.cli_version) {
        (Some(v), _) => normal_version(v),
        (None, Some(v)) if v == to => {
            return Err(Error::msg(format!(
                "PROJECT records cliVersion {v}, this operator-gen's own version, so there is nothing to update; pass --from-version to merge from another version's scaffold"
            )));
        }
        (None, Some(v)) => v.clone(),
        (None, None) => {
            return Err(Error::msg(
                "PROJECT records no cliVersion; pass --from-version with the operator-gen version the project was scaffolded with",
            ));
        }
    };
    check_version(&from)?;
    if newer(&from, to) {
        return Err(Error::msg(format!(
            "operator-gen {from} is newer than this operator-gen {to}, and alpha update only moves forward; run the alpha update of operator-gen {from} or later"
        )));
    }
    Ok(from)
}

/// The update's branches must not be the project's own, nor exist unless `force`.
fn check_branches(git: &Git, branches: &Branches, from_branch: &str, force: bool) -> Result<()> {
    for b in branches.all() {
        if b == from_branch {
            return Err(Error::msg(format!(
                "--from-branch {b} is a branch alpha update makes; pass the project's own branch"
            )));
        }
        let exists = git
            .output(&[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{b}"),
            ])
            .is_ok();
        if exists && !force {
            return Err(Error::msg(format!(
                "branch {b} exists from an earlier alpha update; delete it (git branch -D {b}) or pass --force"
            )));
        }
    }
    Ok(())
}

/// The three branches set to `commits`, the upgrade merged into the original on the merge
/// branch (checked out) and committed, conflicts and all, on the project's commit; returns the
/// conflicted paths.
fn merge(
    git: &Git,
    branches: &Branches,
    commits: &Commits,
    start: &Start,
    force: bool,
    printer: &Printer,
    from: &str,
) -> Result<Vec<String>> {
    let to = versions::CLI;
    for (name, commit) in [
        (&branches.ancestor, &commits.ancestor),
        (&branches.original, &commits.original),
        (&branches.upgrade, &commits.upgrade),
    ] {
        git.output(&["branch", "--force", name, commit])?;
        printer.status("branch", name);
    }
    let checkout = if force { "-B" } else { "-b" };
    git.output(&[
        "checkout",
        "--quiet",
        checkout,
        &branches.merge,
        &commits.original,
    ])?;
    printer.status("branch", &branches.merge);
    // exits non-zero on conflicts, which are listed next
    let merged = git.status(&["merge", "--squash", &branches.upgrade])?;
    let conflicts: Vec<String> = git
        .output(&["diff", "--name-only", "--diff-filter=U"])?
        .lines()
        .map(str::to_owned)
        .collect();
    if !merged && conflicts.is_empty() {
        return Err(Error::msg(format!(
            "git merge of {} into {} failed without conflicts; see `git status` on branch {}, then delete the branches and run alpha update again",
            branches.upgrade, branches.original, branches.merge
        )));
    }
    git.output(&["add", "--all"])?;
    let tree = git.output(&["write-tree"])?;
    let message = if conflicts.is_empty() {
        format!("Update the scaffold from operator-gen {from} to {to}")
    } else {
        format!(
            "Update the scaffold from operator-gen {from} to {to}\n\nConflicts to resolve:\n{}",
            conflicts
                .iter()
                .map(|c| format!("  {c}"))
                .collect::<Vec<_>>()
                .join("\n")
        )
    };
    let result = git.commit(&tree, &start.base, &message)?;
    git.output(&[
        "update-ref",
        "-m",
        "operator-gen alpha update",
        &format!("refs/heads/{}", branches.merge),
        &result,
    ])?;
    Ok(conflicts)
}

/// What the user does next: merge the branch, or resolve the listed conflicts first.
fn report(conflicts: &[String], branches: &Branches, from_branch: &str, printer: &Printer) {
    let to = versions::CLI;
    if conflicts.is_empty() {
        printer.hint(&format!(
            "Branch {} holds the project on operator-gen {to}'s scaffold, with no conflicts; run `make manifests` and the tests there, then merge it into {from_branch}.",
            branches.merge
        ));
    } else {
        printer.warn(&format!(
            "{} files have conflicts, committed with their markers on branch {}:",
            conflicts.len(),
            branches.merge
        ));
        for c in conflicts {
            printer.out(&format!("{c}\n"));
        }
        printer.hint(&format!(
            "Resolve the <<<<<<< markers in those files, commit, run `make manifests` and the tests, then merge {} into {from_branch}.",
            branches.merge
        ));
    }
}

/// `--from-version` as given, without surrounding blanks and a leading `v`.
fn normal_version(given: &str) -> String {
    given.trim().trim_start_matches('v').to_owned()
}

/// The one-line error when `version` (from `--from-version` or PROJECT's `cliVersion`) is not a
/// semantic version such as `0.1.0` or `1.2.0-rc.1+build.5`.
fn check_version(version: &str) -> Result<()> {
    if is_semver(version) {
        return Ok(());
    }
    Err(Error::msg(format!(
        "{version:?} (--from-version, else PROJECT's cliVersion) is not a version; pass --from-version with one like 0.1.0"
    )))
}

/// Semantic versioning 2.0 (`MAJOR.MINOR.PATCH`, an optional `-pre.release` and `+build`), as
/// cargo reads versions.
fn is_semver(version: &str) -> bool {
    semver::Version::parse(version).is_ok()
}

/// Whether version `a` is newer than `b`, comparing their numeric dot-separated parts (a
/// pre-release or build suffix aside).
fn newer(a: &str, b: &str) -> bool {
    versions::numbers(a) > versions::numbers(b)
}

/// The older operator-gen: `--from-binary`, else the release cache, installed by cargo.
fn older_binary(args: &UpdateArgs, from: &str, printer: &Printer) -> Result<PathBuf> {
    if let Some(path) = &args.from_binary {
        if !path.is_file() {
            return Err(Error::msg(format!(
                "--from-binary {} is not a file; pass the path of operator-gen {from}",
                path.display()
            )));
        }
        return std::path::absolute(path).map_err(|e| Error::io("resolve", path, e));
    }
    let cache = super::envtest::Env::from_process().cache_root()?;
    let root = cache.join("releases").join(from);
    let binary = root
        .join("bin")
        .join(format!("operator-gen{}", std::env::consts::EXE_SUFFIX));
    if binary.is_file() {
        return Ok(binary);
    }
    printer.status(
        "install",
        &format!("operator-gen {from} into {}", root.display()),
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "install",
            "--locked",
            "--quiet",
            "--version",
            from,
            "--root",
        ])
        .arg(&root)
        .arg("operator-gen")
        .stdin(Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() && binary.is_file() => Ok(binary),
        _ => Err(Error::msg(format!(
            "cannot install operator-gen {from} with cargo install; pass --from-binary with the path of an operator-gen {from} binary"
        ))),
    }
}

/// Copy `rel` from the project into `dir`, when the project has it.
fn copy(read: &dyn Fn(&str) -> Option<String>, rel: &str, dir: &Path) -> Result<()> {
    let Some(text) = read(rel) else {
        return Ok(());
    };
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
    }
    std::fs::write(&path, text).map_err(|e| Error::io("write", &path, e))
}

/// The ancestor: `steps` run by `binary` in `dir` (temporary, not the project).
fn replay_with_binary(
    binary: &Path,
    from: &str,
    steps: &[Step],
    read: &dyn Fn(&str) -> Option<String>,
    dir: &Path,
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    for step in steps {
        match step {
            Step::Run(args) => {
                let out = Command::new(binary)
                    .args(args)
                    .current_dir(dir)
                    .stdin(Stdio::null())
                    .output()
                    .map_err(|e| Error::io("run", binary, e))?;
                if !out.status.success() {
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
                    return Err(Error::msg(format!(
                        "operator-gen {from} ({}) failed to replay `{}`: {}; pass --from-binary with an operator-gen {from} that scaffolds this project",
                        binary.display(),
                        replay::display(step),
                        last.unwrap_or("no message").trim()
                    )));
                }
            }
            Step::Copy(rel) => copy(read, rel, dir)?,
        }
    }
    Ok(())
}

/// The upgrade: `steps` run by this operator-gen, in process, in `dir` (temporary).
fn replay_here(
    steps: &[Step],
    read: &dyn Fn(&str) -> Option<String>,
    dir: &Path,
    runner: Runner,
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    let quiet = Printer::new(Verbosity::Quiet);
    for step in steps {
        match step {
            Step::Run(args) => runner(args, dir, &quiet)?,
            Step::Copy(rel) => copy(read, rel, dir)?,
        }
    }
    Ok(())
}

/// The error of a failed `git args`: the first line of its stderr and the fix, a full disk's or
/// a read-only file system's when git names one.
fn git_failed(args: &[&str], stderr: &[u8]) -> Error {
    let stderr = String::from_utf8_lossy(stderr);
    let fix = crate::error::os_message_fix(&stderr)
        .unwrap_or("fix the repository and run alpha update again");
    Error::msg(format!(
        "`git {}` failed: {}; {fix}",
        args.join(" "),
        stderr.lines().next().unwrap_or("no message").trim()
    ))
}

/// git, run in the project's work tree.
struct Git {
    root: PathBuf,
    git_dir: PathBuf,
}

impl Git {
    /// The work tree at `root`, which must be its top level.
    fn at(root: &Path) -> Result<Git> {
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

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.args(args)
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .env("GIT_TERMINAL_PROMPT", "0");
        cmd
    }

    fn run(&self, cmd: &mut Command, args: &[&str]) -> Result<std::process::Output> {
        cmd.output().map_err(|e| {
            Error::msg(format!(
                "cannot run `git {}`: {}; install git",
                args.join(" "),
                e.to_string().to_lowercase()
            ))
        })
    }

    /// stdout of a successful `git args`, untrimmed.
    fn output_raw(&self, args: &[&str]) -> Result<String> {
        let out = self.run(&mut self.command(args), args)?;
        if !out.status.success() {
            return Err(git_failed(args, &out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// stdout of a successful `git args`, trimmed.
    fn output(&self, args: &[&str]) -> Result<String> {
        Ok(self.output_raw(args)?.trim().to_owned())
    }

    /// Whether `git args` succeeded.
    fn status(&self, args: &[&str]) -> Result<bool> {
        Ok(self.run(&mut self.command(args), args)?.status.success())
    }

    /// The tree object of the files of `dir` (its `.gitignore` applied), through the index file
    /// `index`, leaving the project's own index alone.
    fn tree_of(&self, dir: &Path, index: &Path) -> Result<String> {
        let _ = std::fs::remove_file(index);
        let git_dir = self.git_dir.to_string_lossy().into_owned();
        let work_tree = dir.to_string_lossy().into_owned();
        for args in [
            vec![
                "--git-dir",
                &git_dir,
                "--work-tree",
                &work_tree,
                "add",
                "--all",
                ".",
            ],
            vec![
                "--git-dir",
                &git_dir,
                "--work-tree",
                &work_tree,
                "write-tree",
            ],
        ] {
            let mut cmd = self.command(&args);
            cmd.current_dir(dir).env("GIT_INDEX_FILE", index);
            let out = self.run(&mut cmd, &args)?;
            if !out.status.success() {
                return Err(git_failed(&args, &out.stderr));
            }
            if args.contains(&"write-tree") {
                return Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned());
            }
        }
        Err(Error::msg(
            "internal error: no tree written; this is a bug in operator-gen, please report it",
        ))
    }

    /// A commit of `tree` with the one `parent`.
    fn commit(&self, tree: &str, parent: &str, message: &str) -> Result<String> {
        self.output(&["commit-tree", tree, "-p", parent, "-m", message])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_semantic_versions_are_versions() {
        for good in [
            "0.1.0",
            "1.20.3",
            "0.1.0-rc.1",
            "1.0.0-alpha-1+build.05",
            "10.0.0+x",
        ] {
            assert!(is_semver(good), "{good} refused");
        }
        for bad in [
            "",
            "garbage",
            "1",
            "1.2",
            "1.2.3.4",
            "01.2.3",
            "1.2.x",
            "1.2.3-",
            "1.2.3-01",
            "1.2.3+",
            "1.2.3-a..b",
            "0.0.1/x",
            "1.2.3-a_b",
        ] {
            assert!(!is_semver(bad), "{bad} accepted");
        }
    }

    #[test]
    fn versions_compare_by_their_numbers() {
        assert!(newer("0.10.0", "0.9.3"));
        assert!(newer("1.0.0", "0.99.0"));
        assert!(!newer("0.0.1", "0.1.0"));
        assert!(!newer("0.1.0-rc.1", "0.1.0"));
        assert!(!newer("0.1.0", "0.1.0"));
    }
}
