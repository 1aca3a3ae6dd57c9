//! The command-line surface: clap definitions for every subcommand and the dispatcher that maps
//! them onto the command modules.

use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::commands;
pub use crate::commands::api::ApiArgs;
pub use crate::commands::delete::DeleteApiArgs;
pub use crate::commands::edit::EditArgs;
pub use crate::commands::init::InitArgs;
pub use crate::commands::webhook::WebhookArgs;
use crate::error::{Error, Result};
use crate::printer::{Printer, Verbosity};
pub use crate::project::boilerplate::License;

/// kubebuilder for Rust: scaffold a kube-rs operator project and generate its manifests.
#[derive(Debug, Parser)]
#[command(name = "operator-gen", version)]
pub struct Cli {
    /// Print only warnings and errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Initialise a new operator project in the current directory.
    Init(InitArgs),
    /// Scaffold an API (types, controller, manifests) or webhooks into the project.
    #[command(subcommand)]
    Create(CreateCommand),
    /// Take out what a `create` command added to the project.
    #[command(subcommand)]
    Delete(DeleteCommand),
    /// Generate CRD and RBAC manifests from the project's Rust sources.
    Manifests(ManifestsArgs),
    /// Change an existing project: `--plugins helm` writes a Helm chart in dist/chart.
    Edit(EditArgs),
    /// Print the operator-gen version and the kube and k8s-openapi versions it scaffolds.
    Version,
    /// The control plane for tests: `envtest use` prints the `KUBEBUILDER_ASSETS` directory.
    #[command(subcommand)]
    Envtest(EnvtestCommand),
    /// Experimental commands.
    #[command(subcommand)]
    Alpha(AlphaCommand),
    /// Print a shell completion script.
    Completion {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// `create` subcommands.
#[derive(Debug, Subcommand)]
pub enum CreateCommand {
    /// Scaffold a Kubernetes API: a custom resource type and/or its controller.
    Api(ApiArgs),
    /// Scaffold defaulting, validating or conversion webhooks for an existing kind.
    Webhook(WebhookArgs),
}

/// `delete` subcommands.
#[derive(Debug, Subcommand)]
pub enum DeleteCommand {
    /// Delete an API: what `create api` added for it (types, controller, samples, roles,
    /// kustomize entries, registrations, the PROJECT entry) and its generated CRD.
    Api(DeleteApiArgs),
}

/// `envtest` subcommands.
#[derive(Debug, Subcommand)]
pub enum EnvtestCommand {
    /// Print the directory of etcd, kube-apiserver and kubectl for `KUBEBUILDER_ASSETS`,
    /// building them from the Go module proxy into the per-user cache when missing.
    Use(commands::envtest::EnvtestUseArgs),
}

/// `alpha` subcommands.
#[derive(Debug, Subcommand)]
pub enum AlphaCommand {
    /// Write the cargo-generate template equivalent to `init` into a directory (empty, new, or
    /// a previous export, which is replaced).
    ExportTemplate {
        /// The template directory, e.g. `cargo-generate/` of an operator-gen checkout.
        dir: PathBuf,
    },
    /// Re-scaffold a project from its PROJECT file with this operator-gen's templates, carrying
    /// over the API types, controllers, webhooks and files the scaffold does not write.
    Generate(commands::generate::GenerateArgs),
    /// Move a git-tracked project to this operator-gen's scaffold by a three-way merge of the
    /// scaffold of the version PROJECT records, this version's and the project, on a new branch.
    Update(commands::update::UpdateArgs),
    /// Write an operator-gen project from a kubebuilder v4 Go project: PROJECT, the API types
    /// translated to Rust, the controllers' and webhooks' markers with their Go code kept as
    /// comments to port, the manifests, and a report (MIGRATION.md) of what is not one to one.
    Migrate(commands::migrate::MigrateArgs),
}

/// Flags of `manifests`.
#[derive(Debug, Args)]
pub struct ManifestsArgs {
    /// Project root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Truncate field descriptions longer than this many characters.
    #[arg(long, value_name = "N")]
    pub max_desc_len: Option<usize>,
    /// Allow float fields in CRD schemas.
    #[arg(long)]
    pub allow_dangerous_types: bool,
    /// Name of the generated (Cluster)Role.
    #[arg(long, default_value = "manager-role", value_parser = rbac_name)]
    pub role_name: String,
    /// Parse every file again instead of reusing the cache in target/operator-gen/scan-cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Refuse a CRD bigger than this many bytes as the apiserver stores it (its JSON, the fields
    /// server-side apply records, and a 16 KiB margin); the default is etcd's default request
    /// limit, 1572864 (1.5 MiB). Raise it only for an etcd with a larger --max-request-bytes.
    #[arg(long, value_name = "BYTES", value_parser = crd_size)]
    pub max_crd_size: Option<usize>,
}

/// A `--max-crd-size`: a whole number of bytes, more than the margin the size includes.
fn crd_size(value: &str) -> std::result::Result<usize, crate::error::Error> {
    let min = crate::manifests::STORED_MARGIN;
    match value.parse::<usize>() {
        Ok(n) if n > min => Ok(n),
        Ok(_) => Err(crate::error::Error::msg(format!(
            "it must be more than {min} bytes, the margin every CRD's size includes"
        ))),
        Err(_) => Err(crate::error::Error::msg(
            "it must be a whole number of bytes, such as 3145728",
        )),
    }
}

/// A `--role-name` the apiserver takes for a Role or ClusterRole: a path segment name (not
/// empty, `.` or `..`, without `/` or `%`), without control characters.
fn rbac_name(value: &str) -> std::result::Result<String, crate::error::Error> {
    let problem = if value.is_empty() {
        Some("it is empty")
    } else if value == "." || value == ".." {
        Some("it may not be '.' or '..'")
    } else if value.contains(['/', '%']) {
        Some("it may not contain '/' or '%'")
    } else if value.chars().any(char::is_control) {
        Some("it may not contain control characters")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(crate::error::Error::msg(format!(
            "{value:?} cannot name a (Cluster)Role: {problem}; pass e.g. --role-name manager-role"
        ))),
        None => Ok(value.to_owned()),
    }
}

/// The clap command, for completions and docs.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Run the command line `args` (including the program name); returns the process exit code.
pub fn run_from<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = e.exit_code();
            let _ = e.print();
            return code;
        }
    };
    let printer = Printer::new(if cli.quiet {
        Verbosity::Quiet
    } else {
        Verbosity::Normal
    });
    match dispatch(cli.command, &printer) {
        Ok(()) => 0,
        Err(e) => {
            printer.error(&e);
            1
        }
    }
}

fn dispatch(cmd: Command, printer: &Printer) -> Result<()> {
    match cmd {
        cmd @ (Command::Init(_) | Command::Create(_) | Command::Delete(_) | Command::Edit(_)) => {
            in_project(cmd, &current_dir()?, printer)
        }
        Command::Manifests(args) => {
            let opts = crate::manifests::ManifestsOptions {
                root: args.root,
                max_desc_len: args.max_desc_len,
                allow_dangerous_types: args.allow_dangerous_types,
                role_name: args.role_name,
                cache: if args.no_cache {
                    crate::manifests::Cache::Off
                } else {
                    crate::manifests::Cache::Project
                },
                max_crd_size: args.max_crd_size,
                allow_oversized_crds: false,
            };
            crate::manifests::run(&opts, printer)
        }
        Command::Envtest(EnvtestCommand::Use(args)) => commands::envtest::run(&args, printer),
        Command::Alpha(AlphaCommand::ExportTemplate { dir }) => {
            commands::export_template::run(&dir, printer)
        }
        Command::Alpha(AlphaCommand::Generate(args)) => {
            commands::generate::run(&args, &current_dir()?, printer, run_in)
        }
        Command::Alpha(AlphaCommand::Migrate(args)) => {
            commands::migrate::run(&args, &current_dir()?, printer, run_in)
        }
        Command::Alpha(AlphaCommand::Update(args)) => {
            commands::update::run(&args, &current_dir()?, printer, run_in)
        }
        Command::Version => {
            printer.out(&commands::version::text());
            Ok(())
        }
        Command::Completion { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "operator-gen", &mut buf);
            printer.out(&String::from_utf8_lossy(&buf));
            Ok(())
        }
    }
}

/// Run a command that changes the project in `root` under the project's lock.
fn in_project(cmd: Command, root: &Path, printer: &Printer) -> Result<()> {
    let _lock = crate::transaction::lock(root, printer)?;
    match cmd {
        Command::Init(args) => commands::init::run(&args, root, printer),
        Command::Create(CreateCommand::Api(args)) => commands::api::run(&args, root, printer),
        Command::Create(CreateCommand::Webhook(args)) => {
            commands::webhook::run(&args, root, printer)
        }
        Command::Delete(DeleteCommand::Api(args)) => commands::delete::run(&args, root, printer),
        Command::Edit(args) => commands::edit::run(&args, root, printer),
        other => Err(Error::msg(format!(
            "internal error: {other:?} does not change a project; this is a bug in operator-gen, please report it"
        ))),
    }
}

/// Run `operator-gen <args>` (a command that changes a project: init, create, delete, edit) in
/// `root`, in this process: how `alpha generate` replays a project.
pub fn run_in(args: &[String], root: &Path, printer: &Printer) -> Result<()> {
    let line = std::iter::once("operator-gen".to_owned()).chain(args.iter().cloned());
    let cli = Cli::try_parse_from(line).map_err(|e| {
        Error::msg(format!(
            "cannot replay `operator-gen {}`: {}; this is a bug in operator-gen, please report it",
            args.join(" "),
            e.to_string().lines().next().unwrap_or_default()
        ))
    })?;
    in_project(cli.command, root, printer)
}

fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().map_err(|e| {
        crate::error::Error::io("read", std::path::Path::new("the current directory"), e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn role_names_are_path_segment_names() {
        for good in ["manager-role", "Manager.Role", "system:ops", "a b"] {
            assert_eq!(rbac_name(good).ok().as_deref(), Some(good));
        }
        for bad in ["", ".", "..", "a/b", "50%", "a\nb"] {
            assert!(rbac_name(bad).is_err(), "{bad:?} accepted");
        }
    }
}
