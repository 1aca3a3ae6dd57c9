//! The fuzz targets' entry functions: the cargo-fuzz targets under `fuzz/` (nightly) and the
//! stable corpus run `tests/tests/manifests/no_panic.rs` call the same functions.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use operator_gen::manifests;
use operator_gen::project::markers::{CONTROLLERS, MODULES, REEXPORTS};
use operator_gen::project::{Project, storage_version};
use operator_gen::scaffold::{insert_before_marker, remove_before_marker};
use operator_gen::scaffolding::{delete, multigroup};
use operator_gen_codegen::schema::Settings;
use operator_gen_runtime::k8s_openapi::api::core::v1::ConfigMap;
use operator_gen_runtime::serde_json::{self, Value};
use operator_gen_runtime::webhook::{
    self, Converter, Defaulter, HookError, Validator, Warnings, WebhookServer,
};

/// Target `marker_line`: any text through the marker parser; it may refuse, never panic.
pub fn marker_line(line: &str) {
    let _ = operator_gen_codegen::markers::parse_line(line);
}

/// Target `scan_source`: any text as a crate root through the source scan and, when it scans,
/// every manifests emitter (CRDs, RBAC, webhooks) under two settings; diagnostics are fine,
/// panics are not.
pub fn scan_source(source: &str) {
    let Ok(universe) = manifests::scan_source(Path::new("src/lib.rs"), source) else {
        return;
    };
    for settings in [
        Settings::default(),
        Settings {
            allow_dangerous_types: true,
            max_desc_len: Some(3),
        },
    ] {
        let _ = manifests::outputs(&universe, &settings, "manager-role");
    }
}

/// Target `scaffold_edit`: any text as a Rust file the scaffold commands edit: the wiring
/// inserted before each scaffold marker and taken out again (a file that had the marker gets
/// back its text), the token search `delete api` makes for a deleted kind's names, and the
/// `super::` check `edit --multigroup` makes. Refusals are fine, panics are not.
pub fn scaffold_edit(text: &str) {
    for (marker, fragment) in [
        (MODULES, "pub mod captain;"),
        (REEXPORTS, "pub use captain::*;"),
        (
            CONTROLLERS,
            "demo::controller::captain::register(&mut mgr);",
        ),
        (MODULES, "#[cfg(test)]\nmod tests;\n"),
    ] {
        let Some(inserted) = insert_before_marker(text, marker, fragment) else {
            continue;
        };
        let removed = remove_before_marker(&inserted, marker, fragment);
        if inserted != text {
            assert_eq!(
                removed, text,
                "{marker}: the inserted {fragment:?} comes out again"
            );
        }
    }
    let needles: Vec<Vec<String>> = [
        &["v1", "CaptainSpec"][..],
        &["Captain"],
        &["controller", "captain"],
    ]
    .iter()
    .map(|n| n.iter().map(|s| s.to_string()).collect())
    .collect();
    if let Ok(Some((line, _))) = delete::find_use(text, &needles)
        && spans_have_lines()
    {
        assert!(
            line >= 1 && line <= text.lines().count().max(1),
            "line {line} is in the file"
        );
    }
    let versions: BTreeSet<&str> = ["v1", "v2"].into();
    for rel in [
        "src/api/v1/captain.rs",
        "src/api/v1/mod.rs",
        "src/controller/captain.rs",
    ] {
        let _ = multigroup::check_super(rel, text, &versions);
    }
}

/// Whether parsed Rust carries line numbers. cargo-fuzz builds with `--cfg fuzzing`, under which
/// proc-macro2 records none (every span is at line 0); the line checks are made only where they
/// are recorded, as in every build of the CLI.
pub fn spans_have_lines() -> bool {
    static LINES: OnceLock<bool> = OnceLock::new();
    *LINES.get_or_init(|| {
        let probe = "\n#[derive(CustomResource)]\npub struct ProbeSpec;\n";
        matches!(
            storage_version::inspect(probe, "Probe"),
            storage_version::Storage::Unmarked { insert_at: 2, .. }
        )
    })
}

/// Target `storage_marker`: any text as a types file through the storage-version reader, for the
/// kind its first `struct <Kind>Spec` names (else `Captain`); what it reports is then acted on
/// as `create api`/`create webhook` act: the marker added where it says, or removed from the
/// lines it names. Each answer must hold for the text it was given.
pub fn storage_marker(text: &str) {
    let kind = text
        .split("struct ")
        .skip(1)
        .find_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            name.strip_suffix("Spec")
                .filter(|k| !k.is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "Captain".to_owned());
    let _ = storage_version::mentions_marker(text);
    let _ = storage_version::without_marker(text);
    match storage_version::inspect(text, &kind) {
        storage_version::Storage::Unmarked { insert_at, indent } => {
            assert!(
                insert_at >= 1 || !spans_have_lines(),
                "insert_at {insert_at} is 1-based"
            );
            let added = storage_version::add(text, insert_at, &indent);
            assert!(
                storage_version::mentions_marker(&added),
                "the marker was added"
            );
        }
        storage_version::Storage::Marked { lines } => {
            let count = text.lines().count();
            assert!(
                lines.iter().all(|l| (1..=count).contains(l)),
                "{lines:?} are lines of the file"
            );
            let _ = storage_version::remove(text, &lines);
        }
        storage_version::Storage::MarkedOtherwise | storage_version::Storage::Unknown(_) => {}
    }
}

/// Target `project_file`: any text as a `PROJECT` file; refused with an error, or parsed into a
/// project that renders to a file which parses back to the same project.
pub fn project_file(text: &str) {
    let Ok(project) = Project::parse(text) else {
        return;
    };
    let rendered = project.render().expect("a parsed project renders");
    let again = Project::parse(&rendered)
        .unwrap_or_else(|e| panic!("the rendered project does not parse: {e}\n{rendered}"));
    assert_eq!(again, project, "the project survives a render and a parse");
}

/// The webhook server the `webhook_review` target answers with: a defaulter and a validator of
/// ConfigMaps and a converter between `example.com/v1` and `v2`.
fn review_server() -> &'static WebhookServer {
    static SERVER: OnceLock<WebhookServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        WebhookServer::builder()
            .defaulter::<ConfigMap>(LabelDefaults)
            .validator::<ConfigMap>(NoPassword)
            .converter(Renumber)
            .build()
            .expect("a webhook server of three hooks")
    })
}

struct LabelDefaults;

impl Defaulter<ConfigMap> for LabelDefaults {
    fn default(&self, obj: &mut ConfigMap) {
        let labels = obj.metadata.labels.get_or_insert_default();
        labels.entry("app".into()).or_insert_with(|| "web".into());
    }
}

struct NoPassword;

impl Validator<ConfigMap> for NoPassword {
    fn validate_create(&self, obj: &ConfigMap) -> Result<Warnings, HookError> {
        match &obj.data {
            Some(d) if d.contains_key("password") => Err("data.password is not allowed".into()),
            _ => Ok(Warnings::new()),
        }
    }
}

struct Renumber;

impl Converter for Renumber {
    fn convert(&self, mut object: Value, desired: &str) -> Result<Value, HookError> {
        let spec = object.get("spec").cloned().ok_or("spec is missing")?;
        object["apiVersion"] = Value::from(desired);
        object["spec"] = spec;
        Ok(object)
    }
}

/// Target `webhook_review`: any body POSTed to the webhook server's mutate, validate and
/// convert paths (HTTP, its size limit and timeout aside). The answer is always a JSON review:
/// 200 with a verdict, or 400 with a denying AdmissionReview (`allowed: false`) or a failed
/// ConversionReview (`result.status: Failure`); never a panic, never another status.
pub fn webhook_review(body: &[u8]) {
    let server = review_server();
    for path in [
        webhook::mutate_path::<ConfigMap>(),
        webhook::validate_path::<ConfigMap>(),
        webhook::CONVERT_PATH.to_owned(),
    ] {
        let answer = server.handle(&path, body);
        let status = answer.status.as_u16();
        assert!(status == 200 || status == 400, "{path}: status {status}");
        let review: Value = serde_json::from_slice(&answer.body)
            .unwrap_or_else(|e| panic!("{path}: the answer is not JSON: {e}"));
        let response = &review["response"];
        if path == webhook::CONVERT_PATH {
            assert_eq!(review["kind"], "ConversionReview", "{path}: {review}");
            let result = response["result"]["status"].as_str();
            assert!(
                matches!(result, Some("Success" | "Failure")),
                "{path}: {review}"
            );
            assert!(
                status == 200 || result == Some("Failure"),
                "{path}: {review}"
            );
        } else {
            assert_eq!(review["kind"], "AdmissionReview", "{path}: {review}");
            let allowed = response["allowed"].as_bool();
            assert!(allowed.is_some(), "{path}: {review}");
            assert!(status == 200 || allowed == Some(false), "{path}: {review}");
        }
    }
}
