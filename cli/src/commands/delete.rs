//! `operator-gen delete api`: its flags, and a run that stages what
//! [`crate::scaffolding::delete`] takes out, asks for confirmation on a terminal and commits.

use std::io::IsTerminal;
use std::path::Path;

use clap::Args;

use crate::error::{Error, Result};
use crate::printer::Printer;
use crate::project::{self, Project, versions};
use crate::scaffold::IfExists;
use crate::scaffolding::delete::{self, Request};

/// Flags of `delete api`.
#[derive(Debug, Args)]
pub struct DeleteApiArgs {
    /// Resource group, as given to `create api`.
    #[arg(long)]
    pub group: String,
    /// Resource version.
    #[arg(long)]
    pub version: String,
    /// Resource kind.
    #[arg(long)]
    pub kind: String,
    /// Delete the types and controller files even when they were edited since `create api`.
    #[arg(long)]
    pub force: bool,
    /// Do not ask for confirmation.
    #[arg(short, long)]
    pub yes: bool,
}

/// Run `delete api` in `root`.
pub fn run(args: &DeleteApiArgs, root: &Path, printer: &Printer) -> Result<()> {
    let mut project = Project::load(root)?;
    let request = Request {
        group: args.group.clone(),
        version: args.version.clone(),
        kind: args.kind.clone(),
    };
    let (mut s, deletion) = delete::stage(&request, &mut project, root)?;
    let (what, undone) = (&deletion.what, &deletion.undone);
    if let Some(file) = undone.edited.first().filter(|_| !args.force) {
        return Err(Error::msg(format!(
            "{file} was edited since `create api` wrote it (it differs from a fresh rendering), so deleting {what} would lose that work; keep a copy and pass --force to delete it"
        )));
    }
    if !args.yes && std::io::stdin().is_terminal() {
        for file in &undone.removed {
            printer.status("remove", file);
        }
        if printer.ask_yes_no(&format!("Delete {what}?")) != Some(true) {
            return Err(Error::msg(format!(
                "deleting {what} was not confirmed, nothing changed; answer y or pass --yes"
            )));
        }
    }

    project.cli_version = Some(versions::CLI.to_owned());
    s.file(project::FILE_NAME, project.render()?, IfExists::Overwrite)?;
    s.check()?;
    s.commit(printer)?;
    for file in &undone.kept {
        printer.warn(&format!(
            "kept {file}: it holds more than what `create api` scaffolded"
        ));
    }
    if deletion.resource {
        printer.hint("Next: regenerate the manifests (RBAC, the CRDs of the kinds left) with:\n$ make manifests");
    }
    Ok(())
}
