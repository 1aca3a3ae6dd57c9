//! `operator-gen alpha generate`: re-scaffold a project from its `PROJECT` file with this
//! operator-gen's templates, into a new directory or in place (the old tree moved to a backup
//! directory first), carrying over the user's own code.
//!
//! The project is replayed ([`super::replay`]) through the commands themselves, in this process,
//! into a staging directory beside the output; the user's files are written over that fresh
//! scaffold through one [`Scaffold`]; `manifests` runs; and only then does the staging directory
//! become the output (a rename), so an interrupted run leaves no partial output behind.
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

use super::replay::{self, Step};
use crate::error::{Error, Result};
use crate::printer::{Printer, Verbosity};
use crate::project::{self, Project};
use crate::scaffold::{IfExists, Scaffold};

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
const KEPT_IN_PLACE: &[&str] = &[".git", "target"];

/// The prefixes of the user's code: carried over even where the scaffold writes the file.
const USER_CODE: &[&str] = &["src/api/", "src/controller/", "src/webhook/"];

/// Files carried over even where the scaffold writes them.
const USER_FILES: &[&str] = &[".cargo/config.toml", super::init::BOILERPLATE];

/// Run `alpha generate` from `cwd`.
pub fn run(args: &GenerateArgs, cwd: &Path, printer: &Printer) -> Result<()> {
    let input = absolute(&cwd.join(args.input_dir.as_deref().unwrap_or(Path::new("."))))?;
    let project = Project::load(&input)?;
    match &args.output_dir {
        Some(out) => {
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
            let staging = stage(&project, &input, &out, printer)?;
            if out.exists() {
                std::fs::remove_dir(&out).map_err(|e| Error::io("replace", &out, e))?;
            }
            std::fs::rename(&staging, &out).map_err(|e| Error::io("move into place", &out, e))?;
            printer.hint(&format!(
                "Re-scaffolded {} into {}.",
                input.display(),
                out.display()
            ));
        }
        None => {
            let backup = backup_dir(&input)?;
            if backup.exists() {
                return Err(Error::msg(format!(
                    "backup directory {} exists from an earlier alpha generate; move or delete it, or pass --output-dir",
                    backup.display()
                )));
            }
            let _lock = crate::transaction::lock(&input, printer)?;
            let staging = stage(&project, &input, &input, printer)?;
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

fn absolute(path: &Path) -> Result<PathBuf> {
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

/// `<input>-backup`, beside the input.
fn backup_dir(input: &Path) -> Result<PathBuf> {
    let name = input.file_name().ok_or_else(|| {
        Error::msg(format!(
            "{} has no directory name for a backup beside it; pass --output-dir",
            input.display()
        ))
    })?;
    Ok(input.with_file_name(format!("{}-backup", name.to_string_lossy())))
}

/// The staging directory beside `out`: `.<name>.operator-gen-generate`.
fn staging_dir(out: &Path) -> Result<PathBuf> {
    let name = out.file_name().ok_or_else(|| {
        Error::msg(format!(
            "{} has no directory name; pass --output-dir with a directory name",
            out.display()
        ))
    })?;
    Ok(out.with_file_name(format!(".{}.operator-gen-generate", name.to_string_lossy())))
}

/// Replay `project` into a fresh staging directory beside `out`, carry the input's files over
/// and run `manifests`; returns the staging directory.
fn stage(project: &Project, input: &Path, out: &Path, printer: &Printer) -> Result<PathBuf> {
    let staging = staging_dir(out)?;
    if staging.exists() {
        // what an interrupted run left
        std::fs::remove_dir_all(&staging).map_err(|e| Error::io("remove", &staging, e))?;
    }
    std::fs::create_dir_all(&staging).map_err(|e| Error::io("create", &staging, e))?;
    let result = fill(project, input, &staging, printer);
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    Ok(staging)
}

fn fill(project: &Project, input: &Path, dir: &Path, printer: &Printer) -> Result<()> {
    let read = |rel: &str| std::fs::read_to_string(input.join(rel)).ok();
    let quiet = Printer::new(Verbosity::Quiet);
    for step in replay::steps(project, &read) {
        printer.status("replay", &replay::display(&step));
        match &step {
            Step::Run(args) => crate::cli::run_in(args, dir, &quiet)?,
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
        let bytes = std::fs::read(&path).map_err(|e| Error::io("read", &path, e))?;
        if let Some(fresh) = fresh.get(&rel)
            && std::fs::read(fresh).is_ok_and(|f| f == bytes)
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
    // files that are not text: the staging directory is not the output yet, so a plain copy
    for (rel, path) in binary {
        let target = dir.join(&rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        std::fs::copy(&path, &target).map_err(|e| Error::io("copy", &path, e))?;
        printer.status("carried over", &rel);
    }
    Ok(())
}

/// Every file under `root` (relative path with `/` → path), outside `.git/` and `target/`;
/// symbolic links are not followed.
fn files(root: &Path) -> Result<BTreeMap<String, PathBuf>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, PathBuf>) -> Result<()> {
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io("read", dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("read", dir, e))?;
            let path = entry.path();
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if dir == root && KEPT_IN_PLACE.contains(&rel.as_str()) {
                continue;
            }
            let kind = entry.file_type().map_err(|e| Error::io("read", &path, e))?;
            if kind.is_dir() {
                walk(root, &path, out)?;
            } else if kind.is_file() {
                out.insert(rel, path);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out)?;
    Ok(out)
}

/// In place: move the input's entries (but `.git/` and `target/`) into `backup`, then the
/// staging directory's into the input, and remove the staging directory. Each move is a rename.
fn swap_in(input: &Path, staging: &Path, backup: &Path) -> Result<()> {
    std::fs::create_dir(backup).map_err(|e| Error::io("create", backup, e))?;
    let entries = |dir: &Path| -> Result<Vec<std::ffi::OsString>> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| Error::io("read", dir, e))?
            .flatten()
            .map(|e| e.file_name())
            .collect();
        names.sort();
        Ok(names)
    };
    for name in entries(input)? {
        if KEPT_IN_PLACE.iter().any(|k| name == *k) {
            continue;
        }
        let from = input.join(&name);
        std::fs::rename(&from, backup.join(&name)).map_err(|e| Error::io("move", &from, e))?;
    }
    for name in entries(staging)? {
        let from = staging.join(&name);
        std::fs::rename(&from, input.join(&name)).map_err(|e| Error::io("move", &from, e))?;
    }
    std::fs::remove_dir(staging).map_err(|e| Error::io("remove", staging, e))
}
