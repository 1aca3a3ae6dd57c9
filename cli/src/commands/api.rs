//! `operator-gen create api`: its flags, and a run that plans and stages the scaffold
//! ([`crate::scaffolding::api`]) and commits it.

use std::io::IsTerminal;
use std::path::Path;

use clap::{ArgAction, Args};

use crate::error::Result;
use crate::printer::Printer;
use crate::project::Project;
use crate::scaffold::Scaffold;
use crate::scaffolding::api::{self, Request};
use crate::scaffolding::deploy_image::Options as DeployImage;
use crate::scaffolding::from_crd;

/// Flags of `create api`.
#[derive(Debug, Args)]
pub struct ApiArgs {
    /// Resource group, e.g. `crew` (API group `crew.<domain>`), or a built-in group such as `apps`.
    /// With `--from-crd`, taken from the CRD.
    #[arg(long, required_unless_present = "from_crd")]
    pub group: Option<String>,
    /// Resource version, e.g. `v1`.
    #[arg(
        long,
        required_unless_present = "from_crd",
        conflicts_with = "from_crd"
    )]
    pub version: Option<String>,
    /// Resource kind, e.g. `Captain`.
    #[arg(
        long,
        required_unless_present = "from_crd",
        conflicts_with = "from_crd"
    )]
    pub kind: Option<String>,
    /// Resource plural (default: the kind's English plural in lower case, as controller-gen derives it).
    #[arg(long, conflicts_with = "from_crd")]
    pub plural: Option<String>,
    /// Namespace-scoped resource (default); `--namespaced=false` makes it cluster-scoped.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, value_name = "BOOL", conflicts_with = "from_crd")]
    pub namespaced: Option<bool>,
    /// Rust types for every version of an existing CRD (group, kind, plural, scope and versions
    /// from the CRD; each validation, default, CEL rule, printer column and subresource a marker),
    /// so that `manifests` writes that CRD back.
    #[arg(long, value_name = "FILE")]
    pub from_crd: Option<std::path::PathBuf>,
    /// With `--from-crd`: the kind is someone else's (kubebuilder's external APIs): its types,
    /// typed client, lister and informer, read access in the manager's role, and no CRD.
    #[arg(long, requires = "from_crd")]
    pub external: bool,
    /// Scaffold the resource type; asks when omitted on a terminal, else assumes true.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, value_name = "BOOL")]
    pub resource: Option<bool>,
    /// Scaffold the controller; asks when omitted on a terminal, else assumes true.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, value_name = "BOOL")]
    pub controller: Option<bool>,
    /// Store this version in etcd: for a new version of a kind, moves `+kubebuilder:storageversion`
    /// from the version that has it to this one (default: the existing version keeps storing).
    #[arg(long, conflicts_with = "from_crd")]
    pub storage: bool,
    /// Overwrite existing type and controller files.
    #[arg(long)]
    pub force: bool,
    /// Answer yes to every question.
    #[arg(short, long)]
    pub yes: bool,
    /// The deploy-image plugin: scaffold a kind (spec `size`) whose controller deploys and keeps
    /// a Deployment of this image, e.g. `memcached:1.6.26-alpine` (recorded in PROJECT).
    #[arg(long, value_name = "IMAGE", conflicts_with = "from_crd")]
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
    let interactive = !args.yes && std::io::stdin().is_terminal();
    if args.external && args.from_crd.is_none() {
        return Err(crate::error::Error::msg(
            "--external names someone else's kind by its CRD, but no --from-crd FILE is given; pass --from-crd FILE",
        ));
    }
    if let Some(file) = &args.from_crd {
        return from_crd(args, file, &mut project, root, printer);
    }
    let request = Request {
        group: args.group.clone().unwrap_or_default(),
        version: args.version.clone().unwrap_or_default(),
        kind: args.kind.clone().unwrap_or_default(),
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
        external_domain: None,
    };
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

/// `create api --from-crd FILE`: every version of the CRD staged, then committed at once.
fn from_crd(
    args: &ApiArgs,
    file: &Path,
    project: &mut Project,
    root: &Path,
    printer: &Printer,
) -> Result<()> {
    if args.resource == Some(false) {
        return Err(crate::error::Error::msg(
            "--from-crd writes the CRD's types, but --resource=false scaffolds none; drop --resource=false",
        ));
    }
    if args.controller == Some(true) {
        return Err(crate::error::Error::msg(
            "--from-crd scaffolds no controller (the scaffolded one reports a Ready condition the imported status may not have); drop --controller and write the controller by hand",
        ));
    }
    let crd = from_crd::read(file)?;
    let imported = from_crd::import(file, &crd)?;
    let (group, external_domain) = if args.external {
        let (g, d) = from_crd::external_group(&imported.group, args.group.as_deref())?;
        (g, Some(d))
    } else {
        let g = from_crd::group_for(&imported.group, args.group.as_deref(), project)?;
        (g, None)
    };
    let req = from_crd::FromCrd {
        file,
        force: args.force,
        external_domain,
    };
    let mut s = Scaffold::new(root);
    from_crd::stage(&mut s, &req, &imported, &group, project)?;
    s.check()?;
    s.commit(printer)?;
    for note in &imported.notes {
        printer.hint(&format!(
            "{}: {} ({})",
            file.display(),
            note.message,
            note.path
        ));
    }
    if imported.floats {
        printer.hint("the CRD has `type: number` fields, written as f64: run `operator-gen manifests --allow-dangerous-types`");
    }
    printer.hint("Next: generate the manifests (CRDs, RBAC) with:\n$ make manifests");
    Ok(())
}

fn ask(flag: Option<bool>, interactive: bool, question: &str, printer: &Printer) -> bool {
    match flag {
        Some(v) => v,
        None if interactive => printer.ask_yes_no(question).unwrap_or(true),
        None => true,
    }
}
