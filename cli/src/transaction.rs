//! Writing a change set all or nothing: a lock on the project directory serialises commands, and
//! a journal at the project root lets the next command finish (roll forward) or undo (roll back)
//! a commit that was killed half way, so the tree is always the old one or the new one.
//!
//! A commit runs in four steps:
//! 1. the journal `.operator-gen-journal` is written (to `.operator-gen-journal.new`, then
//!    renamed) in state `prepare`, naming every directory to create and every file to write;
//! 2. the directories are created and each file's new contents staged beside it as
//!    `.<name>.operator-gen-new`;
//! 3. the journal is rewritten in state `commit`: this rename is the point of no return;
//! 4. each staged file is renamed over its target, the files to remove are removed, then the
//!    directories to prune that the removals left empty, and the journal is removed.
//!
//! [`lock`] takes the lock and then [`recover`]s: a journal in state `prepare` is rolled back
//! (staged files and created directories removed), one in state `commit` rolled forward (the
//! remaining staged files renamed into place, the removals and prunings done). Both are idempotent, so a kill during recovery is
//! recovered by the next command too. Recovery first finishes the [`swap`] of an `alpha
//! generate` in place killed past its point of no return.
//!
//! Test-only hook: with `OPERATOR_GEN_TEST_PAUSE_AFTER=N` the process prints
//! `paused after file operation N` on stderr after its Nth file operation and waits for a line
//! (or end of file) on stdin, so a test can SIGKILL it at every point of a command, or hold it
//! there while it starts a second command. [`Steps`] counts them for the whole process: each
//! commit's, and those of the commands that write outside the journal (`alpha migrate`, `alpha
//! generate` and `envtest use`: their staging directories, the lock, the renames into place and
//! the clean-ups).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::git::{Git, Switch};
use crate::printer::Printer;

pub mod swap;

/// The journal's file name at the project root.
pub const JOURNAL: &str = ".operator-gen-journal";
/// The journal being written, before its rename.
const JOURNAL_NEW: &str = ".operator-gen-journal.new";
/// The suffix of a staged file: `dir/.name.operator-gen-new` stands for `dir/name`.
const STAGED_SUFFIX: &str = ".operator-gen-new";
/// The test-only variable that pauses a commit after its Nth file operation.
pub const PAUSE_AFTER: &str = "OPERATOR_GEN_TEST_PAUSE_AFTER";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum State {
    /// Staging: nothing the user sees has changed yet; recovery rolls back.
    Prepare,
    /// Every file is staged; recovery rolls forward.
    Commit,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    state: State,
    /// Directories the commit creates, relative to the root, parents first.
    dirs: Vec<String>,
    /// Files the commit writes, relative to the root.
    files: Vec<String>,
    /// Files the commit removes, relative to the root (after the writes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    removed: Vec<String>,
    /// Directories removed when the removals left them empty, deepest first (after the
    /// removals); one that still holds anything stays.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pruned: Vec<String>,
    /// What the commit then does in the project's git repository (`alpha update`), once the
    /// files, removals and prunings are done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    git: Option<Switch>,
}

/// One file of a commit.
#[derive(Debug)]
pub struct Change<'a> {
    /// Path relative to the root, `/`-separated.
    pub rel: &'a str,
    /// The new contents.
    pub content: &'a str,
}

/// The exclusive lock on a project directory; released when dropped.
#[derive(Debug)]
pub struct ProjectLock {
    _file: File,
}

/// Lock the project at `root` (waiting, with a message, while another command holds it), then
/// recover any commit an interrupted command left behind.
pub fn lock(root: &Path, printer: &Printer) -> Result<ProjectLock> {
    let lock = lock_dir(root, printer)?;
    recover(root, printer)?;
    Ok(lock)
}

/// Lock the directory `root` (waiting, with a message, while another command holds it), without
/// recovering anything: for a directory that is not a project (a cache, the parent an output
/// directory is made in), whose writer keeps it whole by a rename of its own.
pub fn lock_dir(root: &Path, printer: &Printer) -> Result<ProjectLock> {
    let file = open_lock_file(root)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            printer.warn(&format!(
                "another operator-gen command is changing {}; waiting for it to finish",
                root.display()
            ));
            file.lock()
                .map_err(|e| Error::io("lock the directory", root, e))?;
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(Error::io("lock the directory", root, e));
        }
    }
    Ok(ProjectLock { _file: file })
}

/// The file the lock is taken on: the project directory itself where the OS allows it (nothing
/// is added to the tree), else `.operator-gen.lock` in it.
#[cfg(unix)]
fn open_lock_file(root: &Path) -> Result<File> {
    File::open(root).map_err(|e| Error::io("open the directory", root, e))
}

#[cfg(not(unix))]
fn open_lock_file(root: &Path) -> Result<File> {
    let path = root.join(".operator-gen.lock");
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io("create the lock file", &path, e))
}

/// Finish or undo the commit an interrupted command left at `root`, after finishing an
/// interrupted `alpha generate` swap of `root` ([`swap::recover`]); a no-op without either.
pub fn recover(root: &Path, printer: &Printer) -> Result<()> {
    swap::recover(root, printer, &mut || Steps::from_env().done())?;
    remove_if_present(&root.join(JOURNAL_NEW))?;
    let path = root.join(JOURNAL);
    let Some(text) = crate::gate::read_text(&path)? else {
        return Ok(());
    };
    let journal: Journal = serde_json::from_str(&text).map_err(|e| {
        Error::msg(format!(
            "{} is not a journal operator-gen can read ({e}); remove it and any `.*{STAGED_SUFFIX}` files next to the project's files",
            path.display()
        ))
    })?;
    match journal.state {
        State::Prepare => {
            for rel in &journal.files {
                remove_if_present(&staged_path(&root.join(rel)))?;
            }
            for rel in journal.dirs.iter().rev() {
                // Only an empty directory goes: anything put there since is the user's.
                let _ = std::fs::remove_dir(root.join(rel));
            }
            remove_if_present(&path)?;
            printer.warn(
                "an earlier operator-gen command was interrupted before it changed anything; its staged files were removed",
            );
        }
        State::Commit => {
            for rel in &journal.files {
                let target = root.join(rel);
                let staged = staged_path(&target);
                if staged.exists() {
                    std::fs::rename(&staged, &target)
                        .map_err(|e| Error::io("finish writing", &target, e))?;
                }
            }
            for rel in &journal.removed {
                remove_if_present(&root.join(rel))?;
            }
            for rel in &journal.pruned {
                remove_dir_if_empty(&root.join(rel));
            }
            if let Some(switch) = &journal.git {
                switch.apply(&Git::at(root)?, &mut || {})?;
            }
            remove_if_present(&path)?;
            let mut finished: Vec<String> = journal
                .files
                .iter()
                .chain(&journal.removed)
                .cloned()
                .collect();
            if let Some(switch) = &journal.git {
                finished.push(format!("git branch {} checked out", switch.head));
            }
            printer.warn(&format!(
                "an earlier operator-gen command was interrupted while writing its files; finished writing {}",
                finished.join(", ")
            ));
        }
    }
    Ok(())
}

/// Write `changes` under `root` all or nothing (see the module documentation). The caller holds
/// the [`lock`]. An error before the point of no return leaves the tree as it was.
pub fn commit(root: &Path, changes: &[Change<'_>]) -> Result<()> {
    commit_removing(root, changes, &[])
}

/// [`commit`], which also removes the files `removed` (relative to `root`) once the writes are
/// in place: a kill after the point of no return finishes the removals on recovery, one before
/// it leaves them.
pub fn commit_removing(root: &Path, changes: &[Change<'_>], removed: &[String]) -> Result<()> {
    commit_pruning(root, changes, removed, &[])
}

/// [`commit_removing`], which then also removes each directory of `pruned` (relative to `root`,
/// deepest first) that the removals left empty; one that still holds anything stays. A kill
/// after the point of no return finishes the pruning on recovery.
pub fn commit_pruning(
    root: &Path,
    changes: &[Change<'_>],
    removed: &[String],
    pruned: &[String],
) -> Result<()> {
    commit_switching(root, changes, removed, pruned, None)
}

/// [`commit_pruning`], which then, when `git` is given, sets the branches of the git repository
/// at `root` and checks one out ([`Switch::apply`]): the work tree's files first, so that a kill
/// after the point of no return leaves the rest to recovery, which repeats the switch whole.
pub fn commit_switching(
    root: &Path,
    changes: &[Change<'_>],
    removed: &[String],
    pruned: &[String],
    git: Option<&Switch>,
) -> Result<()> {
    if changes.is_empty() && removed.is_empty() && git.is_none() {
        return Ok(());
    }
    if !root.is_dir() {
        std::fs::create_dir_all(root).map_err(|e| write_error(root, e))?;
    }
    let mut steps = Steps::from_env();
    let mut dirs: Vec<String> = Vec::new();
    for change in changes {
        let mut missing = Vec::new();
        let mut dir = Path::new(change.rel).parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            if root.join(d).is_dir() {
                break;
            }
            missing.push(d.to_string_lossy().replace('\\', "/"));
            dir = d.parent();
        }
        for d in missing.into_iter().rev() {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    let mut journal = Journal {
        state: State::Prepare,
        dirs,
        files: changes.iter().map(|c| c.rel.to_owned()).collect(),
        removed: removed.to_vec(),
        pruned: pruned.to_vec(),
        git: git.cloned(),
    };
    write_journal(root, &journal, &mut steps)?;
    if let Err(e) = stage(root, &journal, changes, &mut steps) {
        roll_back(root, &journal);
        return Err(e);
    }
    journal.state = State::Commit;
    if let Err(e) = write_journal(root, &journal, &mut steps) {
        roll_back(root, &journal);
        return Err(e);
    }
    for rel in &journal.files {
        let target = root.join(rel);
        std::fs::rename(staged_path(&target), &target).map_err(|e| {
            Error::msg(format!(
                "cannot finish writing {}: {e}; fix the cause and run any operator-gen command in the project to finish the change",
                target.display()
            ))
        })?;
        steps.done();
    }
    for rel in &journal.removed {
        let target = root.join(rel);
        remove_if_present(&target).map_err(|e| {
            Error::msg(format!(
                "{e}; fix the cause and run any operator-gen command in the project to finish the change"
            ))
        })?;
        steps.done();
    }
    for rel in &journal.pruned {
        remove_dir_if_empty(&root.join(rel));
        steps.done();
    }
    if let Some(switch) = &journal.git {
        // an error leaves the journal, so that the next command (alpha update again) finishes
        switch.apply(&Git::at(root)?, &mut || steps.done())?;
    }
    sync_dir(root);
    std::fs::remove_file(root.join(JOURNAL)).map_err(|e| write_error(root, e))?;
    steps.done();
    Ok(())
}

fn stage(root: &Path, journal: &Journal, changes: &[Change<'_>], steps: &mut Steps) -> Result<()> {
    for rel in &journal.dirs {
        let dir = root.join(rel);
        std::fs::create_dir(&dir).map_err(|e| write_error(&dir, e))?;
        steps.done();
    }
    for change in changes {
        let target = root.join(change.rel);
        let dir = target.parent().unwrap_or(root);
        let staged = staged_path(&target);
        let mut file = File::create(&staged).map_err(|e| write_error(dir, e))?;
        // Two writes, so a test can kill the command with a half-written staged file.
        let bytes = change.content.as_bytes();
        let (first, second) = bytes.split_at(bytes.len() / 2);
        file.write_all(first).map_err(|e| write_error(dir, e))?;
        steps.done();
        // No fsync per file: the journal's sync orders the commit point, and a kill (unlike a
        // power loss) cannot lose data the kernel already holds.
        file.write_all(second).map_err(|e| write_error(dir, e))?;
        drop(file);
        copy_permissions(&staged, &target)?;
        steps.done();
    }
    Ok(())
}

/// Undo an unfinished prepare step in this process (best effort: the journal stays when
/// anything cannot be removed, so the next command retries).
fn roll_back(root: &Path, journal: &Journal) {
    let mut clean = true;
    for rel in &journal.files {
        clean &= remove_if_present(&staged_path(&root.join(rel))).is_ok();
    }
    for rel in journal.dirs.iter().rev() {
        let dir = root.join(rel);
        if dir.exists() {
            clean &= std::fs::remove_dir(&dir).is_ok();
        }
    }
    let _ = remove_if_present(&root.join(JOURNAL_NEW));
    if clean {
        let _ = remove_if_present(&root.join(JOURNAL));
    }
}

fn write_journal(root: &Path, journal: &Journal, steps: &mut Steps) -> Result<()> {
    let new = root.join(JOURNAL_NEW);
    let text = serde_json::to_string_pretty(journal)
        .map_err(|e| Error::msg(format!("cannot serialize the journal: {e}")))?;
    let written = File::create(&new).and_then(|mut file| {
        file.write_all(text.as_bytes())?;
        file.sync_all()
    });
    let placed = written.and_then(|()| {
        steps.done();
        std::fs::rename(&new, root.join(JOURNAL))
    });
    if let Err(e) = placed {
        // a journal that is not in place is nothing: no file of it stays (a full disk leaves
        // an empty one otherwise)
        let _ = remove_if_present(&new);
        return Err(write_error(root, e));
    }
    sync_dir(root);
    steps.done();
    Ok(())
}

fn staged_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}{STAGED_SUFFIX}"))
}

fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("remove", path, e)),
    }
}

/// Remove `dir` when it is empty; anything else (absent, not empty, not removable) leaves it.
fn remove_dir_if_empty(dir: &Path) {
    let empty = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none());
    if empty {
        let _ = std::fs::remove_dir(dir);
    }
}

fn write_error(dir: &Path, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        Error::msg(format!(
            "cannot write in {}: permission denied; make the directory writable (chmod u+w) or run operator-gen as its owner",
            dir.display()
        ))
    } else {
        Error::io("write in", dir, e)
    }
}

/// Make the directory entry changes durable (best effort: not every platform can sync a directory).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(unix)]
fn copy_permissions(staged: &Path, target: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let perms = match std::fs::metadata(target) {
        Ok(m) => m.permissions(),
        Err(_) => std::fs::Permissions::from_mode(0o644),
    };
    std::fs::set_permissions(staged, perms).map_err(|e| Error::io("set permissions on", staged, e))
}

#[cfg(not(unix))]
fn copy_permissions(_staged: &Path, _target: &Path) -> Result<()> {
    Ok(())
}

/// How many [`scratch`] calls are running: their file operations are not the command's own
/// and neither count nor pause.
static SCRATCH_COMMITS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Run `work`, whose commits write a temporary directory (a replay of the project's commands
/// into a scratch tree that nothing keeps after a kill), with the test-only pause hook off: it
/// counts and pauses only the command's own file operations.
pub fn scratch<T>(work: impl FnOnce() -> T) -> T {
    use std::sync::atomic::Ordering;
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            SCRATCH_COMMITS.fetch_sub(1, Ordering::Relaxed);
        }
    }
    SCRATCH_COMMITS.fetch_add(1, Ordering::Relaxed);
    let _done = Done;
    work()
}

/// The file operations counted so far in this process, by every [`Steps`].
static STEPS_DONE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts file operations for the test-only pause hook ([`PAUSE_AFTER`]): one count for the
/// whole process, so the Nth operation is the command's Nth, whether a commit does it or a
/// command that writes outside the journal (a staging directory renamed into place); the
/// operations of a [`scratch`] replay are left out.
pub struct Steps {
    pause_after: Option<u64>,
}

impl Steps {
    /// The hook as [`PAUSE_AFTER`] sets it (none without the variable).
    pub fn from_env() -> Steps {
        Steps {
            pause_after: std::env::var(PAUSE_AFTER).ok().and_then(|v| v.parse().ok()),
        }
    }

    /// One file operation done: the Nth pauses (see the module documentation).
    pub fn done(&mut self) {
        if SCRATCH_COMMITS.load(std::sync::atomic::Ordering::Relaxed) > 0 {
            return;
        }
        let done = STEPS_DONE.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        if self.pause_after == Some(done) {
            let _ = writeln!(
                std::io::stderr().lock(),
                "paused after file operation {done}"
            );
            let _ = std::io::stdin().read_line(&mut String::new());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::printer::Verbosity;

    fn files(root: &Path) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
                .map(|r| r.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            entries.sort();
            for p in entries {
                let rel = p
                    .strip_prefix(root)
                    .map(|r| r.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if p.is_dir() {
                    out.push(format!("{rel}/"));
                    walk(root, &p, out);
                } else {
                    let text = std::fs::read_to_string(&p).unwrap_or_default();
                    out.push(format!("{rel}={text}"));
                }
            }
        }
        let mut out = Vec::new();
        walk(root, root, &mut out);
        out
    }

    #[test]
    fn commit_writes_files_and_leaves_no_journal() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("old"), "old").expect("write");
        commit(
            dir.path(),
            &[
                Change {
                    rel: "a/b/new",
                    content: "new",
                },
                Change {
                    rel: "old",
                    content: "changed",
                },
            ],
        )
        .expect("commit");
        assert_eq!(
            files(dir.path()),
            ["a/", "a/b/", "a/b/new=new", "old=changed"]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_journal_that_cannot_be_written_leaves_no_file() {
        // the journal's temporary file on a full disk: /dev/full refuses every write
        let dir = tempfile::tempdir().expect("tempdir");
        std::os::unix::fs::symlink("/dev/full", dir.path().join(JOURNAL_NEW)).expect("symlink");
        let e = commit(
            dir.path(),
            &[Change {
                rel: "a",
                content: "a",
            }],
        )
        .expect_err("the disk is full");
        assert!(e.to_string().contains("the disk is full"), "{e}");
        // names only: what is left of the journal may still lead to /dev/full
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("read dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "left: {left:?}");
    }

    #[test]
    fn prepare_journal_rolls_back_and_commit_journal_rolls_forward() {
        let printer = Printer::new(Verbosity::Quiet);
        for state in [State::Prepare, State::Commit] {
            let dir = tempfile::tempdir().expect("tempdir");
            let root = dir.path();
            std::fs::write(root.join("old"), "old").expect("write");
            std::fs::write(root.join("gone"), "gone").expect("write");
            std::fs::create_dir_all(root.join("d")).expect("mkdir");
            std::fs::write(root.join("d/gone"), "gone").expect("write");
            std::fs::create_dir_all(root.join("kept")).expect("mkdir");
            std::fs::write(root.join("kept/k"), "k").expect("write");
            std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
            std::fs::write(root.join("a/b/.new.operator-gen-new"), "new").expect("write");
            std::fs::write(root.join(".old.operator-gen-new"), "changed").expect("write");
            std::fs::write(root.join(JOURNAL_NEW), "half a jour").expect("write");
            let journal = Journal {
                state,
                dirs: vec!["a".into(), "a/b".into()],
                files: vec!["a/b/new".into(), "old".into()],
                removed: vec!["gone".into(), "d/gone".into()],
                pruned: vec!["d".into(), "kept".into()],
                git: None,
            };
            std::fs::write(
                root.join(JOURNAL),
                serde_json::to_string(&journal).expect("json"),
            )
            .expect("write");
            recover(root, &printer).expect("recover");
            let expected: &[&str] = match state {
                State::Prepare => &[
                    "d/",
                    "d/gone=gone",
                    "gone=gone",
                    "kept/",
                    "kept/k=k",
                    "old=old",
                ],
                // `d` emptied by the removals goes; `kept` still holds a file and stays
                State::Commit => &[
                    "a/",
                    "a/b/",
                    "a/b/new=new",
                    "kept/",
                    "kept/k=k",
                    "old=changed",
                ],
            };
            assert_eq!(files(root), expected, "{state:?}");
            recover(root, &printer).expect("recover twice");
            assert_eq!(files(root), expected, "{state:?} twice");
        }
    }

    #[test]
    fn a_second_lock_waits_for_the_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let printer = Printer::new(Verbosity::Quiet);
        let first = lock(dir.path(), &printer).expect("lock");
        let other = open_lock_file(dir.path()).expect("open");
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(first);
        other.try_lock().expect("free after the first is dropped");
    }
}
