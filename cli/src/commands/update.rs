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
//! as base (`git merge-tree`, its conflict markers labelled as `git merge` labels them), and the
//! result, conflict markers included, is committed as one commit on top of the project's commit
//! on `operator-gen-update-from-<from>-to-<to>`, which is left checked out; the conflicted paths
//! are printed one per line. The user's branch is never moved. Until the end only git objects
//! that nothing refers to are written; then the work tree's files, the four branches, `HEAD` and
//! the index change in one journaled commit ([`transaction::commit_switching`]), so a kill leaves
//! the repository as it was or, once recovered, as it would be after. Unlike kubebuilder, which
//! stops at a conflict unless `--force` and deletes its temporary branches, the merge is always
//! committed (the markers are for the user to resolve on the branch) and the three branches stay
//! for inspection; `--force` replaces the four branches of an earlier run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::Args;

use super::replay::{self, Runner, Step};
use crate::error::{Error, Result};
use crate::git::{Git, Switch};
use crate::printer::{Printer, Verbosity};
use crate::project::{self, Project, versions};
use crate::transaction::{self, Change};

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
    let _lock = transaction::lock(root, printer)?;
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
    transaction::scratch(|| replay_here(&steps, &read, &upgrade_dir, runner))?;

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
    let scratch = tmp.path().join("merge.git");
    let conflicts = merge(&git, root, &branches, &commits, &start, &from, &scratch)?;
    for name in branches.all() {
        printer.status("branch", name);
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

/// The upgrade merged into the original (the ancestor their base), the result committed,
/// conflicts and all, on the project's commit, and the four branches set and the merge branch
/// checked out, work tree and all, in one journaled commit ([`transaction::commit_switching`]);
/// returns the conflicted paths. Until that commit's point of no return only objects nothing
/// refers to have been written, so a kill leaves the repository as it was or as it will be.
fn merge(
    git: &Git,
    root: &Path,
    branches: &Branches,
    commits: &Commits,
    start: &Start,
    from: &str,
    scratch: &Path,
) -> Result<Vec<String>> {
    let to = versions::CLI;
    let (tree, conflicts) = merge_tree(git, branches, commits, scratch)?;
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
    let files = checkout_files(git, &tree)?;
    let changes: Vec<Change<'_>> = files
        .written
        .iter()
        .map(|(rel, content)| Change { rel, content })
        .collect();
    let switch = Switch {
        branches: vec![
            (branches.ancestor.clone(), commits.ancestor.clone()),
            (branches.original.clone(), commits.original.clone()),
            (branches.upgrade.clone(), commits.upgrade.clone()),
            (branches.merge.clone(), result),
        ],
        head: branches.merge.clone(),
    };
    transaction::commit_switching(root, &changes, &files.removed, &files.pruned, Some(&switch))?;
    Ok(conflicts)
}

/// The tree of the upgrade merged into the original, the ancestor their merge base, with
/// conflict markers as `git merge` writes them (`HEAD` for the original's side, the upgrade
/// branch's name for the other), and the conflicted paths. The merge runs in the repository
/// `scratch`, a temporary one whose `HEAD` and upgrade branch name the two commits and whose
/// objects are the project's, so that the project's own refs are not touched.
fn merge_tree(
    git: &Git,
    branches: &Branches,
    commits: &Commits,
    scratch: &Path,
) -> Result<(String, Vec<String>)> {
    let objects = git.git_dir().join("objects");
    let scratch_git = |args: &[&str]| {
        let mut cmd = git.command(args);
        cmd.env("GIT_DIR", scratch)
            .env("GIT_OBJECT_DIRECTORY", &objects);
        cmd
    };
    let checked = |args: &[&str]| git.checked(&mut scratch_git(args), args);
    let dir = scratch.to_string_lossy().into_owned();
    checked(&["init", "--quiet", "--bare", &dir])?;
    checked(&["update-ref", "--no-deref", "HEAD", &commits.original])?;
    let upgrade = format!("refs/heads/{}", branches.upgrade);
    checked(&["update-ref", &upgrade, &commits.upgrade])?;
    // the project's own merge settings (conflict style, renames), which the scratch does not read
    let mut args: Vec<String> = Vec::new();
    let settings = git
        .output_raw(&["config", "--local", "--null", "--get-regexp", "^merge\\."])
        .unwrap_or_default();
    for entry in settings.split('\0').filter(|e| !e.is_empty()) {
        let (key, value) = entry.split_once('\n').unwrap_or((entry, "true"));
        args.extend(["-c".to_owned(), format!("{key}={value}")]);
    }
    args.extend(
        [
            "merge-tree",
            "--write-tree",
            "--name-only",
            "-z",
            "HEAD",
            &branches.upgrade,
        ]
        .map(str::to_owned),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = git.run(&mut scratch_git(&args), &args)?;
    // 0: merged cleanly; 1: merged with conflicts; anything else: no merge
    if !matches!(out.status.code(), Some(0 | 1)) {
        return Err(crate::git::failed(&args, &out.stderr));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut fields = stdout.split('\0');
    let tree = fields.next().unwrap_or_default().trim().to_owned();
    let conflicts = fields
        .take_while(|f| !f.is_empty())
        .map(str::to_owned)
        .collect();
    Ok((tree, conflicts))
}

/// What checking out `tree` does to the work tree, which holds `HEAD`'s tree (the update starts
/// from a clean one).
struct Checkout {
    /// Each file written, with its contents.
    written: Vec<(String, String)>,
    /// The files removed.
    removed: Vec<String>,
    /// The directories the removals may leave empty, deepest first.
    pruned: Vec<String>,
}

/// The files that differ between `HEAD`'s tree and `tree`, read from git; an error, before
/// anything is changed, for a change the journal cannot write as a regular text file with the
/// mode it already has.
fn checkout_files(git: &Git, tree: &str) -> Result<Checkout> {
    let diff = git.output_bytes(&["diff-tree", "-r", "-z", "--no-renames", "HEAD", tree])?;
    let diff = String::from_utf8(diff).map_err(|_| {
        Error::msg(
            "the update changes a file whose name is not UTF-8; rename it in the project's branch and run alpha update again",
        )
    })?;
    let mut fields = diff.split('\0').filter(|f| !f.is_empty());
    let mut files = Checkout {
        written: Vec::new(),
        removed: Vec::new(),
        pruned: Vec::new(),
    };
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        // ":<old mode> <new mode> <old object> <new object> <status>"
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, _, object, status] = parts[..] else {
            return Err(Error::msg(format!(
                "cannot read `git diff-tree` line {meta:?}; run alpha update with a git that writes its usual output"
            )));
        };
        let unsupported = |what: &str| {
            Error::msg(format!(
                "alpha update cannot check out {path}: the merge would {what} it; commit {path} as a regular text file or remove it, then run alpha update again"
            ))
        };
        if status == "D" {
            files.removed.push(path.to_owned());
            continue;
        }
        if new_mode != "100644" && new_mode != "100755" {
            return Err(unsupported("make a symbolic link or submodule of"));
        }
        let mode_kept = old_mode == new_mode || (old_mode == "000000" && new_mode == "100644");
        if !mode_kept {
            return Err(unsupported("change the file mode of"));
        }
        let blob = git.output_bytes(&["cat-file", "blob", object])?;
        let text =
            String::from_utf8(blob).map_err(|_| unsupported("write binary contents into"))?;
        files.written.push((path.to_owned(), text));
    }
    for removed in &files.removed {
        for dir in Path::new(removed).ancestors().skip(1) {
            let dir = dir.to_string_lossy().into_owned();
            if !dir.is_empty() && !files.pruned.contains(&dir) {
                files.pruned.push(dir);
            }
        }
    }
    files
        .pruned
        .sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    Ok(files)
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
                    .env_remove(transaction::PAUSE_AFTER)
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
