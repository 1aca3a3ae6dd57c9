//! kube-rs crates read as they are: testdata/kube-rs (kube's `CustomResource` derive imported by
//! `use`, by full path and by a glob; schemars' and kube's schema attributes; RBAC and webhook
//! markers beside them) is built, and the CRD each kind's `crd()` prints is compared node by
//! node with what `operator-gen manifests` writes for the same sources. An attribute operator-gen
//! does not read is an error naming it, and nothing is written.

use std::path::Path;
use std::process::Command;

use operator_gen::manifests::{self, ManifestsOptions};
use operator_gen_tests::cli::{cargo, copy_dir};
use operator_gen_tests::operator::generated_output;
use operator_gen_tests::workspace;
use serde_json::Value;

/// Nodes where operator-gen's CRD may differ from kube's `crd()`, by kind and JSON pointer,
/// each with its reason. Empty: every node of every kind agrees.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// Where two JSON values differ, as JSON pointers (numbers compare by value: kube writes
/// bounds as floats, `1.0`, where a YAML reader may give `1`).
fn differences(expected: &Value, actual: &Value, at: String, out: &mut Vec<String>) -> usize {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let mut nodes = 1;
            for key in e.keys().chain(a.keys().filter(|k| !e.contains_key(*k))) {
                let here = format!("{at}/{key}");
                match (e.get(key), a.get(key)) {
                    (Some(x), Some(y)) => nodes += differences(x, y, here, out),
                    (Some(x), None) => out.push(format!("{here}: missing, kube has {x}")),
                    (None, Some(y)) => out.push(format!("{here}: extra {y}")),
                    (None, None) => {}
                }
            }
            nodes
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            1 + e
                .iter()
                .zip(a)
                .enumerate()
                .map(|(i, (x, y))| differences(x, y, format!("{at}/{i}"), out))
                .sum::<usize>()
        }
        (Value::Number(e), Value::Number(a)) if e.as_f64() == a.as_f64() => 1,
        (e, a) if e == a => 1,
        (e, a) => {
            out.push(format!("{at}: kube has {e}, operator-gen {a}"));
            1
        }
    }
}

/// The crate copied out of the workspace into `dir`, built, and its `crd()` output.
fn kube_crds(dir: &Path) -> Vec<Value> {
    copy_dir(&workspace().join("testdata/kube-rs"), dir);
    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).expect("copy the lock");
    let out = generated_output(
        Command::new(cargo())
            .args(["run", "--quiet"])
            .current_dir(dir),
    )
    .expect("run cargo");
    assert!(
        out.status.success(),
        "the kube-rs crate does not build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the crate prints its CRDs as JSON")
}

#[test]
fn manifests_writes_the_crd_kubes_crd_generates() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("kube-rs-docs");
    let crds = kube_crds(&dir);
    let outputs = manifests::generate(&dir, &ManifestsOptions::default())
        .unwrap_or_else(|e| panic!("manifests on the kube-rs crate: {e}"));
    let mut failures = Vec::new();
    let mut compared = Vec::new();
    let mut nodes = 0;
    for crd in &crds {
        let kind = crd["spec"]["names"]["kind"].as_str().expect("a kind");
        let file = format!(
            "config/crd/bases/{}_{}.yaml",
            crd["spec"]["group"].as_str().expect("a group"),
            crd["spec"]["names"]["plural"].as_str().expect("a plural")
        );
        let Some(yaml) = outputs.get(&file) else {
            failures.push(format!("{kind}: no {file}"));
            continue;
        };
        let written: Value = serde_saphyr::from_str(yaml).expect("CRD YAML");
        let mut found = Vec::new();
        nodes += differences(crd, &written, String::new(), &mut found);
        failures.extend(
            found
                .into_iter()
                .filter(|d| {
                    !EXCEPTIONS
                        .iter()
                        .any(|(k, at, _)| *k == kind && d.starts_with(at))
                })
                .map(|d| format!("{kind}: {d}")),
        );
        compared.push(kind.to_string());
    }
    println!(
        "compared {} kinds with kube's crd() ({}), {nodes} nodes, {} exceptions",
        compared.len(),
        compared.join(", "),
        EXCEPTIONS.len()
    );
    assert_eq!(compared, ["Document", "Gadget", "Memo", "Widget"]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // the RBAC and webhook markers of the crate are read beside kube's derive
    let role = &outputs["config/rbac/role.yaml"];
    assert!(role.contains("- documents/status\n"), "{role}");
    let webhooks = &outputs["config/webhook/manifests.yaml"];
    assert!(webhooks.contains("name: vdocument.kb.io"), "{webhooks}");
}

/// A crate of one file, `src/main.rs`, and what `manifests` says of it.
fn scan(main: &str) -> Result<Vec<String>, String> {
    let tmp = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(tmp.path().join("src")).expect("src");
    std::fs::write(tmp.path().join("src/main.rs"), main).expect("main.rs");
    manifests::generate(tmp.path(), &ManifestsOptions::default())
        .map(|o| o.into_keys().collect())
        .map_err(|e| e.to_string())
}

const KIND: &str = "use kube::CustomResource;\nuse schemars::JsonSchema;\n\n#[derive(CustomResource, JsonSchema)]\n#[kube(group = \"docs.example.com\", version = \"v1\", kind = \"Note\"ATTR)]\npub struct NoteSpec {\n    FIELD pub text: String,\n}\n\nfn main() {}\n";

fn note(attr: &str, field: &str) -> String {
    KIND.replace("ATTR", attr).replace("FIELD", field)
}

#[test]
fn kubes_derive_is_known_by_its_path() {
    let crd = "config/crd/bases/docs.example.com_notes.yaml".to_string();
    for source in [
        note("", ""),
        note("", "").replace("use kube::CustomResource;", "use kube::*;"),
        note("", "")
            .replace("use kube::CustomResource;\n", "")
            .replace("derive(CustomResource", "derive(::kube::CustomResource"),
        note("", "")
            .replace(
                "use kube::CustomResource;",
                "use kube_derive::CustomResource as Crd;",
            )
            .replace("derive(CustomResource", "derive(Crd"),
    ] {
        assert_eq!(
            scan(&source).map(|k| k.contains(&crd)),
            Ok(true),
            "{source}"
        );
    }
}

#[test]
fn an_attribute_not_read_is_an_error_naming_it() {
    for (attr, field, expected) in [
        (", no_spec", "", "src/main.rs:5:"),
        (", schema = \"manual\"", "", "src/main.rs:5:"),
        ("", "#[schemars(with = \"String\")]", "src/main.rs:7:"),
        (
            "",
            "#[x_kube(merge_strategy = ListMerge::Set)]",
            "src/main.rs:7:",
        ),
    ] {
        let named = match (attr, field) {
            (", no_spec", _) => "#[kube(no_spec)] is not read by operator-gen",
            (", schema = \"manual\"", _) => {
                "#[kube(schema = \"manual\")] takes the CRD's schema from a hand-written JsonSchema impl, which operator-gen does not read"
            }
            (_, f) if f.contains("schemars") => "#[schemars(with)] is not read by operator-gen",
            _ => "#[x_kube(merge_strategy)] is not read by operator-gen",
        };
        let error = scan(&note(attr, field)).expect_err("an attribute not read");
        assert!(
            error.contains(expected) && error.contains(named),
            "{named}: {error}"
        );
        assert!(
            error.contains("describe this type with operator-gen's #[derive(Schema)]"),
            "{error}"
        );
        assert_eq!(error.trim_end().lines().count(), 1, "{error}");
    }
}

#[test]
fn what_kubes_crd_gives_that_operator_gen_does_not_read_is_an_error() {
    let inner = "\n#[derive(JsonSchema)]\npub struct Inner {\n    pub a: String,\n}\n";
    let tagged = "\n#[derive(JsonSchema)]\n#[serde(tag = \"type\")]\npub enum Tagged {\n    A { x: i32 },\n    B { y: String },\n}\n";
    let second = note("", "")
        .replace("version = \"v1\"", "version = \"v2\"")
        .replace("NoteSpec", "NoteV2Spec")
        .replace("use kube::CustomResource;\nuse schemars::JsonSchema;\n", "")
        .replace("fn main() {}\n", "");
    for (source, expected) in [
        (
            note(
                "",
                "pub q: k8s_openapi::apimachinery::pkg::api::resource::Quantity,\n   ",
            ),
            "`k8s_openapi::apimachinery::pkg::api::resource::Quantity` in a kube-rs crate: operator-gen does not read the schemas k8s-openapi's schemars feature gives",
        ),
        (
            note("", "#[serde(default)]\n    pub inner: Inner,\n   ") + inner,
            "#[serde(default)] on `inner`: kube's crd() writes the value of its type's Default impl",
        ),
        (
            note("", "#[serde(default = \"seven\")]\n    pub n: i32,\n   "),
            "#[serde(default = \"...\")]: kube's crd() writes the value that function returns, which operator-gen does not evaluate",
        ),
        (
            note("", "pub tagged: Tagged,\n   ") + tagged,
            "enum `Tagged` is internally or adjacently tagged with several variants",
        ),
        (
            note("", "") + &second,
            "kind `Note` has several versions of kube's CustomResource derive",
        ),
    ] {
        let error = scan(&source).expect_err(expected);
        assert!(error.contains(expected), "{expected}: {error}");
        assert!(error.starts_with("src/main.rs:"), "{error}");
    }
}
