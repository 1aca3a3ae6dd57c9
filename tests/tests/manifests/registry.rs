//! The marker registry is complete: every entry either changes what some emitter writes — shown
//! by emitting with and without it — or is refused by the parser with its stated reason.

use operator_gen_codegen::crd::{self, VersionInput};
use operator_gen_codegen::diag::Diagnostic;
use operator_gen_codegen::ir::{Marker, TypeDef};
use operator_gen_codegen::lower::{self, Errors};
use operator_gen_codegen::markers::fixture;
use operator_gen_codegen::markers::{Effect, Kind, REGISTRY, parse_line};
use operator_gen_codegen::schema::{Definition, Scope, Settings};
use operator_gen_codegen::{client, rbac, webhook};
use std::collections::BTreeMap;

/// Every type of a source file, lowered, and looked up by the last segment of a path.
struct Types(BTreeMap<String, TypeDef>);

struct At<'a> {
    types: &'a Types,
    def: &'a TypeDef,
}

impl Scope for At<'_> {
    fn def(&self) -> &TypeDef {
        self.def
    }
    fn resolve(&self, path: &str) -> Result<Box<dyn Scope + '_>, Diagnostic> {
        let name = path.rsplit("::").next().unwrap_or(path);
        if let Some(def) = self.types.0.get(name) {
            return Ok(Box::new(At {
                types: self.types,
                def,
            }));
        }
        match operator_gen_codegen::known::external(path) {
            operator_gen_codegen::known::External::Known(canonical) => {
                Ok(Box::new(Definition::known(&canonical)))
            }
            _ => Err(Diagnostic::new(format!("`{path}` is not in the fixture"))),
        }
    }
}

fn lower_source(source: &str) -> Types {
    let file = syn::parse_file(source).unwrap_or_else(|e| panic!("fixture parses: {e}\n{source}"));
    let mut errors = Errors::default();
    let mut types = BTreeMap::new();
    for item in file.items {
        let input: syn::DeriveInput = match item {
            syn::Item::Struct(s) => s.into(),
            syn::Item::Enum(e) => e.into(),
            _ => continue,
        };
        if let Some(def) = lower::type_def(&input, &mut errors) {
            types.insert(def.name.clone(), def);
        }
    }
    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert!(messages.is_empty(), "the fixture lowers: {messages:?}");
    Types(types)
}

/// Each kind's CRD as JSON, or the emitter's error.
fn crds(source: &str) -> BTreeMap<String, Result<serde_json::Value, String>> {
    let types = lower_source(source);
    let settings = Settings {
        allow_dangerous_types: true,
        ..Default::default()
    };
    let mut out = BTreeMap::new();
    for def in types.0.values().filter(|d| d.resource.is_some()) {
        let spec = At { types: &types, def };
        let status = def
            .resource
            .as_ref()
            .and_then(|r| r.status.as_deref())
            .map(|s| spec.resolve(s).expect("status type"));
        let result = crd::crd(
            &[VersionInput {
                spec: &spec,
                status,
            }],
            &settings,
        )
        .map(|c| serde_json::to_value(c).expect("json"))
        .map_err(|e| e.message);
        let kind = def
            .resource
            .as_ref()
            .map(|r| r.kind.clone())
            .unwrap_or_default();
        out.insert(kind, result);
    }
    out
}

/// Like [`crds`], for kinds whose versions sit in inline modules: one CRD of all versions.
fn crds_of_modules(source: &str) -> Result<serde_json::Value, String> {
    let file = syn::parse_file(source).expect("parses");
    let mut defs = Vec::new();
    for item in file.items {
        if let syn::Item::Mod(m) = item {
            let inner = m.content.map(|(_, items)| items).unwrap_or_default();
            let text: String = inner
                .iter()
                .map(|i| quote::ToTokens::to_token_stream(i).to_string())
                .collect::<Vec<_>>()
                .join("\n");
            defs.push(lower_source(&text));
        }
    }
    let scopes: Vec<At> = defs
        .iter()
        .flat_map(|t| t.0.values().map(move |def| At { types: t, def }))
        .collect();
    let inputs: Vec<VersionInput> = scopes
        .iter()
        .map(|s| VersionInput {
            spec: s,
            status: None,
        })
        .collect();
    crd::crd(&inputs, &Settings::default())
        .map(|c| serde_json::to_value(c).expect("json"))
        .map_err(|e| e.message)
}

fn parse(line: &str) -> Marker {
    parse_line(line)
        .unwrap_or_else(|e| panic!("`{line}` parses: {}", e.message))
        .unwrap_or_else(|| panic!("`{line}` is a marker"))
}

const SHIP: &str = "+kubebuilder:webhook:path=/validate,mutating=false,failurePolicy=fail,sideEffects=None,groups=ship.example.com,resources=frigates,verbs=create,versions=v1,name=vfrigate.example.com,admissionReviewVersions=v1";

/// Entries whose effect another test proves, with where.
const PROVED_ELSEWHERE: &[(Kind, &str)] = &[
    (
        Kind::GroupName,
        "cli/src/manifests/mod.rs: module_markers_steer_the_scan",
    ),
    (
        Kind::VersionName,
        "cli/src/manifests/mod.rs: module_markers_steer_the_scan",
    ),
    (
        Kind::Skip,
        "cli/src/manifests/mod.rs: module_markers_steer_the_scan",
    ),
];

/// Entries that state what already holds, with the reason they are kept.
const AFFIRMATIONS: &[(Kind, &str)] = &[(
    Kind::GenClient,
    "every kind gets a typed client; code-generator needs `+genclient` for one, so ported types carry it",
)];

/// The CRD of a kind whose `v1` spec carries `line`; with `second`, the kind also has a `v2`
/// (for markers that choose between versions).
fn crd_with(line: &str, second: bool) -> String {
    let version = |v: &str, line: &str, module: &str| {
        format!(
            "pub mod {module} {{\n/// {line}\n#[derive(CustomResource)]\n#[k8s(group = \"ship.example.com\", version = \"{v}\", kind = \"Frigate\")]\npub struct FrigateSpec {{\n    pub size: i32,\n}}\n}}\n"
        )
    };
    let mut source = version("v1", line, "v1");
    if second {
        source.push_str(&version("v2", "", "v2"));
    }
    format!("{:?}", crds_of_modules(&source))
}

#[test]
fn every_marker_has_an_effect_or_a_stated_reason() {
    let mut shown = Vec::new();
    for d in REGISTRY {
        let name = d.name;
        if let Effect::None(reason) = d.effect {
            assert!(!reason.is_empty(), "`{name}` has no effect and no reason");
            let e = parse_line(&format!("+{name}")).expect_err("refused");
            assert_eq!(
                e.message,
                format!("marker `+{name}` has no effect in Rust: {reason}")
            );
            shown.push(name);
            continue;
        }
        if d.effect.is_schema() || !d.proofs.is_empty() {
            assert!(
                !d.proofs.is_empty(),
                "`{name}` changes the schema but has no proof: add one with `.proved(...)`"
            );
            // every_proof_changes_the_crd shows each one's effect
            shown.push(name);
            continue;
        }
        assert!(
            !d.example.is_empty(),
            "`{name}` has no example line: add one with `.example(...)`"
        );
        let m = parse(d.example);
        assert_eq!(
            m.kind, d.kind,
            "the example of `{name}` parses as another marker"
        );
        if let Some((_, reason)) = AFFIRMATIONS.iter().find(|(k, _)| *k == d.kind) {
            assert!(!reason.is_empty());
            shown.push(name);
            continue;
        }
        if PROVED_ELSEWHERE.iter().any(|(k, _)| *k == d.kind) {
            shown.push(name);
            continue;
        }
        let changed = match d.effect {
            Effect::Crd(_) => {
                let second = d.kind == Kind::StorageVersion;
                crd_with(d.example, second) != crd_with("", second)
            }
            Effect::Rbac => !rbac::roles(std::slice::from_ref(&m), "manager-role").is_empty(),
            Effect::Webhook => {
                let ship = parse(SHIP);
                let alone = webhook::configurations(std::slice::from_ref(&ship));
                let with = webhook::configurations(&[ship.clone(), m.clone()]);
                with.is_ok() && (m.kind == Kind::Webhook || with != alone)
            }
            Effect::Client(_) => {
                let with = (
                    client::verbs(std::slice::from_ref(&m), true),
                    client::namespaced(std::slice::from_ref(&m), true),
                );
                with != (client::verbs(&[], true), client::namespaced(&[], true))
            }
            other => panic!("`{name}` ({}) has no check here", other.emitter()),
        };
        assert!(changed, "`{name}` changes nothing: `{}`", d.example);
        shown.push(name);
    }
    let all: Vec<&str> = REGISTRY.iter().map(|d| d.name).collect();
    assert_eq!(shown, all);
    println!(
        "{} markers: each has an effect or a stated reason",
        shown.len()
    );
}

#[test]
fn every_proof_changes_the_crd() {
    let proofs = fixture::proofs();
    let full = crds(&fixture::source(&proofs, None));
    for (kind, result) in &full {
        if !kind.starts_with("Refused") {
            assert!(result.is_ok(), "{kind}: {result:?}");
        }
    }
    for p in &proofs {
        let without = crds(&fixture::source(&proofs, Some(p.slot)));
        let kind = p.crd_kind();
        assert_ne!(
            full.get(&kind),
            without.get(&kind),
            "proof {} of `{}` ({}) does not change the CRD",
            p.slot,
            p.kind.name(),
            p.proof.lines
        );
    }
    println!("{} proofs each change the fixture's CRD", proofs.len());
}
