//! `operator-gen create api`: validate group, version and kind, then render `templates/api/`
//! into the types file, the controller, the config/ entries and the `PROJECT` entry.

use std::io::IsTerminal;
use std::path::Path;

use serde::Serialize;

use super::init::BOILERPLATE;
use crate::cli::ApiArgs;
use crate::core_types::{CoreType, core_types};
use crate::error::{Error, Result};
use crate::names;
use crate::printer::Printer;
use crate::project::{self, ApiEntry, Project, ResourceEntry};
use crate::scaffold::{IfExists, Scaffold};
use crate::templates::Engine;

/// Marker in `mod.rs` files where `pub mod` lines go.
pub const MODULES_MARKER: &str = "// +operator-gen:scaffold:modules";
/// Marker in a version's `mod.rs` where the kinds are re-exported.
pub const REEXPORTS_MARKER: &str = "// +operator-gen:scaffold:reexports";
/// Marker in `src/main.rs` where controllers are registered.
pub const CONTROLLERS_MARKER: &str = "// +operator-gen:scaffold:controllers";
/// Marker in `config/crd/kustomization.yaml`.
pub const CRD_MARKER: &str = "# +operator-gen:scaffold:crdkustomizeresource";
/// Marker in `config/samples/kustomization.yaml`.
pub const SAMPLES_MARKER: &str = "# +operator-gen:scaffold:manifestskustomizesamples";
/// Marker in `config/rbac/kustomization.yaml`.
pub const RBAC_MARKER: &str = "# +operator-gen:scaffold:rbackustomizeroles";

/// What every `create api` template sees.
#[derive(Debug, Serialize)]
pub struct ApiContext {
    /// License header for `.rs` files, maybe empty.
    pub header: String,
    /// Project name.
    pub project_name: String,
    /// Library crate name.
    pub crate_name: String,
    /// The manager's namespace, `<project>-system`.
    pub manager_namespace: String,
    /// Namespace-scoped manager (`WATCH_NAMESPACE`, Roles).
    pub manager_namespaced: bool,
    /// Multi-group layout.
    pub multigroup: bool,
    /// The group as given (`crew`, `apps`, `core`).
    pub group: String,
    /// The full API group (`crew.my.domain`, `apps`, `""` for core).
    pub api_group: String,
    /// The group as an RBAC marker names it (`core` for the core group).
    pub rbac_group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Lower-cased kind, as kubebuilder names files under config/.
    pub kind_lower: String,
    /// The kind's Rust module name (`frigate_ship`).
    pub kind_module: String,
    /// Plural resource name.
    pub plural: String,
    /// The plural was given with `--plural` and differs from the default.
    pub custom_plural: bool,
    /// Namespace-scoped resource.
    pub namespaced: bool,
    /// A built-in Kubernetes type.
    pub core: bool,
    /// The Rust path of the type (`crate::api::v1::Captain`, `k8s_openapi::api::apps::v1::Deployment`).
    pub type_path: String,
    /// The Rust path of the controller module, from the crate root (`controller::captain`).
    pub controller_path: String,
    /// The finalizer name.
    pub finalizer: String,
    /// The CRD file under config/crd/bases.
    pub crd_file: String,
    /// The prefix of per-kind file names under config/ (`crew_captain` in multigroup, else `captain`).
    pub config_prefix: String,
    /// The prefix of per-kind role names (`crew-captain` in multigroup, else `captain`).
    pub role_prefix: String,
    /// `,namespace=<ns>` on RBAC markers of a namespace-scoped manager, else empty.
    pub rbac_namespace: String,
}

/// Run `create api` in `root`.
pub fn run(args: &ApiArgs, root: &Path, printer: &Printer) -> Result<()> {
    let mut project = Project::load(root)?;
    let plan = plan(args, &project, printer)?;
    let engine = Engine::new()?;
    let header = std::fs::read_to_string(root.join(BOILERPLATE)).unwrap_or_default();
    let ctx = context(&plan, &project, header);
    let mut s = Scaffold::new(root);
    let policy = if args.force {
        IfExists::Overwrite
    } else {
        IfExists::Error
    };
    if !s.exists("src/main.rs") {
        return Err(Error::msg(
            "src/main.rs is missing, so the controller cannot be registered; restore it from a fresh `operator-gen init`",
        ));
    }

    let group_mod = names::module_name(&plan.group);
    let version_mod = names::module_name(&plan.version);
    if plan.resource {
        let dir = if project.multigroup {
            s.file(
                &format!("src/api/{group_mod}/mod.rs"),
                engine.render("api/mod.rs.tera", &ModDoc::group(&ctx))?,
                IfExists::Skip,
            )?;
            s.insert(
                "src/api/mod.rs",
                MODULES_MARKER,
                &format!("pub mod {group_mod};"),
            )?;
            s.insert(
                &format!("src/api/{group_mod}/mod.rs"),
                MODULES_MARKER,
                &format!("pub mod {version_mod};"),
            )?;
            format!("src/api/{group_mod}/{version_mod}")
        } else {
            s.insert(
                "src/api/mod.rs",
                MODULES_MARKER,
                &format!("pub mod {version_mod};"),
            )?;
            format!("src/api/{version_mod}")
        };
        s.file(
            &format!("{dir}/mod.rs"),
            engine.render("api/mod.rs.tera", &ModDoc::version(&ctx))?,
            IfExists::Skip,
        )?;
        s.insert(
            &format!("{dir}/mod.rs"),
            MODULES_MARKER,
            &format!("pub mod {};", ctx.kind_module),
        )?;
        s.insert(
            &format!("{dir}/mod.rs"),
            REEXPORTS_MARKER,
            &format!("pub use {}::*;", ctx.kind_module),
        )?;
        s.file(
            &format!("{dir}/{}.rs", ctx.kind_module),
            engine.render("api/types.rs.tera", &ctx)?,
            policy,
        )?;

        let sample = format!(
            "{}_{}_{}.yaml",
            names::module_name(&plan.group),
            plan.version,
            ctx.kind_lower
        );
        s.file(
            &format!("config/samples/{sample}"),
            engine.render("api/sample.yaml.tera", &ctx)?,
            policy,
        )?;
        s.insert(
            "config/samples/kustomization.yaml",
            SAMPLES_MARKER,
            &format!("- {sample}"),
        )?;
        for role in ["admin", "editor", "viewer"] {
            let file = format!("{}_{role}_role.yaml", ctx.config_prefix);
            s.file(
                &format!("config/rbac/{file}"),
                engine.render(&format!("api/{role}_role.yaml.tera"), &ctx)?,
                policy,
            )?;
            s.insert(
                "config/rbac/kustomization.yaml",
                RBAC_MARKER,
                &format!("- {file}"),
            )?;
        }
        s.insert(
            "config/crd/kustomization.yaml",
            CRD_MARKER,
            &format!("- bases/{}", ctx.crd_file),
        )?;
        s.uncomment("config/default/kustomization.yaml", "- ../crd")?;
    }
    if plan.controller {
        let file = if project.multigroup {
            s.file(
                &format!("src/controller/{group_mod}/mod.rs"),
                engine.render("api/mod.rs.tera", &ModDoc::controllers(&ctx))?,
                IfExists::Skip,
            )?;
            s.insert(
                "src/controller/mod.rs",
                MODULES_MARKER,
                &format!("pub mod {group_mod};"),
            )?;
            s.insert(
                &format!("src/controller/{group_mod}/mod.rs"),
                MODULES_MARKER,
                &format!("pub mod {};", ctx.kind_module),
            )?;
            format!("src/controller/{group_mod}/{}.rs", ctx.kind_module)
        } else {
            s.insert(
                "src/controller/mod.rs",
                MODULES_MARKER,
                &format!("pub mod {};", ctx.kind_module),
            )?;
            format!("src/controller/{}.rs", ctx.kind_module)
        };
        let template = if plan.core.is_some() {
            "api/core_controller.rs.tera"
        } else {
            "api/controller.rs.tera"
        };
        s.file(&file, engine.render(template, &ctx)?, policy)?;
        s.insert(
            "src/main.rs",
            CONTROLLERS_MARKER,
            engine.render("api/register.rs.tera", &ctx)?.trim_end(),
        )?;
    }

    update_project(&mut project, &plan, &ctx);
    s.file(project::FILE_NAME, project.render()?, IfExists::Overwrite)?;
    s.check()?;
    s.commit(printer)?;
    if plan.resource {
        printer.hint("Next: implement your new API and generate the manifests (CRDs, RBAC) with:\n$ make manifests");
    }
    Ok(())
}

/// The decisions `create api` takes before rendering anything.
#[derive(Debug)]
struct Plan {
    group: String,
    version: String,
    kind: String,
    plural: String,
    custom_plural: bool,
    namespaced: bool,
    resource: bool,
    controller: bool,
    core: Option<CoreType>,
    /// The resource is already in PROJECT (only allowed with --force).
    existing: Option<usize>,
}

fn plan(args: &ApiArgs, project: &Project, printer: &Printer) -> Result<Plan> {
    validate_version(&args.version)?;
    validate_kind(&args.kind)?;
    let interactive = !args.yes && std::io::stdin().is_terminal();
    let resource = ask(args.resource, interactive, "Create Resource", printer);
    let controller = ask(args.controller, interactive, "Create Controller", printer);
    if !resource && !controller {
        return Err(Error::msg(
            "nothing to scaffold: --resource=false and --controller=false; drop one of them",
        ));
    }

    let existing = project
        .resources
        .iter()
        .position(|r| r.group == args.group && r.version == args.version && r.kind == args.kind);
    let existing_api = existing.and_then(|i| project.resources[i].api.clone());

    let core = if !resource {
        find_core(&args.group, &args.version, &args.kind)?
    } else {
        None
    };
    if !resource && core.is_none() && existing_api.is_none() {
        return Err(Error::msg(format!(
            "--resource=false needs an existing type, but {}/{} {} is not in PROJECT and {:?} is not a built-in group; drop --resource=false or use a built-in group such as apps",
            args.group, args.version, args.kind, args.group
        )));
    }
    if core.is_none() {
        validate_group(&args.group, project)?;
        let other_group = project
            .resources
            .iter()
            .find(|r| !r.core && r.group != args.group);
        if let (false, Some(other)) = (project.multigroup, other_group) {
            return Err(Error::msg(format!(
                "multiple groups are not allowed in a single-group project (it has group {:?}); use --group {} or start the project with `operator-gen init --multigroup`",
                other.group, other.group
            )));
        }
    }

    if resource {
        check_kind_clash(args, project)?;
    }
    if let Some(i) = existing {
        let entry = &project.resources[i];
        let clash = (resource && entry.api.is_some()) || (controller && entry.controller);
        if clash && !args.force {
            return Err(Error::msg(format!(
                "API resource already exists: {}/{} {}; pass --force to scaffold its files again",
                args.group, args.version, args.kind
            )));
        }
    }

    let default_plural = match core {
        Some(c) => c.plural.to_owned(),
        None => names::plural(&args.kind),
    };
    let plural = args
        .plural
        .clone()
        .or_else(|| existing.and_then(|i| project.resources[i].plural.clone()))
        .unwrap_or_else(|| default_plural.clone());
    if !names::is_dns1035_label(&plural) {
        return Err(Error::msg(format!(
            "plural {plural:?} is invalid: it must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter); pass --plural"
        )));
    }
    let namespaced = match (core, args.namespaced, &existing_api) {
        (Some(c), _, _) => c.namespaced,
        (None, Some(n), _) => n,
        (None, None, Some(api)) if !resource => api.namespaced,
        _ => true,
    };
    if controller {
        let module = names::kind_module(&args.kind);
        let group_mod = names::module_name(&args.group);
        let owner = project.resources.iter().find(|r| {
            r.controller
                && names::kind_module(&r.kind) == module
                && (!project.multigroup || names::module_name(&r.group) == group_mod)
                && !(r.group == args.group && r.version == args.version && r.kind == args.kind)
        });
        if let Some(r) = owner {
            return Err(Error::msg(format!(
                "the controller module `{module}` already belongs to {}/{} {}; pass --controller=false to add only the type",
                r.group, r.version, r.kind
            )));
        }
    }
    if project.namespaced && !namespaced {
        return Err(Error::msg(format!(
            "kind {} is cluster-scoped, but a namespace-scoped manager (init --namespaced) only has a Role in its own namespace; scaffold a namespaced kind or use a project initialised without --namespaced",
            args.kind
        )));
    }
    Ok(Plan {
        group: args.group.clone(),
        version: args.version.clone(),
        kind: args.kind.clone(),
        custom_plural: plural != default_plural,
        plural,
        namespaced,
        resource,
        controller,
        core,
        existing,
    })
}

fn ask(flag: Option<bool>, interactive: bool, question: &str, printer: &Printer) -> bool {
    match flag {
        Some(v) => v,
        None if interactive => printer.ask_yes_no(question).unwrap_or(true),
        None => true,
    }
}

fn validate_version(version: &str) -> Result<()> {
    if !names::is_dns1123_label(version) {
        return Err(Error::msg(format!(
            "version {version:?} is invalid: it must be a DNS-1123 label (lower-case letters, digits and '-'); pass e.g. --version v1"
        )));
    }
    let module = names::module_name(version);
    if !version.starts_with(|c: char| c.is_ascii_lowercase()) || names::is_rust_keyword(&module) {
        return Err(Error::msg(format!(
            "version {version:?} cannot name a rust module (it must start with a letter and not be a keyword); pass e.g. --version v1"
        )));
    }
    Ok(())
}

fn validate_kind(kind: &str) -> Result<()> {
    if !kind.starts_with(|c: char| c.is_ascii_uppercase()) {
        return Err(Error::msg(format!(
            "invalid kind {kind:?}: must start with an uppercase character; pass e.g. --kind Captain"
        )));
    }
    if !names::is_dns1035_label(&kind.to_ascii_lowercase()) || kind.contains('-') {
        return Err(Error::msg(format!(
            "invalid kind {kind:?}: use only ASCII letters and digits (its lower-case form must be a DNS-1035 label); pass e.g. --kind Captain"
        )));
    }
    if names::RESERVED_KINDS.contains(&kind) || names::is_rust_keyword(kind) {
        return Err(Error::msg(format!(
            "invalid kind {kind:?}: it would shadow a rust prelude or generated name; pick another kind"
        )));
    }
    let module = names::kind_module(kind);
    if names::is_rust_keyword(&module) || module == "mod" {
        return Err(Error::msg(format!(
            "invalid kind {kind:?}: its module name `{module}` is a rust keyword; pick another kind"
        )));
    }
    Ok(())
}

/// The type names a kind puts in its version module: the root type the derive generates, the
/// scaffolded spec and status, the derive's client, listers and informer, and `<Kind>List`, the
/// name a list of it conventionally takes.
fn kind_names(kind: &str) -> Vec<String> {
    [
        "",
        "Spec",
        "Status",
        "List",
        "Client",
        "Lister",
        "NamespaceLister",
        "Informer",
    ]
    .iter()
    .map(|suffix| format!("{kind}{suffix}"))
    .collect()
}

/// A new kind must not define a name another kind of its module defines (`Foo` and `FooSpec`).
fn check_kind_clash(args: &ApiArgs, project: &Project) -> Result<()> {
    let mine = kind_names(&args.kind);
    let same_module = |r: &ResourceEntry| {
        names::module_name(&r.version) == names::module_name(&args.version)
            && (!project.multigroup
                || names::module_name(&r.group) == names::module_name(&args.group))
    };
    for r in &project.resources {
        if r.core || r.api.is_none() || r.kind == args.kind || !same_module(r) {
            continue;
        }
        if let Some(name) = kind_names(&r.kind).into_iter().find(|n| mine.contains(n)) {
            return Err(Error::msg(format!(
                "kind {:?} clashes with kind {} of {}/{}: both would define `{name}` in the same module; pick another kind or another version",
                args.kind, r.kind, r.group, r.version
            )));
        }
    }
    Ok(())
}

fn validate_group(group: &str, project: &Project) -> Result<()> {
    let full = project.qualified_group(group);
    if !names::is_dns1123_subdomain(&full) {
        return Err(Error::msg(format!(
            "either group {group:?} or domain {:?} is invalid: {full:?} must be a DNS-1123 subdomain; pass e.g. --group crew",
            project.domain
        )));
    }
    let module = names::module_name(group);
    if project.multigroup
        && (!group.starts_with(|c: char| c.is_ascii_lowercase()) || names::is_rust_keyword(&module))
    {
        return Err(Error::msg(format!(
            "group {group:?} cannot name a rust module (it must start with a letter and not be a keyword); pass another --group"
        )));
    }
    Ok(())
}

/// Resolve a built-in group (`apps`, `core`, `networking`, `rbac.authorization` ...).
fn find_core(group: &str, version: &str, kind: &str) -> Result<Option<CoreType>> {
    let all = core_types();
    let in_group: Vec<&CoreType> = all
        .iter()
        .filter(|c| {
            c.module == group
                || c.group == group
                || (group == "core" && c.group.is_empty())
                || c.group.strip_suffix(".k8s.io") == Some(group)
        })
        .collect();
    if in_group.is_empty() {
        return Ok(None);
    }
    let in_version: Vec<&&CoreType> = in_group.iter().filter(|c| c.version == version).collect();
    if in_version.is_empty() {
        let mut versions: Vec<&str> = in_group.iter().map(|c| c.version).collect();
        versions.sort_unstable();
        versions.dedup();
        return Err(Error::msg(format!(
            "built-in group {group:?} has no version {version:?}; pass --version with one of {}",
            versions.join(", ")
        )));
    }
    match in_version.iter().find(|c| c.kind == kind) {
        Some(c) => Ok(Some(***c)),
        None => {
            let hint = match names::did_you_mean(kind, in_version.iter().map(|c| c.kind)) {
                Some(k) => format!("did you mean --kind {k}?"),
                None => format!(
                    "see `kubectl api-resources --api-group={}`",
                    in_version[0].group
                ),
            };
            Err(Error::msg(format!(
                "built-in group {group:?} version {version:?} has no kind {kind:?}; {hint}"
            )))
        }
    }
}

fn context(plan: &Plan, project: &Project, header: String) -> ApiContext {
    let crate_name = names::module_name(&project.project_name);
    let kind_module = names::kind_module(&plan.kind);
    let group_mod = names::module_name(&plan.group);
    let version_mod = names::module_name(&plan.version);
    let (api_group, rbac_group, type_path) = match plan.core {
        Some(c) => (
            c.group.to_owned(),
            if c.group.is_empty() {
                "core".to_owned()
            } else {
                c.group.to_owned()
            },
            format!(
                "k8s_openapi::api::{}::{}::{}",
                c.module, version_mod, c.kind
            ),
        ),
        None => {
            let g = project.qualified_group(&plan.group);
            let module = if project.multigroup {
                format!("{group_mod}::{version_mod}")
            } else {
                version_mod.clone()
            };
            (g.clone(), g, format!("crate::api::{module}::{}", plan.kind))
        }
    };
    let controller_path = if project.multigroup {
        format!("controller::{group_mod}::{kind_module}")
    } else {
        format!("controller::{kind_module}")
    };
    let kind_lower = names::lower(&plan.kind);
    ApiContext {
        header,
        project_name: project.project_name.clone(),
        manager_namespace: format!("{}-system", project.project_name),
        manager_namespaced: project.namespaced,
        multigroup: project.multigroup,
        group: plan.group.clone(),
        finalizer: format!(
            "{}/finalizer",
            if plan.core.is_some() {
                project.domain.clone()
            } else {
                api_group.clone()
            }
        ),
        crd_file: names::crd_file_name(&api_group, &plan.plural),
        config_prefix: if project.multigroup {
            format!("{group_mod}_{kind_lower}")
        } else {
            kind_lower.clone()
        },
        rbac_namespace: if project.namespaced && plan.namespaced {
            format!(",namespace={}-system", project.project_name)
        } else {
            String::new()
        },
        role_prefix: if project.multigroup {
            format!("{}-{kind_lower}", plan.group.replace('.', "-"))
        } else {
            kind_lower.clone()
        },
        api_group,
        rbac_group,
        version: plan.version.clone(),
        kind: plan.kind.clone(),
        kind_lower,
        kind_module,
        plural: plan.plural.clone(),
        custom_plural: plan.custom_plural,
        namespaced: plan.namespaced,
        core: plan.core.is_some(),
        type_path,
        controller_path,
        crate_name,
    }
}

fn update_project(project: &mut Project, plan: &Plan, ctx: &ApiContext) {
    let path = match plan.core {
        Some(c) => format!(
            "k8s_openapi::api::{}::{}",
            c.module,
            names::module_name(&plan.version)
        ),
        None => ctx
            .type_path
            .rsplit_once("::")
            .map(|(m, _)| m.replacen("crate", &ctx.crate_name, 1))
            .unwrap_or_default(),
    };
    let domain = match plan.core {
        Some(c) if c.group.ends_with(".k8s.io") => "k8s.io".to_owned(),
        Some(_) => String::new(),
        None => project.domain.clone(),
    };
    let new = ResourceEntry {
        api: plan.resource.then(|| ApiEntry {
            crd_version: "v1".to_owned(),
            namespaced: plan.namespaced,
        }),
        controller: plan.controller,
        core: plan.core.is_some(),
        domain,
        group: plan.group.clone(),
        kind: plan.kind.clone(),
        path,
        plural: plan.custom_plural.then(|| plan.plural.clone()),
        version: plan.version.clone(),
    };
    match plan.existing {
        Some(i) => {
            let old = &project.resources[i];
            let merged = ResourceEntry {
                api: new.api.clone().or_else(|| old.api.clone()),
                controller: new.controller || old.controller,
                ..new
            };
            project.resources[i] = merged;
        }
        None => project.resources.push(new),
    }
    project.cli_version = Some(super::versions::CLI.to_owned());
}

/// The context of a `mod.rs` created on demand.
#[derive(Debug, Serialize)]
struct ModDoc {
    header: String,
    doc: String,
    group_marker: Option<String>,
}

impl ModDoc {
    fn group(ctx: &ApiContext) -> ModDoc {
        ModDoc {
            header: ctx.header.clone(),
            doc: format!("API versions of the {} group.", ctx.api_group),
            group_marker: None,
        }
    }

    fn version(ctx: &ApiContext) -> ModDoc {
        ModDoc {
            header: ctx.header.clone(),
            doc: format!("Types of the {}/{} API.", ctx.api_group, ctx.version),
            group_marker: Some(ctx.api_group.clone()),
        }
    }

    fn controllers(ctx: &ApiContext) -> ModDoc {
        ModDoc {
            header: ctx.header.clone(),
            doc: format!(
                "Controllers for the {} group.",
                if ctx.api_group.is_empty() {
                    "core"
                } else {
                    &ctx.api_group
                }
            ),
            group_marker: None,
        }
    }
}
