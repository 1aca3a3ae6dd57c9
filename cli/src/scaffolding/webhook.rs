//! What `create webhook` scaffolds: its plan (the resource and the webhook types asked for,
//! checked against the project), its context and the lists rendered from `templates/webhook/`
//! into the kind's webhook module, its registration in `main.rs`, the config/ entries (webhook
//! service, cert-manager, the manager's patch, CA injection) and the `PROJECT` webhooks entry.

use std::path::Path;

use serde::Serialize;

use crate::core_types::CoreType;
use crate::error::{Error, Result};
use crate::project::markers::{
    CONTROLLERS, CRD_WEBHOOK_PATCHES, DEFAULT_PATCHES, DEFAULT_REPLACEMENTS, IMPORTS, MODULES,
    NETWORK_POLICIES, WEBHOOK_MANIFESTS, WEBHOOK_MARKERS, WEBHOOK_REGISTRATIONS, WEBHOOK_TYPES,
    WEBHOOKS,
};
use crate::project::paths::{types_file, version_dir, version_module_path};
use crate::project::storage_version::{self as storage, Storage};
use crate::project::validate::{find_core, validate_kind, validate_version};
use crate::project::{self, Project, ResourceEntry, WebhooksEntry, boilerplate, names, versions};
use crate::scaffold::{IfExists, Scaffold};
use crate::scaffolding::lists::{Apply, Existing, File, Fragment, Insertion, Uncomment, always};
use crate::templates::Engine;

/// What every `create webhook` template sees.
#[derive(Debug, Serialize)]
pub struct WebhookContext {
    /// License header for `.rs` files, maybe empty.
    pub header: String,
    /// Project name.
    pub project_name: String,
    /// Library crate name.
    pub crate_name: String,
    /// Multi-group layout.
    pub multigroup: bool,
    /// The group as given (`crew`, `apps`, `core`).
    pub group: String,
    /// `<api group>/<version>` (`crew.my.domain/v1`, `apps/v1`, `v1` for the core group).
    pub api_group_version: String,
    /// The `groups=` value of the webhook markers (`""` for the core group).
    pub marker_group: String,
    /// The group with dots as dashes, as controller-runtime's paths spell it (empty for core).
    pub group_dashed: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Lower-cased kind.
    pub kind_lower: String,
    /// The kind's Rust module name (`frigate_ship`).
    pub kind_module: String,
    /// Plural resource name.
    pub plural: String,
    /// A built-in Kubernetes type.
    pub core: bool,
    /// The Rust path of the type (`crate::api::v1::Captain`, `k8s_openapi::api::apps::v1::Deployment`).
    pub type_path: String,
    /// The group's module name (`crew`).
    pub group_module: String,
    /// The version's module name (`v1`).
    pub version_module: String,
    /// The version's directory under `src/webhook/` (`v1`, or `crew/v1` in multigroup).
    pub webhook_dir: String,
    /// The module `src/webhook/mod.rs` declares for it (`v1`, or `crew` in multigroup).
    pub webhook_module: String,
    /// The Rust path of the kind's webhook module, from the crate root (`webhook::v1::captain`).
    pub webhook_path: String,
    /// Scaffold the defaulting webhook now.
    pub defaulting: bool,
    /// Scaffold the validating webhook now.
    pub validation: bool,
    /// Scaffold the conversion webhook now.
    pub conversion: bool,
    /// The spokes of the conversion webhook, as Rust paths of their version modules
    /// (`crate::api::v2`).
    pub spoke_modules: Vec<String>,
    /// The CRD's name (`captains.crew.my.domain`).
    pub crd_name: String,
    /// The name of the CRD's conversion patch under config/crd/patches, without
    /// `webhook_in_` and `.yaml` (`captains`, or `crew_captains` in multigroup).
    pub patch_name: String,
    /// The kind's webhook module is written whole (new, or `--force`).
    pub write_module: bool,
    /// `src/main.rs` has no webhook server yet.
    pub first_webhook: bool,
    /// The defaulting webhook's custom path, empty for `/mutate-<group>-<version>-<kind>`.
    pub defaulting_path: String,
    /// The validating webhook's custom path, empty for `/validate-<group>-<version>-<kind>`.
    pub validation_path: String,
}

/// The files of `create webhook`: each template sits where its output lands.
const FILES: &[File<WebhookContext>] = &[
    File {
        template: "webhook/src/webhook/mod.rs.tera",
        existing: Existing::Keep,
        when: always,
    },
    File {
        template: "webhook/src/webhook/{{group_module}}/mod.rs.tera",
        existing: Existing::Keep,
        when: |c| c.multigroup,
    },
    File {
        template: "webhook/src/webhook/{{webhook_dir}}/mod.rs.tera",
        existing: Existing::Keep,
        when: always,
    },
    File {
        template: "webhook/src/webhook/{{webhook_dir}}/{{kind_module}}.rs.tera",
        existing: Existing::Owned,
        when: |c| c.write_module,
    },
    File {
        template: "webhook/config/webhook/kustomization.yaml.tera",
        existing: Existing::Keep,
        when: always,
    },
    File {
        template: "webhook/config/webhook/service.yaml.tera",
        existing: Existing::Keep,
        when: always,
    },
    File {
        template: "webhook/config/certmanager/issuer.yaml.tera",
        existing: Existing::Keep,
        when: always,
    },
    File {
        template: "webhook/config/certmanager/certificate-webhook.yaml.tera",
        existing: Existing::Keep,
        when: always,
    },
    File {
        template: "webhook/config/certmanager/kustomization.yaml.tera",
        existing: Existing::Keep,
        when: always,
    },
    File {
        template: "webhook/config/certmanager/kustomizeconfig.yaml.tera",
        existing: Existing::Keep,
        when: always,
    },
    File {
        template: "webhook/config/default/manager_webhook_patch.yaml.tera",
        existing: Existing::Keep,
        when: always,
    },
    File {
        template: "webhook/config/network-policy/allow-webhook-traffic.yaml.tera",
        existing: Existing::Keep,
        when: always,
    },
    File {
        template: "webhook/config/crd/patches/webhook_in_{{patch_name}}.yaml.tera",
        existing: Existing::Owned,
        when: |c| c.conversion,
    },
    File {
        template: "webhook/config/crd/kustomizeconfig.yaml.tera",
        existing: Existing::Keep,
        when: |c| c.conversion,
    },
];

/// What the files of one spoke of a conversion webhook see.
#[derive(Debug, Serialize)]
pub struct SpokeContext {
    /// License header for `.rs` files, maybe empty.
    pub header: String,
    /// Kind.
    pub kind: String,
    /// The kind's Rust module name.
    pub kind_module: String,
    /// The hub's version.
    pub hub_version: String,
    /// The Rust path of the hub's version module (`crate::api::v1`).
    pub hub_module: String,
    /// The hub's webhook module file (`src/webhook/v1/captain.rs`).
    pub hub_webhook_file: String,
    /// The spoke's version.
    pub spoke_version: String,
    /// The spoke's directory under `src/api/` (`v2`, or `crew/v2` in multigroup).
    pub spoke_dir: String,
}

/// The files of each spoke: its `From` impls to and from the hub.
const SPOKE_FILES: &[File<SpokeContext>] = &[File {
    template: "webhook/src/api/{{spoke_dir}}/{{kind_module}}_conversion.rs.tera",
    existing: Existing::Owned,
    when: always,
}];

/// Each spoke's conversion module, declared in its version module.
const SPOKE_WIRING: &[Insertion<SpokeContext>] = &[Insertion {
    file: "src/api/{{spoke_dir}}/mod.rs",
    marker: MODULES,
    fragment: Fragment::Text("pub mod {{kind_module}}_conversion;"),
    when: always,
}];

/// The kind's webhook module as `src/webhook/...` names it.
const KIND_FILE: &str = "src/webhook/{{webhook_dir}}/{{kind_module}}.rs";

/// The Rust wiring: module declarations and the registration in `main.rs`.
const RUST_WIRING: &[Insertion<WebhookContext>] = &[
    Insertion {
        file: "src/lib.rs",
        marker: MODULES,
        fragment: Fragment::Text("pub mod webhook;"),
        when: always,
    },
    Insertion {
        file: "src/webhook/mod.rs",
        marker: MODULES,
        fragment: Fragment::Text("pub mod {{webhook_module}};"),
        when: always,
    },
    Insertion {
        file: "src/webhook/{{group_module}}/mod.rs",
        marker: MODULES,
        fragment: Fragment::Text("pub mod {{version_module}};"),
        when: |c| c.multigroup,
    },
    Insertion {
        file: "src/webhook/{{webhook_dir}}/mod.rs",
        marker: MODULES,
        fragment: Fragment::Text("pub mod {{kind_module}};"),
        when: always,
    },
    Insertion {
        file: "src/main.rs",
        marker: CONTROLLERS,
        fragment: Fragment::Template("fragments/webhook/webhook_server.rs.tera"),
        when: |c| c.first_webhook,
    },
    Insertion {
        file: "src/main.rs",
        marker: WEBHOOKS,
        fragment: Fragment::Text(
            "let webhooks = {{crate_name}}::{{webhook_path}}::register(webhooks);",
        ),
        when: always,
    },
];

/// The webhook types, each added to the kind's module at its markers.
const KIND_WIRING: &[Insertion<WebhookContext>] = &[
    Insertion {
        file: KIND_FILE,
        marker: WEBHOOK_MARKERS,
        fragment: Fragment::Text(
            "//! +kubebuilder:webhook:path={% if defaulting_path %}{{defaulting_path}}{% else %}/mutate-{{group_dashed}}-{{version}}-{{kind_lower}}{% endif %},mutating=true,failurePolicy=fail,sideEffects=None,groups={{marker_group}},resources={{plural}},verbs=create;update,versions={{version}},name=m{{kind_lower}}-{{version}}.kb.io,admissionReviewVersions=v1",
        ),
        when: |c| c.defaulting,
    },
    Insertion {
        file: KIND_FILE,
        marker: WEBHOOK_MARKERS,
        fragment: Fragment::Text(
            "//! +kubebuilder:webhook:path={% if validation_path %}{{validation_path}}{% else %}/validate-{{group_dashed}}-{{version}}-{{kind_lower}}{% endif %},mutating=false,failurePolicy=fail,sideEffects=None,groups={{marker_group}},resources={{plural}},verbs=create;update,versions={{version}},name=v{{kind_lower}}-{{version}}.kb.io,admissionReviewVersions=v1",
        ),
        when: |c| c.validation,
    },
    Insertion {
        file: KIND_FILE,
        marker: IMPORTS,
        fragment: Fragment::Text("use operator_gen_runtime::webhook::Defaulter;"),
        when: |c| c.defaulting,
    },
    Insertion {
        file: KIND_FILE,
        marker: IMPORTS,
        fragment: Fragment::Text("use operator_gen_runtime::webhook::HookError;"),
        when: |c| c.validation,
    },
    Insertion {
        file: KIND_FILE,
        marker: IMPORTS,
        fragment: Fragment::Text("use operator_gen_runtime::webhook::Validator;"),
        when: |c| c.validation,
    },
    Insertion {
        file: KIND_FILE,
        marker: IMPORTS,
        fragment: Fragment::Text("use operator_gen_runtime::webhook::Warnings;"),
        when: |c| c.validation,
    },
    Insertion {
        file: KIND_FILE,
        marker: WEBHOOK_REGISTRATIONS,
        fragment: Fragment::Text(
            "let webhooks = webhooks.{% if defaulting_path %}defaulter_at::<{{kind}}>(DEFAULTING_PATH, {% else %}defaulter::<{{kind}}>({% endif %}{{kind}}CustomDefaulter);",
        ),
        when: |c| c.defaulting,
    },
    Insertion {
        file: KIND_FILE,
        marker: WEBHOOK_REGISTRATIONS,
        fragment: Fragment::Text(
            "let webhooks = webhooks.{% if validation_path %}validator_at::<{{kind}}>(VALIDATION_PATH, {% else %}validator::<{{kind}}>({% endif %}{{kind}}CustomValidator);",
        ),
        when: |c| c.validation,
    },
    Insertion {
        file: KIND_FILE,
        marker: IMPORTS,
        fragment: Fragment::Text("use operator_gen_runtime::webhook::HubConverter;"),
        when: |c| c.conversion,
    },
    Insertion {
        file: KIND_FILE,
        marker: WEBHOOK_REGISTRATIONS,
        fragment: Fragment::Template("fragments/webhook/converter.rs.tera"),
        when: |c| c.conversion,
    },
    Insertion {
        file: KIND_FILE,
        marker: WEBHOOK_TYPES,
        fragment: Fragment::Text(
            "/// The path the defaulting webhook is served on (`create webhook --defaulting-path`), as\n/// its `+kubebuilder:webhook` marker names it.\npub const DEFAULTING_PATH: &str = \"{{defaulting_path}}\";\n\n",
        ),
        when: |c| c.defaulting && !c.defaulting_path.is_empty(),
    },
    Insertion {
        file: KIND_FILE,
        marker: WEBHOOK_TYPES,
        fragment: Fragment::Text(
            "/// The path the validating webhook is served on (`create webhook --validation-path`), as\n/// its `+kubebuilder:webhook` marker names it.\npub const VALIDATION_PATH: &str = \"{{validation_path}}\";\n\n",
        ),
        when: |c| c.validation && !c.validation_path.is_empty(),
    },
    Insertion {
        file: KIND_FILE,
        marker: WEBHOOK_TYPES,
        fragment: Fragment::Template("fragments/webhook/defaulter.rs.tera"),
        when: |c| c.defaulting,
    },
    Insertion {
        file: KIND_FILE,
        marker: WEBHOOK_TYPES,
        fragment: Fragment::Template("fragments/webhook/validator.rs.tera"),
        when: |c| c.validation,
    },
];

/// The kustomize wiring: the manager's webhook patch, the webhook network policy and the
/// replacements that give the certificate its DNS names and inject its CA.
const KUSTOMIZE_WIRING: &[Insertion<WebhookContext>] = &[
    Insertion {
        file: "config/default/kustomization.yaml",
        marker: DEFAULT_PATCHES,
        fragment: Fragment::Text(
            "- path: manager_webhook_patch.yaml\n  target:\n    kind: Deployment",
        ),
        when: always,
    },
    Insertion {
        file: "config/webhook/kustomization.yaml",
        marker: WEBHOOK_MANIFESTS,
        fragment: Fragment::Text("- manifests.yaml"),
        when: |c| c.defaulting || c.validation,
    },
    Insertion {
        file: "config/network-policy/kustomization.yaml",
        marker: NETWORK_POLICIES,
        fragment: Fragment::Text("- allow-webhook-traffic.yaml"),
        when: always,
    },
    Insertion {
        file: "config/default/kustomization.yaml",
        marker: DEFAULT_REPLACEMENTS,
        fragment: Fragment::Text("replacements:"),
        when: always,
    },
    Insertion {
        file: "config/default/kustomization.yaml",
        marker: DEFAULT_REPLACEMENTS,
        fragment: Fragment::Template("fragments/webhook/service_dns_replacements.yaml.tera"),
        when: always,
    },
    Insertion {
        file: "config/default/kustomization.yaml",
        marker: DEFAULT_REPLACEMENTS,
        fragment: Fragment::Template("fragments/webhook/mutating_ca_replacements.yaml.tera"),
        when: |c| c.defaulting,
    },
    Insertion {
        file: "config/default/kustomization.yaml",
        marker: DEFAULT_REPLACEMENTS,
        fragment: Fragment::Template("fragments/webhook/validating_ca_replacements.yaml.tera"),
        when: |c| c.validation,
    },
    Insertion {
        file: "config/default/kustomization.yaml",
        marker: DEFAULT_REPLACEMENTS,
        fragment: Fragment::Template("fragments/webhook/crd_ca_replacements.yaml.tera"),
        when: |c| c.conversion,
    },
    Insertion {
        file: "config/crd/kustomization.yaml",
        marker: CRD_WEBHOOK_PATCHES,
        fragment: Fragment::Text("- path: patches/webhook_in_{{patch_name}}.yaml"),
        when: |c| c.conversion,
    },
];

/// Lines of the default kustomization a webhook enables.
const KUSTOMIZE_ENABLE: &[Uncomment<WebhookContext>] = &[
    Uncomment {
        file: "config/default/kustomization.yaml",
        line: "- ../webhook",
        when: always,
    },
    Uncomment {
        file: "config/crd/kustomization.yaml",
        line: "configurations:",
        when: |c| c.conversion,
    },
    Uncomment {
        file: "config/crd/kustomization.yaml",
        line: "- kustomizeconfig.yaml",
        when: |c| c.conversion,
    },
    Uncomment {
        file: "config/default/kustomization.yaml",
        line: "- ../certmanager",
        when: always,
    },
];

/// What `create webhook` asks for: its flags.
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
    /// A defaulting webhook.
    pub defaulting: bool,
    /// A validating webhook.
    pub programmatic_validation: bool,
    /// A conversion webhook with this version as the hub.
    pub conversion: bool,
    /// The spokes of the conversion webhook.
    pub spoke: Vec<String>,
    /// The defaulting webhook's custom path.
    pub defaulting_path: Option<String>,
    /// The validating webhook's custom path.
    pub validation_path: Option<String>,
    /// Scaffold the webhook module again.
    pub force: bool,
}

/// `plan`'s output staged in a scaffold of `root`, with `project`'s entry updated and written:
/// the webhook module and config/ files rendered, the wiring inserted, the kustomize lines
/// enabled, and for a conversion the spokes' `From` impls and the hub's storage marker.
pub fn stage(plan: &Plan, project: &mut Project, root: &Path, force: bool) -> Result<Scaffold> {
    let engine = Engine::for_project(root)?;
    let header = boilerplate::read(root)?;
    let mut s = Scaffold::new(root);
    let Some(main) = s.read("src/main.rs")? else {
        return Err(Error::msg(
            "src/main.rs is missing, so the webhooks cannot be registered; restore it from a fresh `operator-gen init`",
        ));
    };
    let first_webhook = !main.lines().any(|l| l.trim() == WEBHOOKS);
    let ctx = context(
        plan,
        project,
        header,
        first_webhook,
        force || !s.exists(&kind_file(plan, project)),
    );
    let apply = Apply {
        engine: &engine,
        force,
    };
    apply.files(&mut s, FILES, &ctx)?;
    apply.insertions(&mut s, RUST_WIRING, &ctx)?;
    apply.insertions(&mut s, KIND_WIRING, &ctx)?;
    apply.insertions(&mut s, KUSTOMIZE_WIRING, &ctx)?;
    apply.uncomments(&mut s, KUSTOMIZE_ENABLE, &ctx)?;
    if plan.conversion {
        for spoke in &plan.spokes {
            let spoke_ctx = SpokeContext {
                header: ctx.header.clone(),
                kind: plan.kind.clone(),
                kind_module: ctx.kind_module.clone(),
                hub_version: plan.version.clone(),
                hub_module: version_module_path(project, &plan.group, &plan.version),
                hub_webhook_file: kind_file(plan, project),
                spoke_version: spoke.clone(),
                spoke_dir: version_dir(project, &plan.group, spoke),
            };
            apply.files(&mut s, SPOKE_FILES, &spoke_ctx)?;
            apply.insertions(&mut s, SPOKE_WIRING, &spoke_ctx)?;
        }
        mark_storage_version(&mut s, plan, project)?;
    }

    update_project(project, plan);
    crate::templates::record(project, &engine);
    s.file(project::FILE_NAME, project.render()?, IfExists::Overwrite)?;
    Ok(s)
}

/// Marks the hub `+kubebuilder:storageversion` unless a version of the kind already is (the
/// hub of a conversion is the version stored), as `create api --storage` would.
fn mark_storage_version(s: &mut Scaffold, plan: &Plan, project: &Project) -> Result<()> {
    let mut hub = None;
    for r in project
        .resources
        .iter()
        .filter(|r| !r.core && r.group == plan.group && r.kind == plan.kind && r.api.is_some())
    {
        let rel = types_file(project, &r.group, &r.version, &r.kind);
        let text = s.read(&rel)?.unwrap_or_default();
        let state = storage::inspect(&text, &plan.kind);
        match &state {
            Storage::Marked { .. } | Storage::MarkedOtherwise => return Ok(()),
            Storage::Unknown(_) if storage::mentions_marker(&text) => return Ok(()),
            _ => {}
        }
        if r.version == plan.version {
            hub = Some((rel, text, state));
        }
    }
    match hub {
        Some((rel, text, Storage::Unmarked { insert_at, indent })) => s.file(
            &rel,
            storage::add(&text, insert_at, &indent),
            IfExists::Overwrite,
        ),
        Some((rel, _, Storage::Unknown(why))) => Err(Error::msg(format!(
            "{rel} cannot be rewritten safely ({why}), so the hub cannot be marked as the storage version; put `/// {}` on the doc comment of the hub's spec struct by hand, then run the command again",
            storage::MARKER
        ))),
        _ => Ok(()),
    }
}

/// The decisions `create webhook` takes before rendering anything.
#[derive(Debug)]
pub struct Plan {
    group: String,
    version: String,
    kind: String,
    plural: String,
    /// The built-in type, when the kind is one.
    pub core: Option<CoreType>,
    /// Where the resource is in PROJECT, if it is.
    existing: Option<usize>,
    /// The webhook types asked for now.
    defaulting: bool,
    validation: bool,
    conversion: bool,
    /// The spoke versions of the conversion webhook asked for now.
    spokes: Vec<String>,
    /// The custom paths of the defaulting and validating webhooks, if any.
    defaulting_path: Option<String>,
    validation_path: Option<String>,
    /// The webhook types the kind already has.
    had: WebhooksEntry,
}

/// The decisions of `create webhook` for `req` in `project`, or the one-line error of the first
/// check that fails.
pub fn plan(req: &Request, project: &Project) -> Result<Plan> {
    validate_version(&req.version)?;
    validate_kind(&req.kind)?;
    if !req.defaulting && !req.programmatic_validation && !req.conversion {
        return Err(Error::msg(
            "create webhook needs at least one of --defaulting, --programmatic-validation and --conversion; pass the webhook types to scaffold",
        ));
    }
    if !req.spoke.is_empty() && !req.conversion {
        return Err(Error::msg(
            "--spoke names the versions of a conversion webhook; pass --conversion with it or drop --spoke",
        ));
    }
    let existing = project
        .resources
        .iter()
        .position(|r| r.group == req.group && r.version == req.version && r.kind == req.kind);
    let entry = existing.map(|i| &project.resources[i]);
    let core = match entry {
        Some(e) if e.api.is_some() => None,
        _ => find_core(&req.group, &req.version, &req.kind)?,
    };
    if entry.is_none_or(|e| e.api.is_none()) && core.is_none() {
        return Err(Error::msg(format!(
            "no API found for {}/{} {}: a webhook needs the kind's type; run `operator-gen create api --group {} --version {} --kind {}` first",
            req.group, req.version, req.kind, req.group, req.version, req.kind
        )));
    }
    let had = entry.and_then(|e| e.webhooks.clone()).unwrap_or_default();
    let (defaulting_path, validation_path) = custom_paths(req, &had)?;
    let spokes = if req.conversion {
        spokes(req, project, core, &had)?
    } else {
        Vec::new()
    };
    for (asked, present, name, flag) in [
        (req.defaulting, had.defaulting, "defaulting", "--defaulting"),
        (
            req.programmatic_validation,
            had.validation,
            "validating",
            "--programmatic-validation",
        ),
    ] {
        if asked && present && !req.force {
            return Err(Error::msg(format!(
                "{name} webhook already exists for {}/{} {}; drop {flag} or pass --force to scaffold the webhook module again",
                req.group, req.version, req.kind
            )));
        }
    }
    let plural = match (core, entry) {
        (Some(c), _) => c.plural.to_owned(),
        (None, Some(e)) => e.plural.clone().unwrap_or_else(|| names::plural(&e.kind)),
        (None, None) => names::plural(&req.kind),
    };
    let plural = req.plural.clone().unwrap_or(plural);
    if !names::is_dns1035_label(&plural) {
        return Err(Error::msg(format!(
            "plural {plural:?} is invalid: it must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter); pass --plural"
        )));
    }
    Ok(Plan {
        group: req.group.clone(),
        version: req.version.clone(),
        kind: req.kind.clone(),
        plural,
        core,
        existing,
        defaulting: req.defaulting || (req.force && had.defaulting),
        validation: req.programmatic_validation || (req.force && had.validation),
        conversion: !spokes.is_empty(),
        spokes,
        defaulting_path,
        validation_path,
        had,
    })
}

/// The custom paths of the defaulting and validating webhooks: the ones given, each only with
/// its webhook type, else (scaffolding the module again) the ones PROJECT records.
fn custom_paths(req: &Request, had: &WebhooksEntry) -> Result<(Option<String>, Option<String>)> {
    for (path, asked, flag, needs) in [
        (
            &req.defaulting_path,
            req.defaulting,
            "--defaulting-path",
            "--defaulting",
        ),
        (
            &req.validation_path,
            req.programmatic_validation,
            "--validation-path",
            "--programmatic-validation",
        ),
    ] {
        if path.is_some() && !asked {
            return Err(Error::msg(format!(
                "{flag} can only be used with {needs}; pass {needs} with it or drop {flag}"
            )));
        }
    }
    let keep = |given: &Option<String>, recorded: &Option<String>| {
        given
            .clone()
            .or_else(|| recorded.clone().filter(|_| req.force))
    };
    let defaulting = keep(&req.defaulting_path, &had.defaulting_path);
    let validation = keep(&req.validation_path, &had.validation_path);
    for path in [&defaulting, &validation].into_iter().flatten() {
        if path == "/convert" {
            return Err(Error::msg(
                "/convert is the conversion webhook's path; pass another --defaulting-path or --validation-path",
            ));
        }
    }
    if defaulting.is_some() && defaulting == validation {
        return Err(Error::msg(format!(
            "the defaulting and validating webhooks cannot share the path {}; pass a different --defaulting-path or --validation-path",
            defaulting.unwrap_or_default()
        )));
    }
    Ok((defaulting, validation))
}

/// The spokes of the conversion webhook `req` asks for: the other versions of the kind in
/// PROJECT, given with `--spoke` (with `--force` and none given, the ones PROJECT records).
fn spokes(
    req: &Request,
    project: &Project,
    core: Option<CoreType>,
    had: &WebhooksEntry,
) -> Result<Vec<String>> {
    let mut spokes: Vec<String> = Vec::new();
    if core.is_some() {
        return Err(Error::msg(format!(
            "{}/{} {} is a built-in type, whose versions the apiserver converts itself; drop --conversion (defaulting and validation are allowed)",
            req.group, req.version, req.kind
        )));
    }
    let others: Vec<&ResourceEntry> = project
        .resources
        .iter()
        .filter(|r| {
            r.group == req.group
                && r.kind == req.kind
                && r.version != req.version
                && r.api.is_some()
        })
        .collect();
    if others.is_empty() {
        return Err(Error::msg(format!(
            "a conversion webhook needs a second version of {}, but PROJECT has only {}; run `operator-gen create api --group {} --version <other> --kind {}` first and pass it with --spoke",
            req.kind, req.version, req.group, req.kind
        )));
    }
    if let Some(hub) = others
        .iter()
        .find(|r| r.webhooks.as_ref().is_some_and(|w| w.conversion))
    {
        return Err(Error::msg(format!(
            "kind {} already has a conversion webhook whose hub is {}; run `operator-gen create webhook --conversion` on version {} with the spokes you want",
            req.kind, hub.version, hub.version
        )));
    }
    if had.conversion && !req.force {
        return Err(Error::msg(format!(
            "conversion webhook already exists for {}/{} {}; drop --conversion or pass --force to scaffold the webhook module again",
            req.group, req.version, req.kind
        )));
    }
    let asked = if req.spoke.is_empty() && req.force {
        had.spoke.clone()
    } else {
        req.spoke.clone()
    };
    if asked.is_empty() {
        let versions: Vec<&str> = others.iter().map(|r| r.version.as_str()).collect();
        return Err(Error::msg(format!(
            "--conversion makes {} the hub of {}; pass the versions it converts to and from with --spoke {}",
            req.version,
            req.kind,
            versions.join(",")
        )));
    }
    for spoke in asked {
        if spoke == req.version {
            return Err(Error::msg(format!(
                "version {spoke} is the hub, not a spoke; pass --spoke with the other versions of {}",
                req.kind
            )));
        }
        if !others.iter().any(|r| r.version == spoke) {
            return Err(Error::msg(format!(
                "spoke version {spoke} of {} {} is not in PROJECT; run `operator-gen create api --group {} --version {spoke} --kind {}` first",
                req.group, req.kind, req.group, req.kind
            )));
        }
        if !spokes.contains(&spoke) {
            spokes.push(spoke);
        }
    }
    Ok(spokes)
}

/// The module directory and file of the plan's kind.
fn dirs(plan: &Plan, project: &Project) -> (String, String) {
    let dir = version_dir(project, &plan.group, &plan.version);
    // the module `src/webhook/mod.rs` declares: the group's in multigroup, else the version's
    let top = dir.split('/').next().unwrap_or_default().to_owned();
    (dir, top)
}

fn kind_file(plan: &Plan, project: &Project) -> String {
    format!(
        "src/webhook/{}/{}.rs",
        dirs(plan, project).0,
        names::kind_module(&plan.kind)
    )
}

fn context(
    plan: &Plan,
    project: &Project,
    header: String,
    first_webhook: bool,
    write_module: bool,
) -> WebhookContext {
    let crate_name = names::module_name(&project.project_name);
    let kind_module = names::kind_module(&plan.kind);
    let group_mod = names::module_name(&plan.group);
    let version_mod = names::module_name(&plan.version);
    let (api_group, type_path) = match plan.core {
        Some(c) => (
            c.group.to_owned(),
            format!(
                "k8s_openapi::api::{}::{}::{}",
                c.module, version_mod, c.kind
            ),
        ),
        None => {
            let module = if project.multigroup {
                format!("{group_mod}::{version_mod}")
            } else {
                version_mod.clone()
            };
            (
                project.qualified_group(&plan.group),
                format!("crate::api::{module}::{}", plan.kind),
            )
        }
    };
    let (webhook_dir, webhook_module) = dirs(plan, project);
    WebhookContext {
        header,
        project_name: project.project_name.clone(),
        crate_name,
        multigroup: project.multigroup,
        group: plan.group.clone(),
        api_group_version: if api_group.is_empty() {
            plan.version.clone()
        } else {
            format!("{api_group}/{}", plan.version)
        },
        marker_group: if api_group.is_empty() {
            "\"\"".to_owned()
        } else {
            api_group.clone()
        },
        group_dashed: api_group.replace('.', "-"),
        version: plan.version.clone(),
        kind: plan.kind.clone(),
        kind_lower: names::lower(&plan.kind),
        plural: plan.plural.clone(),
        core: plan.core.is_some(),
        type_path,
        webhook_path: format!("webhook::{}::{kind_module}", webhook_dir.replace('/', "::")),
        kind_module,
        group_module: group_mod,
        version_module: version_mod,
        webhook_dir,
        webhook_module,
        defaulting: plan.defaulting,
        validation: plan.validation,
        conversion: plan.conversion,
        spoke_modules: plan
            .spokes
            .iter()
            .map(|v| version_module_path(project, &plan.group, v))
            .collect(),
        crd_name: format!("{}.{api_group}", plan.plural),
        patch_name: if project.multigroup && !plan.group.is_empty() {
            format!("{}_{}", plan.group, plan.plural)
        } else {
            plan.plural.clone()
        },
        write_module,
        first_webhook,
        defaulting_path: plan.defaulting_path.clone().unwrap_or_default(),
        validation_path: plan.validation_path.clone().unwrap_or_default(),
    }
}

fn update_project(project: &mut Project, plan: &Plan) {
    let webhooks = WebhooksEntry {
        conversion: plan.had.conversion || plan.conversion,
        defaulting: plan.had.defaulting || plan.defaulting,
        defaulting_path: plan
            .defaulting_path
            .clone()
            .or_else(|| plan.had.defaulting_path.clone()),
        spoke: if plan.conversion {
            plan.spokes.clone()
        } else {
            plan.had.spoke.clone()
        },
        validation: plan.had.validation || plan.validation,
        validation_path: plan
            .validation_path
            .clone()
            .or_else(|| plan.had.validation_path.clone()),
        webhook_version: "v1".to_owned(),
    };
    match plan.existing {
        Some(i) => project.resources[i].webhooks = Some(webhooks),
        None => {
            let core = plan.core;
            project.resources.push(ResourceEntry {
                api: None,
                controller: false,
                core: true,
                domain: match core {
                    Some(c) if c.group.ends_with(".k8s.io") => "k8s.io".to_owned(),
                    _ => String::new(),
                },
                external: false,
                group: plan.group.clone(),
                kind: plan.kind.clone(),
                path: core
                    .map(|c| {
                        format!(
                            "k8s_openapi::api::{}::{}",
                            c.module,
                            names::module_name(&plan.version)
                        )
                    })
                    .unwrap_or_default(),
                plural: None,
                version: plan.version.clone(),
                webhooks: Some(webhooks),
            });
        }
    }
    project.cli_version = Some(versions::CLI.to_owned());
}
