//! `operator-gen create webhook`: its flags, and a run that plans and stages the scaffold
//! ([`crate::scaffolding::webhook`]) and commits it.

use std::path::Path;

use clap::Args;

use crate::error::Result;
use crate::printer::Printer;
use crate::project::Project;
use crate::scaffolding::webhook::{self, Request};

/// Flags of `create webhook`.
#[derive(Debug, Args)]
pub struct WebhookArgs {
    /// Resource group, e.g. `crew`, or a built-in group such as `apps`.
    #[arg(long)]
    pub group: String,
    /// Resource version, e.g. `v1`.
    #[arg(long)]
    pub version: String,
    /// Resource kind, e.g. `Captain`.
    #[arg(long)]
    pub kind: String,
    /// Resource plural (default: the one `create api` recorded, else the kind's English plural).
    #[arg(long)]
    pub plural: Option<String>,
    /// Scaffold a defaulting (mutating) webhook.
    #[arg(long)]
    pub defaulting: bool,
    /// Scaffold a validating webhook (create, update and delete).
    #[arg(long)]
    pub programmatic_validation: bool,
    /// Scaffold a conversion webhook with this version as the hub.
    #[arg(long)]
    pub conversion: bool,
    /// The spoke versions converted to and from the hub, e.g. `--spoke v2,v3` (with --conversion).
    #[arg(long, value_delimiter = ',', value_name = "VERSION", value_parser = spoke_version)]
    pub spoke: Vec<String>,
    /// Serve the defaulting webhook on this path instead of `/mutate-<group>-<version>-<kind>`,
    /// e.g. `/custom-mutate` (with --defaulting).
    #[arg(long, value_name = "PATH", value_parser = custom_path)]
    pub defaulting_path: Option<String>,
    /// Serve the validating webhook on this path instead of `/validate-<group>-<version>-<kind>`,
    /// e.g. `/custom-validate` (with --programmatic-validation).
    #[arg(long, value_name = "PATH", value_parser = custom_path)]
    pub validation_path: Option<String>,
    /// Scaffold the webhook module again, with every webhook type of the kind.
    #[arg(long)]
    pub force: bool,
}

/// One `--spoke` version, checked as `create api --version` checks a version.
fn spoke_version(value: &str) -> std::result::Result<String, crate::error::Error> {
    crate::project::validate::validate_version(value)
        .map(|()| value.to_owned())
        .map_err(|_| {
            crate::error::Error::msg(format!(
                "{value:?} is not a version name: each spoke must be a DNS-1123 label starting with a letter and not a Rust keyword, e.g. v2 or v2beta1; pass e.g. --spoke v2,v3"
            ))
        })
}

/// One `--defaulting-path` or `--validation-path`: a path the webhook server can serve
/// (controller-runtime's rule for a custom webhook path).
fn custom_path(value: &str) -> std::result::Result<String, String> {
    if operator_gen_codegen::webhook::is_served_path(value) {
        Ok(value.to_owned())
    } else {
        Err(format!(
            "{value:?} is not a webhook path: it must be '/' or start with '/' and have segments of letters, digits, '-' and '_' only, e.g. /custom-mutate or /hooks/validate"
        ))
    }
}

/// Run `create webhook` in `root`.
pub fn run(args: &WebhookArgs, root: &Path, printer: &Printer) -> Result<()> {
    let mut project = Project::load(root)?;
    let request = Request {
        group: args.group.clone(),
        version: args.version.clone(),
        kind: args.kind.clone(),
        plural: args.plural.clone(),
        defaulting: args.defaulting,
        programmatic_validation: args.programmatic_validation,
        conversion: args.conversion,
        spoke: args.spoke.clone(),
        defaulting_path: args.defaulting_path.clone(),
        validation_path: args.validation_path.clone(),
        force: args.force,
    };
    let plan = webhook::plan(&request, &project)?;
    let s = webhook::stage(&plan, &mut project, root, args.force)?;
    s.check()?;
    s.commit(printer)?;
    if plan.core.is_some() {
        printer.warn("webhooks for built-in types can block the manager's own deployment (its pods are built-in objects too); scope them with namespaceSelector or objectSelector in the webhook configuration");
    }
    printer.hint("Next: implement your webhooks and generate the webhook configurations with:\n$ make manifests");
    Ok(())
}
