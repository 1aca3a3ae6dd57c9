//! The swap of `alpha generate` in place, and its recovery: the complete staging directory
//! `.<dir>.operator-gen-generate` takes the project's place entry by entry, the project's
//! entries (but `.git/` and `target/`) going to `<dir>-backup`.
//!
//! Renaming the staging directory to `.<dir>.operator-gen-generate-ready` is the point of no
//! return; from there [`finish`] completes the swap from wherever it stopped: it moves the
//! project's entries to the backup, renames `ready` to `.<dir>.operator-gen-generate-swap`, moves
//! that directory's entries in and removes it. The project's [`super::recover`] (so every
//! command's lock) calls it, so a command killed half way through the swap leaves the old tree
//! or, once recovered, the new one; before the point of no return the project is untouched.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::printer::Printer;

/// Directories of the project never moved by the swap.
pub const KEPT_IN_PLACE: &[&str] = &[".git", "target"];

/// The staging directory beside `out`: `.<name>.operator-gen-generate`.
pub fn staging_dir(out: &Path) -> Result<PathBuf> {
    let name = out.file_name().ok_or_else(|| {
        Error::msg(format!(
            "{} has no directory name; pass --output-dir with a directory name",
            out.display()
        ))
    })?;
    Ok(out.with_file_name(format!(".{}.operator-gen-generate", name.to_string_lossy())))
}

/// `<input>-backup`, beside the input.
pub fn backup_dir(input: &Path) -> Result<PathBuf> {
    let name = input.file_name().ok_or_else(|| {
        Error::msg(format!(
            "{} has no directory name for a backup beside it; pass --output-dir",
            input.display()
        ))
    })?;
    Ok(input.with_file_name(format!("{}-backup", name.to_string_lossy())))
}

/// The swap's two directories beside the input: `ready` (the staging directory once complete:
/// the input's entries are being moved to the backup) and `swap` (its entries are being moved
/// into the input).
pub fn swap_dirs(input: &Path) -> Result<(PathBuf, PathBuf)> {
    let staging = staging_dir(input)?.to_string_lossy().into_owned();
    Ok((
        PathBuf::from(format!("{staging}-ready")),
        PathBuf::from(format!("{staging}-swap")),
    ))
}

/// A swap of `input` was interrupted past its point of no return: [`finish`] has work to do.
pub fn interrupted(input: &Path) -> bool {
    swap_dirs(input).is_ok_and(|(ready, swap)| ready.is_dir() || swap.is_dir())
}

/// Counts the swap's file operations: `step` is called after each (the test-only pause hook),
/// and a test stops the swap after `left` renames, as a kill would.
pub struct Renames<'a> {
    left: Option<usize>,
    step: &'a mut dyn FnMut(),
}

impl<'a> Renames<'a> {
    /// Every rename done, `step` called after each file operation.
    pub fn new(step: &'a mut dyn FnMut()) -> Renames<'a> {
        Renames { left: None, step }
    }

    fn rename(&mut self, from: &Path, to: &Path) -> Result<()> {
        if let Some(left) = &mut self.left {
            if *left == 0 {
                return Err(Error::msg("stopped"));
            }
            *left -= 1;
        }
        if to.exists() {
            return Err(Error::msg(format!(
                "{} exists, so {} cannot move there; move one of them out of the way and run alpha generate again",
                to.display(),
                from.display()
            )));
        }
        std::fs::rename(from, to).map_err(|e| Error::io("move", from, e))?;
        (self.step)();
        Ok(())
    }
}

fn entries(dir: &Path) -> Result<Vec<OsString>> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Error::io("read", dir, e))?
        .flatten()
        .map(|e| e.file_name())
        .collect();
    names.sort();
    Ok(names)
}

/// Complete a swap of `input` from wherever it stopped, its entries going to `backup`; whether
/// there was one to complete.
pub fn finish(input: &Path, backup: &Path, renames: &mut Renames<'_>) -> Result<bool> {
    let (ready, swap) = swap_dirs(input)?;
    let mut any = false;
    if ready.is_dir() {
        any = true;
        if !backup.is_dir() {
            std::fs::create_dir(backup).map_err(|e| Error::io("create", backup, e))?;
            (renames.step)();
        }
        for name in entries(input)? {
            if KEPT_IN_PLACE.iter().any(|k| name == *k) {
                continue;
            }
            renames.rename(&input.join(&name), &backup.join(&name))?;
        }
        renames.rename(&ready, &swap)?;
    }
    if swap.is_dir() {
        any = true;
        for name in entries(&swap)? {
            renames.rename(&swap.join(&name), &input.join(&name))?;
        }
        std::fs::remove_dir(&swap).map_err(|e| Error::io("remove", &swap, e))?;
        (renames.step)();
    }
    Ok(any)
}

/// Finish the swap an interrupted `alpha generate` left at `input`, saying so; a no-op without
/// one. `step` is called after each file operation.
pub fn recover(input: &Path, printer: &Printer, step: &mut dyn FnMut()) -> Result<()> {
    if !interrupted(input) {
        return Ok(());
    }
    let backup = backup_dir(input)?;
    finish(input, &backup, &mut Renames::new(step))?;
    printer.warn(&format!(
        "finished an interrupted alpha generate: {} holds the re-scaffolded project, {} its previous files",
        input.display(),
        backup.display()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn tree(dir: &Path) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = crate::scaffold::files_under(dir, dir, KEPT_IN_PLACE)
            .expect("walk")
            .into_iter()
            .map(|(rel, path)| (rel, std::fs::read_to_string(path).expect("read")))
            .collect();
        out.sort();
        out
    }

    /// A swap stopped after any number of renames, as a kill would stop it, is completed by the
    /// next run: the input holds the new tree (and its `.git/`), the backup the old one.
    #[test]
    fn a_swap_stopped_anywhere_is_completed() {
        let mut stops = 0;
        for stop in 0.. {
            let tmp = tempfile::tempdir().expect("tempdir");
            let input = tmp.path().join("demo");
            let backup = tmp.path().join("demo-backup");
            write(&input, "Makefile", "old\n");
            write(&input, "src/main.rs", "// old\n");
            write(&input, ".git/HEAD", "ref: refs/heads/main\n");
            let staging = staging_dir(&input).expect("staging");
            write(&staging, "Makefile", "new\n");
            write(&staging, "src/main.rs", "// new\n");
            write(&staging, "src/fleet.rs", "// new\n");
            let (ready, swap) = swap_dirs(&input).expect("dirs");
            std::fs::rename(&staging, &ready).expect("ready");
            let mut ops = 0;
            let mut count = || ops += 1;
            let mut stopping = Renames {
                left: Some(stop),
                step: &mut count,
            };
            let stopped = finish(&input, &backup, &mut stopping).is_err();
            if stopped {
                stops += 1;
                assert!(interrupted(&input), "after {stop} renames");
                assert!(
                    finish(&input, &backup, &mut Renames::new(&mut || {})).expect("finish"),
                    "after {stop} renames there is a swap to finish"
                );
            } else {
                // the backup made, five renames, the swap directory removed
                assert_eq!(ops, 7);
            }
            assert!(!ready.exists() && !swap.exists());
            assert!(!interrupted(&input));
            let new: Vec<(String, String)> = [
                ("Makefile", "new\n"),
                ("src/fleet.rs", "// new\n"),
                ("src/main.rs", "// new\n"),
            ]
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect();
            assert_eq!(tree(&input), new, "stopped after {stop} renames");
            assert!(input.join(".git/HEAD").is_file());
            let old: Vec<(String, String)> = [("Makefile", "old\n"), ("src/main.rs", "// old\n")]
                .iter()
                .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
                .collect();
            assert_eq!(tree(&backup), old, "stopped after {stop} renames");
            if !stopped {
                break;
            }
        }
        assert_eq!(
            stops, 5,
            "two moves to the backup, the rename to swap, two moves in"
        );
    }
}
