//! The pipeline's fourth stage: the manifests of a universe, all through codegen's emitters:
//! each kind's CRD (in parallel, each from the incremental layer when its inputs are as they
//! were), the RBAC role and the webhook configurations.

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use operator_gen_codegen::crd::{self, VersionInput};
use operator_gen_codegen::ir::{Marker, TypeDef, has_marker};
use operator_gen_codegen::kube_rs;
use operator_gen_codegen::markers::Kind;
use operator_gen_codegen::rbac;
use operator_gen_codegen::schema::{Scope, Settings};
use operator_gen_codegen::webhook;
use rayon::prelude::*;

use super::diag::{Diagnostic, Stopped, located};
use super::incremental::{Crd, Incremental, Reuse};
use super::threads::in_pool;
use super::universe::{Lookups, Resolver, ScanScope, Universe};

/// The files `manifests` writes, relative to the project root, with their contents.
pub type Outputs = BTreeMap<String, String>;

const MIB: f64 = 1024.0 * 1024.0;

/// What every kind's CRD is emitted from.
pub(crate) struct Emitting<'u> {
    pub universe: &'u Universe,
    pub settings: &'u Settings,
    pub role_name: &'u str,
    /// The largest CRD written (`None`: any size).
    pub max_crd_bytes: Option<usize>,
    pub layer: &'u dyn Incremental,
}

/// A custom resource's spec struct and the module it is defined in.
type Resource<'u> = (&'u Vec<String>, &'u TypeDef);

/// Each kind's versions, by group and kind.
type Kinds<'u> = BTreeMap<(String, String), Vec<Resource<'u>>>;

/// One kind's CRD as emitted, the problems that keep it from being written, and whether one of
/// them is a type not found.
struct KindOutcome {
    crd: Option<Crd>,
    diagnostics: Vec<Diagnostic>,
    type_not_found: bool,
}

/// Every manifest of the universe, or every problem found on the way.
pub(crate) fn emit(e: &Emitting) -> Result<Outputs, Stopped> {
    let universe = e.universe;
    let mut out = Outputs::new();
    let (kinds, mut diags) = kinds(universe);
    // each kind's CRD is independent of the others': emitted in parallel, kept in kind order
    let specs: Vec<&Vec<Resource>> = kinds.values().collect();
    let emitted = in_pool(|| {
        specs
            .par_iter()
            .map(|specs| kind_crd(e, specs))
            .collect::<Vec<_>>()
    });
    let mut type_not_found = false;
    // the kind whose CRD each file holds: a second kind mapping to the same file is refused
    let mut crd_owner: BTreeMap<String, Resource> = BTreeMap::new();
    for (kind, specs) in emitted.into_iter().zip(&specs) {
        if let Some((file, text)) = kind.crd {
            match crd_owner.get(&file) {
                Some(&first) => diags.push(one_crd_two_kinds(universe, &file, first, specs[0])),
                None => {
                    crd_owner.insert(file.clone(), specs[0]);
                    out.insert(file, text);
                }
            }
        }
        diags.extend(kind.diagnostics);
        type_not_found |= kind.type_not_found;
    }
    let package_markers: Vec<&Marker> = universe.package_markers.iter().map(|(_, m)| m).collect();
    match rbac::role_file(&package_markers, e.role_name) {
        Ok(text) => {
            out.insert("config/rbac/role.yaml".to_string(), text);
        }
        Err(errors) => diags.extend(errors.into_iter().map(|e| {
            let (file, m) = &universe.package_markers[e.marker.unwrap_or_default()];
            located(file, m.loc, e.message)
        })),
    }
    webhooks(universe, &mut out, &mut diags);
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(Stopped {
            diagnostics: diags,
            type_not_found,
        })
    }
}

/// The project's kinds, each with the spec structs of its versions, by group and kind; and the
/// kinds whose module markers contradict them.
fn kinds(universe: &Universe) -> (Kinds<'_>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut kinds = Kinds::new();
    for (module, def) in universe.resources() {
        let Some(r) = &def.resource else { continue };
        if skipped(universe, module) {
            continue;
        }
        for m in universe.module_markers.get(module).into_iter().flatten() {
            let (given, what) = match m.kind {
                Kind::GroupName => (&r.group, "group"),
                Kind::VersionName => (&r.version, "version"),
                _ => continue,
            };
            if m.value.as_str() != Some(given.as_str()) {
                diags.push(located(
                    &file_of(universe, module),
                    def.loc,
                    format!(
                        "`{}` says {what} `{given}` but its module says `+{}={}`: make them agree",
                        def.name,
                        m.name(),
                        m.value.as_str().unwrap_or_default()
                    ),
                ));
            }
        }
        kinds
            .entry((r.group.clone(), r.kind.clone()))
            .or_default()
            .push((module, def));
    }
    (kinds, diags)
}

/// Two kinds whose CRDs are one file, `config/crd/bases/<group>_<plural>.yaml`: the same CRD
/// name `<plural>.<group>`, which one CRD cannot hold twice.
fn one_crd_two_kinds(
    universe: &Universe,
    file: &str,
    (first_module, first): Resource,
    (module, def): Resource,
) -> Diagnostic {
    let stem = file
        .rsplit('/')
        .next()
        .unwrap_or(file)
        .trim_end_matches(".yaml");
    let crd_name = match stem.split_once('_') {
        Some((group, plural)) => format!("{plural}.{group}"),
        None => stem.to_owned(),
    };
    let kind_of = |d: &TypeDef| {
        d.resource
            .as_ref()
            .map_or_else(|| d.name.clone(), |r| r.kind.clone())
    };
    located(
        &file_of(universe, module),
        def.loc,
        format!(
            "kinds {} ({}) and {} ({}) both map to CRD {crd_name} ({file}), which can hold only one kind: give one of them another plural with `+kubebuilder:resource:path=<plural>` or another kind",
            kind_of(first),
            file_of(universe, first_module).display(),
            kind_of(def),
            file_of(universe, module).display(),
        ),
    )
}

/// The webhook configurations, when a marker asks for one.
fn webhooks(universe: &Universe, out: &mut Outputs, diags: &mut Vec<Diagnostic>) {
    let webhook_markers: Vec<&(PathBuf, Marker)> = universe
        .package_markers
        .iter()
        .filter(|(_, m)| webhook::is_webhook_marker(m.kind))
        .collect();
    if webhook_markers.is_empty() {
        return;
    }
    let markers: Vec<Marker> = webhook_markers.iter().map(|(_, m)| m.clone()).collect();
    match webhook::configurations(&markers) {
        Ok(objects) => {
            out.insert(
                "config/webhook/manifests.yaml".to_string(),
                webhook::to_yaml(&objects),
            );
        }
        Err(errors) => diags.extend(errors.into_iter().map(|e| {
            let (file, m) = webhook_markers[e.marker.unwrap_or_default()];
            located(file, m.loc, e.message)
        })),
    }
}

/// One kind's CRD as [`emit_kind`] gives it, taken from the incremental layer when every module
/// its last emission looked up is as it was then (same content, or still missing), else emitted
/// while the lookups are recorded and told to the layer. What the layer is asked for names the
/// kind, its versions' spec structs, the settings and the crates read, so a change to any of
/// them is a miss; a module read without a content key is never depended on.
fn kind_crd(e: &Emitting, specs: &[Resource]) -> KindOutcome {
    let u = e.universe;
    let identity = || {
        format!(
            "{:?}\0{:?}\0{:?}\0{:?}\0{:?}\0{:?}",
            specs
                .iter()
                .map(|(m, d)| (
                    m,
                    &d.name,
                    d.resource.as_ref().map(|r| (&r.group, &r.kind, &r.version))
                ))
                .collect::<Vec<_>>(),
            e.settings,
            e.max_crd_bytes,
            u.externs,
            u.aliases,
            u.foreign,
        )
    };
    let content = |path: &[String]| -> Option<Option<String>> {
        match u.modules.get(path) {
            None => Some(None),
            Some(m) => m.content.map(|c| Some(format!("{c:032x}"))),
        }
    };
    let (key, lookups) = match e.layer.crd(&identity, &content) {
        Reuse::Hit(crd) => {
            return KindOutcome {
                crd: Some(crd),
                diagnostics: Vec::new(),
                type_not_found: false,
            };
        }
        Reuse::Miss(key) => (Some(key), Lookups::keeping_modules()),
        Reuse::Off => (None, Lookups::default()),
    };
    let (crd, diagnostics) = emit_kind(e, specs, &lookups);
    let type_not_found = lookups.type_not_found();
    if let (Some(key), Some(crd), true) = (key, &crd, diagnostics.is_empty()) {
        let mut seen = lookups.modules();
        seen.extend(specs.iter().map(|(m, _)| (*m).clone()));
        let depends_on = seen
            .into_iter()
            .map(|path| content(&path).map(|c| (path, c)))
            .collect::<Option<Vec<_>>>();
        if let Some(depends_on) = depends_on {
            e.layer.emitted_crd(key, depends_on, crd);
        }
    }
    KindOutcome {
        crd,
        diagnostics,
        type_not_found,
    }
}

/// One kind's CRD (file name and text), or the problems that keep it from being written; the
/// paths its emission resolves are told to `lookups`.
fn emit_kind(
    e: &Emitting,
    specs: &[Resource],
    lookups: &Lookups,
) -> (Option<Crd>, Vec<Diagnostic>) {
    let (universe, settings) = (e.universe, e.settings);
    let resolver = Resolver::new(universe, lookups);
    let mut diags = Vec::new();
    let scopes: Vec<ScanScope> = specs
        .iter()
        .map(|(m, d)| ScanScope {
            resolver,
            module: (*m).clone(),
            def: d,
        })
        .collect();
    let mut inputs = Vec::new();
    for scope in &scopes {
        let status = match scope.def.resource.as_ref().and_then(|r| r.status.clone()) {
            Some(s) => match scope.resolve(&s) {
                Ok(st) => Some(st),
                Err(d) => {
                    diags.push(located(
                        &file_of(universe, &scope.module),
                        scope.def.loc,
                        d.message,
                    ));
                    None
                }
            },
            None => None,
        };
        inputs.push(VersionInput {
            spec: scope as &dyn Scope,
            status,
        });
    }
    if !diags.is_empty() {
        return (None, diags);
    }
    let made = if specs[0].1.kube.is_some() {
        kube_crd(universe, specs, &inputs)
    } else {
        crd::crd(&inputs, settings)
    };
    match made {
        Ok(Some(c)) => {
            let stored = e
                .max_crd_bytes
                .map(|max| (max, super::size::stored_bytes(&c)));
            if let Some((max, size)) = stored.filter(|(max, size)| size > max) {
                let (module, def) = specs[0];
                diags.push(located(
                    &file_of(universe, module),
                    def.loc,
                    too_big(&def.name, size, max),
                ));
                return (None, diags);
            }
            let yaml = crd::to_yaml(&c);
            (
                Some((format!("config/crd/bases/{}", crd::file_name(&c)), yaml)),
                diags,
            )
        }
        Ok(None) => (None, diags),
        Err(e) => {
            // the scan's scopes name their file; a definition without one is the first spec's
            let file = e
                .file
                .clone()
                .or_else(|| specs.first().map(|(m, _)| file_of(universe, m)))
                .unwrap_or_default();
            diags.push(located(&file, e.loc, e.message));
            (None, diags)
        }
    }
}

/// The CRD kube's `crd()` generates for a kind of a kube-rs crate: one version per kind, as
/// kube's derive gives it.
fn kube_crd(
    universe: &Universe,
    specs: &[Resource],
    inputs: &[VersionInput],
) -> Result<Option<CustomResourceDefinition>, operator_gen_codegen::diag::Diagnostic> {
    if let [_, (module, def), ..] = specs {
        let mut d = operator_gen_codegen::diag::Diagnostic::new(format!(
            "kind `{}` has several versions of kube's CustomResource derive: kube's crd() gives one version each and operator-gen does not merge them; keep one version, or describe the kind with operator-gen's derive",
            def.resource
                .as_ref()
                .map(|r| r.kind.as_str())
                .unwrap_or_default()
        ));
        d.file = Some(file_of(universe, module));
        d.loc = def.loc;
        return Err(d);
    }
    let input = &inputs[0];
    kube_rs::crd::crd(input.spec, input.status.as_deref()).map(Some)
}

/// Why a CRD of `size` bytes as stored is not written under the limit `max`.
fn too_big(name: &str, size: usize, max: usize) -> String {
    let limit = if max == super::size::MAX_CRD_BYTES {
        format!(
            "the {:.1} MiB etcd stores by default (its --max-request-bytes)",
            max as f64 / MIB
        )
    } else {
        format!("--max-crd-size {max}")
    };
    format!(
        "the CRD of `{name}` would take {size} bytes ({:.2} MiB) as the apiserver stores it (its JSON, the fields server-side apply records and a {} KiB margin), more than {limit}; shorten its doc comments or pass --max-desc-len, or, when your etcd's --max-request-bytes is larger, raise the limit with --max-crd-size BYTES",
        size as f64 / MIB,
        super::size::STORED_MARGIN >> 10
    )
}

/// Whether `+kubebuilder:skip` stands on the module or one of its ancestors: no CRD for it.
fn skipped(universe: &Universe, module: &[String]) -> bool {
    (0..=module.len()).any(|n| {
        universe
            .module_markers
            .get(&module[..n])
            .is_some_and(|ms| has_marker(ms, Kind::Skip))
    })
}

fn file_of(universe: &Universe, module: &[String]) -> PathBuf {
    universe
        .modules
        .get(module)
        .map(|m| m.file.clone())
        .unwrap_or_default()
}
