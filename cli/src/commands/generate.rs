//! `operator-gen alpha generate`: re-scaffold a project from its `PROJECT` file with this
//! operator-gen's templates, into a new directory or in place (the old tree moved to a backup
//! directory first), carrying over the user's own code.
//!
//! The project is replayed ([`super::replay`]) through the commands themselves, in this process,
//! into a staging directory beside the output; the user's files are written over that fresh
//! scaffold through one [`Scaffold`]; `manifests` runs; and only then does the staging directory
//! become the output (a rename), so an interrupted run leaves no partial output behind. In place,
//! the complete staging directory is renamed `.<dir>.operator-gen-generate-ready` (the point of
//! no return), the input's entries but `.git/` and `target/` move to `<dir>-backup` and the
//! staging directory's into the input, each a rename ([`crate::transaction::swap`]); a run
//! interrupted there is finished by the next command that takes the project's lock (its
//! recovery), `alpha generate` among them, which then stops there.
//!
//! Carried over from the input, whatever the fresh scaffold holds there: every file under
//! `src/api/` (types, conversions, `mod.rs`), `src/controller/` (controller bodies) and
//! `src/webhook/` (webhook bodies), the local cargo config `.cargo/config.toml` and the license
//! header `hack/boilerplate.rs.txt`; and every file the fresh scaffold does not write (the
//! user's own modules, `Cargo.lock`, generated manifests, …). Not carried over: `PROJECT`
//! (written again by the replay), `.git/` and `target/`, and the user's changes to other files
//! the scaffold writes (`Cargo.toml`, `src/main.rs`, the Makefile, config/, tests/…), which come
//! fresh: they are in the input (or its backup) to merge by hand; `alpha update` merges them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;

use super::replay::{self, Runner, Step};
use crate::error::{Error, Result};
use crate::printer::{Printer, Verbosity};
use crate::project::{self, Project};
use crate::scaffold::{IfExists, Scaffold};
use crate::transaction::{Steps, swap};

/// Flags of `alpha generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The project to re-scaffold, the directory holding `PROJECT` (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub input_dir: Option<PathBuf>,
    /// Where the re-scaffolded project goes: a new or empty directory outside the input (default:
    /// the input itself, after its files are moved to `<input>-backup`).
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
}

/// Directories of the input never carried over nor moved to the backup.
const KEPT_IN_PLACE: &[&str] = swap::KEPT_IN_PLACE;

/// The prefixes of the user's code: carried over even where the scaffold writes the file.
const USER_CODE: &[&str] = &["src/api/", "src/controller/", "src/webhook/"];

/// Files carried over even where the scaffold writes them.
const USER_FILES: &[&str] = &[
    ".cargo/config.toml",
    crate::project::boilerplate::BOILERPLATE,
];

/// Run `alpha generate` from `cwd`, replaying the project's commands through `runner`.
pub fn run(args: &GenerateArgs, cwd: &Path, printer: &Printer, runner: Runner) -> Result<()> {
    let input = absolute(&cwd.join(args.input_dir.as_deref().unwrap_or(Path::new("."))))?;
    match &args.output_dir {
        Some(out) => {
            if !input.join(project::FILE_NAME).exists() {
                // no project: say so before taking a lock
                Project::load(&input)?;
            }
            let out = absolute(&cwd.join(out))?;
            if out.starts_with(&input) {
                return Err(Error::msg(format!(
                    "--output-dir {} is inside the input directory {}; pass a directory outside the project, or no --output-dir to re-scaffold in place",
                    out.display(),
                    input.display()
                )));
            }
            if std::fs::read_dir(&out).is_ok_and(|mut entries| entries.next().is_some()) {
                return Err(Error::msg(format!(
                    "output directory {} is not empty; pass a new or empty directory to --output-dir",
                    out.display()
                )));
            }
            if out.exists() && !out.is_dir() {
                return Err(Error::msg(format!(
                    "output directory {} is a file; pass a new or empty directory to --output-dir",
                    out.display()
                )));
            }
            // PROJECT and the files it names read under the lock, held until the output is in
            // place: all of one state, never half of another command's commit
            let _lock = crate::transaction::lock(&input, printer)?;
            let project = Project::load(&input)?;
            let staging = stage(&project, &input, &out, printer, runner)?;
            let mut steps = Steps::from_env();
            if out.exists() {
                std::fs::remove_dir(&out).map_err(|e| Error::io("replace", &out, e))?;
                steps.done();
            }
            std::fs::rename(&staging, &out).map_err(|e| Error::io("move into place", &out, e))?;
            steps.done();
            printer.hint(&format!(
                "Re-scaffolded {} into {}.",
                input.display(),
                out.display()
            ));
        }
        None => {
            let backup = swap::backup_dir(&input)?;
            if !input.join(project::FILE_NAME).exists() && !swap::interrupted(&input) {
                // no project and no interrupted swap: say so before taking a lock
                Project::load(&input)?;
            }
            let _lock = crate::transaction::lock_dir(&input, printer)?;
            // an interrupted swap is finished by the recovery (saying so), and that is the run
            let interrupted = swap::interrupted(&input);
            crate::transaction::recover(&input, printer)?;
            if interrupted {
                return Ok(());
            }
            let project = Project::load(&input)?;
            if backup.exists() {
                return Err(Error::msg(format!(
                    "backup directory {} exists from an earlier alpha generate; move or delete it, or pass --output-dir",
                    backup.display()
                )));
            }
            let staging = stage(&project, &input, &input, printer, runner)?;
            swap_in(&input, &staging, &backup)?;
            printer.hint(&format!(
                "Re-scaffolded {} in place; its previous files are in {}.",
                input.display(),
                backup.display()
            ));
        }
    }
    Ok(())
}

/// `path` made absolute, `.` and `..` taken as the user means them (links not resolved).
pub(crate) fn absolute(path: &Path) -> Result<PathBuf> {
    let abs = std::path::absolute(path).map_err(|e| Error::io("resolve", path, e))?;
    // `a/./b/..` as the user means it, without resolving symbolic links
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Replay `project` into a fresh staging directory beside `out`, carry the input's files over
/// and run `manifests`; returns the staging directory.
fn stage(
    project: &Project,
    input: &Path,
    out: &Path,
    printer: &Printer,
    runner: Runner,
) -> Result<PathBuf> {
    let staging = swap::staging_dir(out)?;
    // each file operation counts for the test-only pause hook (the commits count their own)
    let mut steps = Steps::from_env();
    if staging.exists() {
        // what an interrupted run left
        std::fs::remove_dir_all(&staging).map_err(|e| Error::io("remove", &staging, e))?;
        steps.done();
    }
    std::fs::create_dir_all(&staging).map_err(|e| Error::io("create", &staging, e))?;
    steps.done();
    let result = fill(project, input, &staging, printer, runner);
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    Ok(staging)
}

fn fill(
    project: &Project,
    input: &Path,
    dir: &Path,
    printer: &Printer,
    runner: Runner,
) -> Result<()> {
    let read = |rel: &str| crate::gate::read_text_lenient(&input.join(rel));
    let quiet = Printer::new(Verbosity::Quiet);
    for step in replay::steps(project, &read) {
        printer.status("replay", &replay::display(&step));
        match &step {
            Step::Run(args) => runner(args, dir, &quiet)?,
            Step::Copy(rel) => {
                if let Some(text) = read(rel) {
                    let mut s = Scaffold::new(dir);
                    s.file(rel, text, IfExists::Overwrite)?;
                    s.commit(&quiet)?;
                }
            }
        }
    }
    carry_over(input, dir, printer)?;
    let opts = crate::manifests::ManifestsOptions {
        root: Some(dir.to_path_buf()),
        max_desc_len: None,
        allow_dangerous_types: false,
        role_name: "manager-role".to_owned(),
        cache: crate::manifests::Cache::Off,
        max_crd_size: None,
        allow_oversized_crds: false,
    };
    if let Err(e) = crate::manifests::run(&opts, &quiet) {
        printer.warn(&format!(
            "manifests failed on the carried-over code: {e}; fix it and run `make manifests`"
        ));
    }
    Ok(())
}

/// Write the input's files that are the user's over the fresh scaffold in `dir`.
fn carry_over(input: &Path, dir: &Path, printer: &Printer) -> Result<()> {
    let fresh = files(dir)?;
    let mut s = Scaffold::new(dir);
    let mut binary = Vec::new();
    let mut links = Vec::new();
    for (rel, path) in files(input)? {
        if rel == project::FILE_NAME {
            continue;
        }
        let users = !fresh.contains_key(&rel)
            || USER_FILES.contains(&rel.as_str())
            || USER_CODE.iter().any(|p| rel.starts_with(p));
        if !users {
            continue;
        }
        if path.is_symlink() {
            links.push((rel, path));
            continue;
        }
        let bytes = match crate::gate::read(&path) {
            Ok((_, bytes)) => bytes,
            // a large file is carried over as it is, copied
            Err(crate::gate::Refusal::TooLarge(..)) => {
                binary.push((rel, path));
                continue;
            }
            Err(refused) => return Err(refused.into_error(&path)),
        };
        if let Some(fresh) = fresh.get(&rel)
            && crate::gate::read(fresh).is_ok_and(|(_, f)| f == bytes)
        {
            continue;
        }
        match String::from_utf8(bytes) {
            Ok(text) => s.file(&rel, text, IfExists::Overwrite)?,
            Err(_) => binary.push((rel, path)),
        }
    }
    let quiet = Printer::new(Verbosity::Quiet);
    for (path, _, _) in s.pending() {
        printer.status("carried over", &path.to_string_lossy());
    }
    s.commit(&quiet)?;
    let mut steps = Steps::from_env();
    // files that are not text: the staging directory is not the output yet, so a plain copy
    for (rel, path) in binary {
        let target = dir.join(&rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
            steps.done();
        }
        std::fs::copy(&path, &target).map_err(|e| Error::io("copy", &path, e))?;
        steps.done();
        printer.status("carried over", &rel);
    }
    for (rel, path) in links {
        let target = dir.join(&rel);
        let to = std::fs::read_link(&path).map_err(|e| Error::io("read", &path, e))?;
        if target.symlink_metadata().is_ok() {
            std::fs::remove_file(&target).map_err(|e| Error::io("replace", &target, e))?;
            steps.done();
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
            steps.done();
        }
        link(&to, &target)?;
        steps.done();
        printer.status("carried over", &rel);
    }
    Ok(())
}

#[cfg(unix)]
fn link(to: &Path, at: &Path) -> Result<()> {
    std::os::unix::fs::symlink(to, at).map_err(|e| Error::io("link", at, e))
}

#[cfg(not(unix))]
fn link(to: &Path, at: &Path) -> Result<()> {
    std::fs::copy(to, at)
        .map(|_| ())
        .map_err(|e| Error::io("copy", to, e))
}

/// Every file and symbolic link (not followed) under `root` (relative path with `/` → path),
/// outside `.git/` and `target/`.
fn files(root: &Path) -> Result<BTreeMap<String, PathBuf>> {
    crate::scaffold::files_under(root, root, KEPT_IN_PLACE)
}

/// In place: the complete staging directory takes the input's place, the input's entries (but
/// `.git/` and `target/`) going to `backup` (see [`swap`]).
fn swap_in(input: &Path, staging: &Path, backup: &Path) -> Result<()> {
    let (ready, swap_dir) = swap::swap_dirs(input)?;
    let mut steps = Steps::from_env();
    std::fs::rename(staging, &ready).map_err(|e| Error::io("move", staging, e))?;
    steps.done();
    let Err(e) = swap::finish(input, backup, &mut swap::Renames::new(&mut || steps.done())) else {
        return Ok(());
    };
    let moved = std::fs::read_dir(backup).is_ok_and(|mut entries| entries.next().is_some());
    if ready.is_dir() && !moved {
        // nothing of the input moved yet (it cannot be written, say): undo the swap's start,
        // so that nothing stays beside the project
        let _ = std::fs::remove_dir_all(&ready);
        let _ = std::fs::remove_dir(backup);
        return Err(e);
    }
    let new = if ready.is_dir() { ready } else { swap_dir };
    Err(Error::msg(format!(
        "{e} (alpha generate stopped part way through swapping the re-scaffolded project in: {} holds the files not yet moved in, {} the previous files moved out so far; fix the cause and run alpha generate again to finish the swap)",
        new.display(),
        backup.display()
    )))
}
