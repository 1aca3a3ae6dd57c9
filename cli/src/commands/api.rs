//! `operator-gen create api`: its flags, and a run that plans and stages the scaffold
//! ([`crate::scaffolding::api`]) and commits it.

use std::io::IsTerminal;
use std::path::Path;

use clap::{ArgAction, Args};

use crate::error::Result;
use crate::printer::Printer;
use crate::project::Project;
use crate::scaffolding::api::{self, Request};
use crate::scaffolding::deploy_image::Options as DeployImage;

/// Flags of `create api`.
#[derive(Debug, Args)]
pub struct ApiArgs {
    /// Resource group, e.g. `crew` (API group `crew.<domain>`), or a built-in group such as `apps`.
    #[arg(long)]
    pub group: String,
    /// Resource version, e.g. `v1`.
    #[arg(long)]
    pub version: String,
    /// Resource kind, e.g. `Captain`.
    #[arg(long)]
    pub kind: String,
    /// Resource plural (default: the kind's English plural in lower case, as controller-gen derives it).
    #[arg(long)]
    pub plural: Option<String>,
    /// Namespace-scoped resource (default); `--namespaced=false` makes it cluster-scoped.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, value_name = "BOOL")]
    pub namespaced: Option<bool>,
    /// Scaffold the resource type; asks when omitted on a terminal, else assumes true.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, value_name = "BOOL")]
    pub resource: Option<bool>,
    /// Scaffold the controller; asks when omitted on a terminal, else assumes true.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, value_name = "BOOL")]
    pub controller: Option<bool>,
    /// Store this version in etcd: for a new version of a kind, moves `+kubebuilder:storageversion`
    /// from the version that has it to this one (default: the existing version keeps storing).
    #[arg(long)]
    pub storage: bool,
    /// Overwrite existing type and controller files.
    #[arg(long)]
    pub force: bool,
    /// Answer yes to every question.
    #[arg(short, long)]
    pub yes: bool,
    /// The deploy-image plugin: scaffold a kind (spec `size`) whose controller deploys and keeps
    /// a Deployment of this image, e.g. `memcached:1.6.26-alpine` (recorded in PROJECT).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// With --image: the container's command, its words separated by commas
    /// (e.g. `memcached,--memory-limit=64,-v`).
    #[arg(long, requires = "image", value_name = "CMD")]
    pub image_container_command: Option<String>,
    /// With --image: the container's port, also a `containerPort` field of the spec.
    #[arg(long, requires = "image", value_name = "PORT")]
    pub image_container_port: Option<String>,
    /// With --image: the user ID the container runs as (`securityContext.runAsUser`).
    #[arg(long, requires = "image", value_name = "UID")]
    pub run_as_user: Option<String>,
}

/// Run `create api` in `root`.
pub fn run(args: &ApiArgs, root: &Path, printer: &Printer) -> Result<()> {
    let mut project = Project::load(root)?;
    let request = Request {
        group: args.group.clone(),
        version: args.version.clone(),
        kind: args.kind.clone(),
        plural: args.plural.clone(),
        namespaced: args.namespaced,
        resource: args.resource,
        controller: args.controller,
        storage: args.storage,
        force: args.force,
        image: args.image.as_ref().map(|image| DeployImage {
            image: image.clone(),
            container_command: args.image_container_command.clone().unwrap_or_default(),
            container_port: args.image_container_port.clone().unwrap_or_default(),
            run_as_user: args.run_as_user.clone().unwrap_or_default(),
        }),
    };
    let interactive = !args.yes && std::io::stdin().is_terminal();
    let plan = api::plan(&request, &project, &|flag, question| {
        ask(flag, interactive, question, printer)
    })?;
    let s = api::stage(&plan, &mut project, root, args.force)?;
    s.check()?;
    s.commit(printer)?;
    if let Some(note) = &plan.controller_skipped {
        printer.hint(note);
    }
    if plan.resource {
        printer.hint("Next: implement your new API and generate the manifests (CRDs, RBAC) with:\n$ make manifests");
    }
    Ok(())
}

fn ask(flag: Option<bool>, interactive: bool, question: &str, printer: &Printer) -> bool {
    match flag {
        Some(v) => v,
        None if interactive => printer.ask_yes_no(question).unwrap_or(true),
        None => true,
    }
}
