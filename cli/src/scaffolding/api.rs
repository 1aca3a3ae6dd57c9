//! What `create api` scaffolds: its plan (group, version and kind checked against the project),
//! its context and the lists of files and insertions rendered from `templates/api/` into the
//! types file, the controller, the config/ entries and the `PROJECT` entry; and the same lists
//! run backwards for `delete api` ([`undo`]).

use std::path::Path;

use serde::Serialize;

use crate::core_types::CoreType;
use crate::error::{Error, Result};
use crate::project::markers::{
    CONTROLLERS, CRD_RESOURCES, MODULES, RBAC_ROLES, REEXPORTS, SAMPLES,
};
use crate::project::paths::{config_prefix, role_prefix, types_file};
use crate::project::storage_version::{self as storage, Storage};
use crate::project::validate::{
    find_core, kind_names, validate_group, validate_kind, validate_version,
};
use crate::project::{self, ApiEntry, Project, ResourceEntry, boilerplate, names, versions};
use crate::scaffold::{IfExists, Scaffold};
use crate::scaffolding::deploy_image::{self, DeployImageContext, Options as DeployImage};
use crate::scaffolding::lists::{
    Apply, Existing, File, Fragment, Insertion, Uncomment, Undo, Undone,
};
use crate::templates::Engine;

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
    /// The resource type is scaffolded.
    pub resource: bool,
    /// The controller is scaffolded.
    pub controller: bool,
    /// The group's module name (`crew`).
    pub group_module: String,
    /// The version's module name (`v1`).
    pub version_module: String,
    /// The version's directory under `src/api/` (`v1`, or `crew/v1` in multigroup).
    pub api_dir: String,
    /// The module `src/api/mod.rs` declares for it (`v1`, or `crew` in multigroup).
    pub api_module: String,
    /// The controller's file under `src/controller/`, without `.rs` (`captain`, `crew/captain`).
    pub controller_file: String,
    /// The module `src/controller/mod.rs` declares for it (`captain`, or `crew` in multigroup).
    pub controller_module: String,
    /// The sample's file name under `config/samples/`, without `.yaml` (`crew_v1_captain`).
    pub sample_name: String,
    /// Another version of the kind exists: its per-kind files (roles, the CRD's kustomization
    /// line) are already there.
    pub other_version: bool,
    /// The new version's spec carries `+kubebuilder:storageversion`.
    pub storage_version: bool,
    /// `create api --image`: the Deployment the controller keeps (image, command, port, user),
    /// absent for other kinds; its files come from `templates/deploy-image/`.
    pub deploy_image: Option<DeployImageContext>,
    /// The kind in upper case (`MEMCACHED`).
    pub kind_upper: String,
    /// Someone else's kind (`--from-crd --external`): its types, but no CRD, sample or roles.
    pub external: bool,
}

/// The files of `create api`: each template sits where its output lands.
const FILES: &[File<ApiContext>] = &[
    File {
        template: "api/src/api/{{group_module}}/mod.rs.tera",
        existing: Existing::Keep,
        when: |c| c.resource && c.multigroup,
    },
    File {
        template: "api/src/api/{{api_dir}}/mod.rs.tera",
        existing: Existing::Keep,
        when: |c| c.resource,
    },
    File {
        template: "api/src/api/{{api_dir}}/{{kind_module}}.rs.tera",
        existing: Existing::Owned,
        when: |c| c.resource && c.deploy_image.is_none(),
    },
    File {
        template: "deploy-image/src/api/{{api_dir}}/{{kind_module}}.rs.tera",
        existing: Existing::Owned,
        when: |c| c.resource && c.deploy_image.is_some(),
    },
    File {
        template: "api/config/samples/{{sample_name}}.yaml.tera",
        existing: Existing::Owned,
        when: |c| c.resource && c.deploy_image.is_none() && !c.external,
    },
    File {
        template: "deploy-image/config/samples/{{sample_name}}.yaml.tera",
        existing: Existing::Owned,
        when: |c| c.resource && c.deploy_image.is_some(),
    },
    File {
        template: "api/config/rbac/{{config_prefix}}_admin_role.yaml.tera",
        existing: Existing::Owned,
        when: |c| c.resource && !c.other_version && !c.external,
    },
    File {
        template: "api/config/rbac/{{config_prefix}}_editor_role.yaml.tera",
        existing: Existing::Owned,
        when: |c| c.resource && !c.other_version && !c.external,
    },
    File {
        template: "api/config/rbac/{{config_prefix}}_viewer_role.yaml.tera",
        existing: Existing::Owned,
        when: |c| c.resource && !c.other_version && !c.external,
    },
    File {
        template: "api/src/controller/{{group_module}}/mod.rs.tera",
        existing: Existing::Keep,
        when: |c| c.controller && c.multigroup,
    },
    File {
        template: "api/src/controller/{{controller_file}}.rs.tera",
        existing: Existing::Owned,
        when: |c| c.controller && c.deploy_image.is_none(),
    },
    File {
        template: "deploy-image/src/controller/{{controller_file}}.rs.tera",
        existing: Existing::Owned,
        when: |c| c.controller && c.deploy_image.is_some(),
    },
    File {
        template: "api/tests/{{config_prefix}}_controller.rs.tera",
        existing: Existing::Owned,
        when: |c| c.controller && !c.core && c.deploy_image.is_none() && !c.external,
    },
    File {
        template: "deploy-image/tests/{{config_prefix}}_controller.rs.tera",
        existing: Existing::Owned,
        when: |c| c.controller && c.deploy_image.is_some(),
    },
];

/// The Rust wiring: module declarations, re-exports and the controller's registration.
const RUST_WIRING: &[Insertion<ApiContext>] = &[
    Insertion {
        file: "src/api/mod.rs",
        marker: MODULES,
        fragment: Fragment::Text("pub mod {{api_module}};"),
        when: |c| c.resource,
    },
    Insertion {
        file: "src/api/{{group_module}}/mod.rs",
        marker: MODULES,
        fragment: Fragment::Text("pub mod {{version_module}};"),
        when: |c| c.resource && c.multigroup,
    },
    Insertion {
        file: "src/api/{{api_dir}}/mod.rs",
        marker: MODULES,
        fragment: Fragment::Text("pub mod {{kind_module}};"),
        when: |c| c.resource,
    },
    Insertion {
        file: "src/api/{{api_dir}}/mod.rs",
        marker: REEXPORTS,
        fragment: Fragment::Text("pub use {{kind_module}}::*;"),
        when: |c| c.resource,
    },
    Insertion {
        file: "src/controller/mod.rs",
        marker: MODULES,
        fragment: Fragment::Text("pub mod {{controller_module}};"),
        when: |c| c.controller,
    },
    Insertion {
        file: "src/controller/{{group_module}}/mod.rs",
        marker: MODULES,
        fragment: Fragment::Text("pub mod {{kind_module}};"),
        when: |c| c.controller && c.multigroup,
    },
    Insertion {
        file: "src/main.rs",
        marker: CONTROLLERS,
        fragment: Fragment::Text("{{crate_name}}::{{controller_path}}::register(&mut mgr);"),
        when: |c| c.controller,
    },
];

/// The kustomize wiring: the new sample, roles and CRD listed in their kustomizations.
const KUSTOMIZE_WIRING: &[Insertion<ApiContext>] = &[
    Insertion {
        file: "config/samples/kustomization.yaml",
        marker: SAMPLES,
        fragment: Fragment::Text("- {{sample_name}}.yaml"),
        when: |c| c.resource && !c.external,
    },
    Insertion {
        file: "config/rbac/kustomization.yaml",
        marker: RBAC_ROLES,
        fragment: Fragment::Text("- {{config_prefix}}_admin_role.yaml"),
        when: |c| c.resource && !c.other_version && !c.external,
    },
    Insertion {
        file: "config/rbac/kustomization.yaml",
        marker: RBAC_ROLES,
        fragment: Fragment::Text("- {{config_prefix}}_editor_role.yaml"),
        when: |c| c.resource && !c.other_version && !c.external,
    },
    Insertion {
        file: "config/rbac/kustomization.yaml",
        marker: RBAC_ROLES,
        fragment: Fragment::Text("- {{config_prefix}}_viewer_role.yaml"),
        when: |c| c.resource && !c.other_version && !c.external,
    },
    Insertion {
        file: "config/crd/kustomization.yaml",
        marker: CRD_RESOURCES,
        fragment: Fragment::Text("- bases/{{crd_file}}"),
        when: |c| c.resource && !c.other_version && !c.external,
    },
];

/// Lines of the default kustomization a new resource enables.
const KUSTOMIZE_ENABLE: &[Uncomment<ApiContext>] = &[Uncomment {
    file: "config/default/kustomization.yaml",
    line: "- ../crd",
    when: |c| c.resource && !c.external,
}];

/// What `create api` asks for: its flags, once asked.
#[derive(Debug)]
pub struct Request {
    /// The group as given (`crew`, `apps`).
    pub group: String,
    /// The version.
    pub version: String,
    /// The kind.
    pub kind: String,
    /// The plural, when given.
    pub plural: Option<String>,
    /// Namespace-scoped (`Some(true)`), cluster-scoped, or not given.
    pub namespaced: Option<bool>,
    /// Scaffold the type, when given.
    pub resource: Option<bool>,
    /// Scaffold the controller, when given.
    pub controller: Option<bool>,
    /// This version is the one stored.
    pub storage: bool,
    /// Overwrite existing type and controller files.
    pub force: bool,
    /// `--image` and its options: a kind whose controller deploys that image.
    pub image: Option<DeployImage>,
    /// Someone else's kind, with the domain of its API group (`--external`).
    pub external_domain: Option<String>,
}

/// `plan`'s output staged in a scaffold of `root`, with `project`'s entry updated and written:
/// the storage marker moved, the files rendered, the wiring inserted, the kustomize lines enabled.
pub fn stage(plan: &Plan, project: &mut Project, root: &Path, force: bool) -> Result<Scaffold> {
    let mut s = Scaffold::new(root);
    stage_into(&mut s, plan, project, force)?;
    Ok(s)
}

/// [`stage`] into a scaffold the caller holds, so one command can stage several plans (the
/// versions of an imported CRD) and commit them at once; returns the types file it rendered,
/// when it rendered one.
pub fn stage_into(
    s: &mut Scaffold,
    plan: &Plan,
    project: &mut Project,
    force: bool,
) -> Result<Option<String>> {
    let engine = Engine::for_project(s.root())?;
    let header = boilerplate::read(s.root())?;
    let mut ctx = context(plan, project, header);
    ctx.storage_version = mark_storage(s, plan, project, &ctx)?;
    // read, not looked for: what is there but cannot be read (a symlink loop) says why
    if s.read("src/main.rs")?.is_none() {
        return Err(Error::msg(
            "src/main.rs is missing, so the controller cannot be registered; restore it from a fresh `operator-gen init`",
        ));
    }
    let apply = Apply {
        engine: &engine,
        force,
    };
    apply.files(s, FILES, &ctx)?;
    apply.added(s, "api/", &ctx)?;
    apply.insertions(s, RUST_WIRING, &ctx)?;
    apply.insertions(s, KUSTOMIZE_WIRING, &ctx)?;
    apply.uncomments(s, KUSTOMIZE_ENABLE, &ctx)?;

    update_project(project, plan, &ctx);
    crate::templates::record(project, &engine);
    s.file(project::FILE_NAME, project.render()?, IfExists::Overwrite)?;
    Ok(plan
        .resource
        .then(|| types_file(project, &plan.group, &plan.version, &plan.kind)))
}

/// Takes what `create api` wrote for `undo.ctx` out of `s`: its lists, last first.
pub fn undo(undo: &Undo<'_, ApiContext>, s: &mut Scaffold) -> Result<Undone> {
    let mut undone = Undone::default();
    undo.uncomments(s, KUSTOMIZE_ENABLE)?;
    undo.insertions(s, KUSTOMIZE_WIRING, FILES, &mut undone)?;
    undo.insertions(s, RUST_WIRING, FILES, &mut undone)?;
    undo.files(s, FILES, &mut undone)?;
    Ok(undone)
}

/// The context `create api` rendered for `entry`, a resource of `project`'s `PROJECT` file.
pub fn entry_context(
    entry: &ResourceEntry,
    project: &Project,
    header: String,
) -> Result<ApiContext> {
    let core = if entry.core {
        find_core(&entry.group, &entry.version, &entry.kind)?
    } else {
        None
    };
    let default_plural = match core {
        Some(c) => c.plural.to_owned(),
        None => names::plural(&entry.kind),
    };
    let plural = entry
        .plural
        .clone()
        .unwrap_or_else(|| default_plural.clone());
    let plan = Plan {
        group: entry.group.clone(),
        version: entry.version.clone(),
        kind: entry.kind.clone(),
        custom_plural: plural != default_plural,
        plural,
        namespaced: match (core, &entry.api) {
            (Some(c), _) => c.namespaced,
            (None, Some(api)) => api.namespaced,
            (None, None) => true,
        },
        resource: entry.api.is_some() || entry.external,
        controller: entry.controller,
        core,
        existing: None,
        siblings: if entry.api.is_some() {
            siblings(project, &entry.group, &entry.kind, &entry.version)
        } else {
            Vec::new()
        },
        storage: false,
        controller_skipped: None,
        deploy_image: deploy_image::options_of(project, entry)
            .map(|o| o.check(&entry.kind).map(|c| (o, c)))
            .transpose()?,
        external_domain: entry.external.then(|| entry.domain.clone()),
    };
    Ok(context(&plan, project, header))
}

/// The `PROJECT` entries of the other versions of `group`'s `kind` that define its type: the
/// versions a new one joins in one CRD.
fn siblings(project: &Project, group: &str, kind: &str, version: &str) -> Vec<usize> {
    project
        .resources
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            !r.core && r.api.is_some() && r.group == group && r.kind == kind && r.version != version
        })
        .map(|(i, _)| i)
        .collect()
}

/// The decisions `create api` takes before rendering anything.
#[derive(Debug)]
pub struct Plan {
    group: String,
    version: String,
    kind: String,
    plural: String,
    custom_plural: bool,
    namespaced: bool,
    /// The resource type is scaffolded.
    pub resource: bool,
    controller: bool,
    core: Option<CoreType>,
    /// The resource is already in PROJECT (only allowed with --force).
    existing: Option<usize>,
    /// PROJECT's entries of the kind's other versions (same group and kind) that define its type.
    siblings: Vec<usize>,
    /// `--storage`: this version is the one stored.
    storage: bool,
    /// Why no controller is scaffolded although `--controller` was not given.
    pub controller_skipped: Option<String>,
    /// `--image`: its options as given and as the templates see them.
    deploy_image: Option<(DeployImage, DeployImageContext)>,
    /// Someone else's kind: the domain of its API group.
    external_domain: Option<String>,
}

/// The decisions of `create api` for `req` in `project`, or the one-line error of the first
/// check that fails; `ask` answers a yes/no question for a flag not given (`Create Resource`).
pub fn plan(
    req: &Request,
    project: &Project,
    ask: &dyn Fn(Option<bool>, &str) -> bool,
) -> Result<Plan> {
    validate_version(&req.version)?;
    validate_kind(&req.kind)?;
    let deploy_image = check_image(req)?;
    let (resource, controller, controller_skipped) = if deploy_image.is_some() {
        (true, true, None)
    } else {
        what_to_scaffold(req, project, ask)?
    };
    let existing = project
        .resources
        .iter()
        .position(|r| r.group == req.group && r.version == req.version && r.kind == req.kind);
    let existing_api = existing.and_then(|i| project.resources[i].api.clone());

    let core = if !resource {
        find_core(&req.group, &req.version, &req.kind)?
    } else {
        None
    };
    if !resource && core.is_none() && existing_api.is_none() {
        return Err(Error::msg(format!(
            "--resource=false needs an existing type, but {}/{} {} is not in PROJECT and {:?} is not a built-in group; drop --resource=false or use a built-in group such as apps",
            req.group, req.version, req.kind, req.group
        )));
    }
    match &req.external_domain {
        Some(domain) => validate_group(
            &req.group,
            &format!("{}.{domain}", req.group),
            domain,
            project.multigroup,
        )?,
        None if core.is_none() => check_group(req, project)?,
        None => {}
    }

    if resource {
        check_kind_clash(req, project)?;
    }
    // the other versions of the kind this one joins in one CRD
    let siblings = if resource {
        siblings(project, &req.group, &req.kind, &req.version)
    } else {
        Vec::new()
    };
    let sibling = siblings.first().map(|&i| &project.resources[i]);
    if let Some(i) = existing {
        let entry = &project.resources[i];
        let clash = (resource && entry.api.is_some()) || (controller && entry.controller);
        if clash && !req.force {
            return Err(Error::msg(format!(
                "API resource already exists: {}/{} {}; pass --force to scaffold its files again",
                req.group, req.version, req.kind
            )));
        }
    }
    let (plural, default_plural) = plural(req, project, core, existing, sibling)?;
    if resource && core.is_none() && req.external_domain.is_none() {
        check_crd_clash(req, project, &plural)?;
    }
    let namespaced = scope(req, core, existing_api.as_ref(), sibling, resource)?;
    if controller {
        check_controller_module(req, project)?;
    }
    if project.namespaced && !namespaced {
        return Err(Error::msg(format!(
            "kind {} is cluster-scoped, but a namespace-scoped manager (init --namespaced) only has a Role in its own namespace; scaffold a namespaced kind or use a project initialised without --namespaced",
            req.kind
        )));
    }
    Ok(Plan {
        group: req.group.clone(),
        version: req.version.clone(),
        kind: req.kind.clone(),
        custom_plural: plural != default_plural,
        plural,
        namespaced,
        resource,
        controller,
        core,
        existing,
        siblings,
        storage: req.storage,
        controller_skipped,
        deploy_image,
        external_domain: req.external_domain.clone(),
    })
}

/// `--image` and its options checked: the plugin scaffolds a namespaced kind of the project's
/// own with its controller, as kubebuilder's does.
fn check_image(req: &Request) -> Result<Option<(DeployImage, DeployImageContext)>> {
    let Some(options) = &req.image else {
        return Ok(None);
    };
    let refused = [
        (req.resource == Some(false), "--resource=false"),
        (req.controller == Some(false), "--controller=false"),
        (req.namespaced == Some(false), "--namespaced=false"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(r, _)| *r) {
        return Err(Error::msg(format!(
            "--image scaffolds a namespaced kind with a controller that deploys the image in the kind's namespace, so it does not go with {flag}; drop {flag}"
        )));
    }
    let context = options.check(&req.kind)?;
    Ok(Some((options.clone(), context)))
}

/// Whether the type and the controller are scaffolded (asked on a terminal when not given), and
/// why no controller is when the kind has one already.
fn what_to_scaffold(
    req: &Request,
    project: &Project,
    ask: &dyn Fn(Option<bool>, &str) -> bool,
) -> Result<(bool, bool, Option<String>)> {
    let resource = ask(req.resource, "Create Resource");
    // a kind has one controller: a new version of a kind that has one adds only the type
    let kind_controller = project.resources.iter().find(|r| {
        r.controller
            && !r.core
            && r.group == req.group
            && r.kind == req.kind
            && r.version != req.version
    });
    let mut controller_skipped = None;
    let controller = match (req.controller, kind_controller) {
        (None, Some(r)) if resource => {
            controller_skipped = Some(format!(
                "{} already has a controller ({}/{}), which serves every version of the kind; scaffolded only the type",
                req.kind, r.group, r.version
            ));
            false
        }
        _ => ask(req.controller, "Create Controller"),
    };
    if req.storage && !resource {
        return Err(Error::msg(
            "--storage marks the new version's type as stored, but --resource=false scaffolds no type; drop --storage or --resource=false",
        ));
    }
    if !resource && !controller {
        return Err(Error::msg(
            "nothing to scaffold: --resource=false and --controller=false; drop one of them",
        ));
    }
    Ok((resource, controller, controller_skipped))
}

/// The group must be valid, and the only one of a single-group project.
fn check_group(req: &Request, project: &Project) -> Result<()> {
    validate_group(
        &req.group,
        &project.qualified_group(&req.group),
        &project.domain,
        project.multigroup,
    )?;
    let other_group = project
        .resources
        .iter()
        .find(|r| !r.core && r.group != req.group);
    if let (false, Some(other)) = (project.multigroup, other_group) {
        return Err(Error::msg(format!(
            "multiple groups are not allowed in a single-group project (it has group {:?}); use --group {} or start the project with `operator-gen init --multigroup`",
            other.group, other.group
        )));
    }
    Ok(())
}

/// The plural and the kind's default one: `--plural`, else the one PROJECT records for this
/// version or another version of the kind (which share one CRD), else the default.
fn plural(
    req: &Request,
    project: &Project,
    core: Option<CoreType>,
    existing: Option<usize>,
    sibling: Option<&ResourceEntry>,
) -> Result<(String, String)> {
    let default_plural = match core {
        Some(c) => c.plural.to_owned(),
        None => names::plural(&req.kind),
    };
    let sibling_plural =
        sibling.map(|r| r.plural.clone().unwrap_or_else(|| default_plural.clone()));
    if let (Some(given), Some(theirs), Some(r)) = (&req.plural, &sibling_plural, sibling)
        && given != theirs
    {
        return Err(Error::msg(format!(
            "--plural {given} differs from {theirs}, the plural of {} in {}/{}: the versions of a kind share one CRD; drop --plural or pass --plural {theirs}",
            req.kind, r.group, r.version
        )));
    }
    let plural = req
        .plural
        .clone()
        .or_else(|| existing.and_then(|i| project.resources[i].plural.clone()))
        .or(sibling_plural)
        .unwrap_or_else(|| default_plural.clone());
    if !names::is_dns1035_label(&plural) {
        return Err(Error::msg(format!(
            "plural {plural:?} is invalid: it must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter); pass --plural"
        )));
    }
    Ok((plural, default_plural))
}

/// Whether the kind is namespace-scoped: a built-in type's own scope, else `--namespaced`, else
/// the scope PROJECT records for it or another version of the kind, else namespaced.
fn scope(
    req: &Request,
    core: Option<CoreType>,
    existing_api: Option<&ApiEntry>,
    sibling: Option<&ResourceEntry>,
    resource: bool,
) -> Result<bool> {
    let sibling_scope = sibling.and_then(|r| r.api.as_ref().map(|a| (r, a.namespaced)));
    if let (Some(given), Some((r, theirs))) = (req.namespaced, sibling_scope)
        && given != theirs
    {
        return Err(Error::msg(format!(
            "--namespaced={given} differs from the scope of {} in {}/{} ({}): the versions of a kind share one CRD; drop --namespaced",
            req.kind,
            r.group,
            r.version,
            if theirs { "namespaced" } else { "cluster" }
        )));
    }
    Ok(match (core, req.namespaced, existing_api) {
        (Some(c), _, _) => c.namespaced,
        (None, Some(n), _) => n,
        (None, None, Some(api)) if !resource => api.namespaced,
        (None, None, _) if sibling_scope.is_some() => sibling_scope.is_some_and(|(_, n)| n),
        _ => true,
    })
}

/// The controller's module must not belong to another kind's controller.
fn check_controller_module(req: &Request, project: &Project) -> Result<()> {
    let module = names::kind_module(&req.kind);
    let group_mod = names::module_name(&req.group);
    let owner = project.resources.iter().find(|r| {
        r.controller
            && names::kind_module(&r.kind) == module
            && (!project.multigroup || names::module_name(&r.group) == group_mod)
            && !(r.group == req.group && r.version == req.version && r.kind == req.kind)
    });
    if let Some(r) = owner {
        return Err(Error::msg(format!(
            "the controller module `{module}` already belongs to {}/{} {}; pass --controller=false to add only the type",
            r.group, r.version, r.kind
        )));
    }
    Ok(())
}

/// A kind's type must not take the CRD of another kind of its group: the same kind but for case
/// (kinds and singular names are case-insensitive in a group), or the same plural, which is the
/// same CRD name `<plural>.<group>.<domain>`. Checked with `--force` too: one CRD cannot hold two
/// kinds, and `manifests` would refuse the project.
fn check_crd_clash(req: &Request, project: &Project, plural: &str) -> Result<()> {
    let crd_name = format!("{plural}.{}", project.qualified_group(&req.group));
    let others = project
        .resources
        .iter()
        .filter(|r| !r.core && r.api.is_some() && r.group == req.group && r.kind != req.kind);
    for r in others {
        if r.kind.eq_ignore_ascii_case(&req.kind) {
            return Err(Error::msg(format!(
                "kind {} differs only in case from kind {} of {}/{}, and a group's kinds must differ case-insensitively (one CRD name for both); pass --kind {} to add a version of it, or pick another kind",
                req.kind, r.kind, r.group, r.version, r.kind
            )));
        }
        let theirs = r.plural.clone().unwrap_or_else(|| names::plural(&r.kind));
        if theirs == plural {
            return Err(Error::msg(format!(
                "plural {plural} of {} is already the plural of kind {} in {}/{}: both would be CRD {crd_name}; pass another --plural",
                req.kind, r.kind, r.group, r.version
            )));
        }
    }
    Ok(())
}

/// A new kind must not define a name another kind of its module defines (`Foo` and `FooSpec`).
fn check_kind_clash(req: &Request, project: &Project) -> Result<()> {
    let mine = kind_names(&req.kind);
    let same_module = |r: &ResourceEntry| {
        names::module_name(&r.version) == names::module_name(&req.version)
            && (!project.multigroup
                || names::module_name(&r.group) == names::module_name(&req.group))
    };
    for r in &project.resources {
        if r.core || r.api.is_none() || r.kind == req.kind || !same_module(r) {
            continue;
        }
        if let Some(name) = kind_names(&r.kind).into_iter().find(|n| mine.contains(n)) {
            return Err(Error::msg(format!(
                "kind {:?} clashes with kind {} of {}/{}: both would define `{name}` in the same module; pick another kind or another version",
                req.kind, r.kind, r.group, r.version
            )));
        }
    }
    Ok(())
}

/// The finalizer of a kind's controller: `<group>/finalizer`, the project's domain for a
/// built-in type.
fn finalizer(plan: &Plan, project: &Project, api_group: &str) -> String {
    match plan.core {
        Some(_) => format!("{}/finalizer", project.domain),
        None => format!("{api_group}/finalizer"),
    }
}

/// The API group of a plan's kind: someone else's group and domain, or the project's.
fn api_group(plan: &Plan, project: &Project) -> String {
    match &plan.external_domain {
        Some(domain) => format!("{}.{domain}", plan.group),
        None => project.qualified_group(&plan.group),
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
            let g = api_group(plan, project);
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
    let (api_dir, api_module, controller_file, controller_module) = if project.multigroup {
        (
            format!("{group_mod}/{version_mod}"),
            group_mod.clone(),
            format!("{group_mod}/{kind_module}"),
            group_mod.clone(),
        )
    } else {
        (
            version_mod.clone(),
            version_mod.clone(),
            kind_module.clone(),
            kind_module.clone(),
        )
    };
    let sample_name = format!("{group_mod}_{}_{kind_lower}", plan.version);
    ApiContext {
        header,
        project_name: project.project_name.clone(),
        manager_namespace: format!("{}-system", project.project_name),
        manager_namespaced: project.namespaced,
        multigroup: project.multigroup,
        group: plan.group.clone(),
        finalizer: finalizer(plan, project, &api_group),
        crd_file: names::crd_file_name(&api_group, &plan.plural),
        config_prefix: config_prefix(project.multigroup, &plan.group, &plan.kind),
        rbac_namespace: if project.namespaced && plan.namespaced {
            format!(",namespace={}-system", project.project_name)
        } else {
            String::new()
        },
        role_prefix: role_prefix(project.multigroup, &plan.group, &plan.kind),
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
        resource: plan.resource,
        controller: plan.controller,
        api_dir,
        api_module,
        controller_file,
        controller_module,
        sample_name,
        group_module: group_mod,
        version_module: version_mod,
        other_version: !plan.siblings.is_empty(),
        storage_version: false,
        deploy_image: plan.deploy_image.as_ref().map(|(_, c)| c.clone()),
        kind_upper: plan.kind.to_uppercase(),
        external: plan.external_domain.is_some(),
    }
}

/// Keeps the storage marker right among the versions of `entry`'s kind that remain in `project`
/// once `entry` is deleted (`delete api`; `entry` is no longer in `project`): a lone remaining
/// version is stored anyway, so the marker `create api` put on it when a second version came
/// goes again (staged in `s`); several need one of them marked, so deleting the marked one is
/// refused until another is.
pub fn unmark_after_delete(
    s: &mut Scaffold,
    project: &Project,
    entry: &ResourceEntry,
) -> Result<()> {
    if entry.core || entry.api.is_none() {
        return Ok(());
    }
    let remaining = siblings(project, &entry.group, &entry.kind, &entry.version);
    let state = |s: &mut Scaffold, r: &ResourceEntry| -> Result<(String, String, Storage)> {
        let rel = types_file(project, &r.group, &r.version, &r.kind);
        let text = s.read(&rel)?.unwrap_or_default();
        let state = storage::inspect(&text, &r.kind);
        Ok((rel, text, state))
    };
    match remaining.as_slice() {
        [] => Ok(()),
        [i] => {
            if let (rel, text, Storage::Marked { lines }) = state(s, &project.resources[*i])? {
                s.file(&rel, storage::remove(&text, &lines), IfExists::Overwrite)?;
            }
            Ok(())
        }
        several => {
            let marked = |(_, text, state): &(String, String, Storage)| match state {
                Storage::Marked { .. } | Storage::MarkedOtherwise => true,
                Storage::Unknown(_) => storage::mentions_marker(text),
                Storage::Unmarked { .. } => false,
            };
            if !marked(&state(s, entry)?) {
                return Ok(());
            }
            let mut versions = Vec::new();
            for &i in several {
                let r = &project.resources[i];
                if marked(&state(s, r)?) {
                    return Ok(());
                }
                versions.push(r.version.as_str());
            }
            Err(Error::msg(format!(
                "{}/{} {} is the stored version of its kind, and {} would be left with none; add `/// {}` to the spec of the version to store, then run delete api again",
                entry.group,
                entry.version,
                entry.kind,
                versions.join(", "),
                storage::MARKER
            )))
        }
    }
}

/// Keep exactly one `+kubebuilder:storageversion` among the kind's versions: with `--storage`
/// the marker leaves the other versions' spec (staged in `s`) and the new version gets it;
/// without, a version that has it keeps it, and a lone other version without it gets it. Returns
/// whether the new version's spec carries the marker. A file whose shape it cannot rewrite
/// safely is an error naming it, before anything is written.
fn mark_storage(
    s: &mut Scaffold,
    plan: &Plan,
    project: &Project,
    ctx: &ApiContext,
) -> Result<bool> {
    if !plan.resource || plan.core.is_some() {
        return Ok(false);
    }
    if plan.siblings.is_empty() {
        // a lone version is stored anyway; `--storage` marks it all the same
        return Ok(plan.storage);
    }
    let own = types_file(project, &plan.group, &plan.version, &plan.kind);
    let own_marked = s.read(&own)?.is_some_and(|t| {
        matches!(
            storage::inspect(&t, &plan.kind),
            Storage::Marked { .. } | Storage::MarkedOtherwise
        )
    });
    let mut others = Vec::new();
    for &i in &plan.siblings {
        let r = &project.resources[i];
        let rel = types_file(project, &r.group, &r.version, &r.kind);
        let text = s.read(&rel)?;
        let state = match &text {
            Some(t) => storage::inspect(t, &plan.kind),
            None => Storage::Unknown("it does not exist".to_owned()),
        };
        others.push((rel, r.version.clone(), text.unwrap_or_default(), state));
    }
    let kind = &ctx.kind;
    if plan.storage {
        for (rel, version, text, state) in &others {
            match state {
                Storage::Marked { lines } => {
                    s.file(rel, storage::remove(text, lines), IfExists::Overwrite)?
                }
                Storage::MarkedOtherwise => {
                    return Err(Error::msg(format!(
                        "{rel} marks {kind} {version} as stored in a form operator-gen does not rewrite (`storage_version` in #[k8s(...)] or a #[doc] attribute); remove it there by hand, then run the command again"
                    )));
                }
                Storage::Unknown(why) if storage::mentions_marker(text) => {
                    return Err(Error::msg(format!(
                        "{rel} cannot be rewritten safely ({why}) and mentions `{}`; remove the marker there by hand, then run the command again",
                        storage::MARKER
                    )));
                }
                _ => {}
            }
        }
        return Ok(true);
    }
    let marked = |(_, _, text, state): &(String, String, String, Storage)| match state {
        Storage::Marked { .. } | Storage::MarkedOtherwise => true,
        Storage::Unknown(_) => storage::mentions_marker(text),
        Storage::Unmarked { .. } => false,
    };
    if own_marked {
        return Ok(true);
    }
    if others.iter().any(marked) {
        return Ok(false);
    }
    match others.as_slice() {
        [(rel, _, text, Storage::Unmarked { insert_at, indent })] => {
            s.file(
                rel,
                storage::add(text, *insert_at, indent),
                IfExists::Overwrite,
            )?;
            Ok(false)
        }
        [(rel, version, _, Storage::Unknown(why))] => Err(Error::msg(format!(
            "{rel} cannot be rewritten safely ({why}), so {kind} {version} cannot be marked as the stored version; add `/// {}` to the doc comment of its spec by hand, or pass --storage to store {}",
            storage::MARKER,
            plan.version
        ))),
        _ => {
            let versions: Vec<&str> = others.iter().map(|o| o.1.as_str()).collect();
            Err(Error::msg(format!(
                "none of {kind}'s versions {} is marked as the stored version; add `/// {}` to the spec of the one to store, or pass --storage to store {}",
                versions.join(", "),
                storage::MARKER,
                plan.version
            )))
        }
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
    let domain = match (plan.core, &plan.external_domain) {
        (Some(c), _) if c.group.ends_with(".k8s.io") => "k8s.io".to_owned(),
        (Some(_), _) => String::new(),
        (None, Some(domain)) => domain.clone(),
        (None, None) => project.domain.clone(),
    };
    let external = plan.external_domain.is_some();
    let new = ResourceEntry {
        external,
        api: (plan.resource && !external).then(|| ApiEntry {
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
        webhooks: None,
    };
    deploy_image::record(project, &new, plan.deploy_image.as_ref().map(|(o, _)| o));
    match plan.existing {
        Some(i) => {
            let old = &project.resources[i];
            let merged = ResourceEntry {
                api: new.api.clone().or_else(|| old.api.clone()),
                controller: new.controller || old.controller,
                webhooks: old.webhooks.clone(),
                ..new
            };
            project.resources[i] = merged;
        }
        None => project.resources.push(new),
    }
    project.cli_version = Some(versions::CLI.to_owned());
}
