//! Differential test against controller-gen: every struct type of k8s.io/api and of
//! apimachinery's meta/v1, resource, intstr, runtime and version packages that k8s-openapi
//! exposes, one spec field each, written from one list by `hack/twins/generate.sh` as a Go API
//! package (`testdata/differential/go`) and its Rust twin (`testdata/differential/rust`).
//! controller-gen v0.21.0 judges the Go side; `operator-gen manifests` and the derive's
//! `try_crd()` answer for the Rust side; each field's schema (and whether the spec requires it)
//! is compared node by node, and the CRD around the fields as a whole. The test prints how many
//! types it compared and how many are equal, and lists every exception with its reason; a
//! difference not in `EXCEPTIONS`, or a row there that no longer matches, fails it.

#[path = "../../../testdata/differential/rust/src/lib.rs"]
mod twins;

use operator_gen::manifests::{self, ManifestsOptions};
use operator_gen_tests::{
    first_difference, normalized_documents, remove_generator_annotation, tools, workspace,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A type whose schema may differ from controller-gen's: on both sides (manifests and the
/// derive) the difference must contain `differs`, and controller-gen's schema of the field, as
/// compact JSON, must contain `controller_gen`; `reason` says why it is right to differ.
/// A listed type that matches, or differs otherwise, fails the test: the table holds only live
/// exceptions, each explaining the difference it excuses.
struct Exception {
    rust: &'static str,
    differs: &'static str,
    controller_gen: &'static str,
    reason: &'static str,
}

/// The Kubernetes 1.37 types that contain themselves (a composite pod group template lists its
/// children's templates), and the types holding them: `hack/twins` puts them in one kind,
/// `RecursiveTwin`, so their failure hides no other type.
const RECURSIVE: &str = "recursive: CRD schemas cannot refer to themselves; controller-gen writes an empty schema (`items: {}`) where the type repeats, which the apiserver refuses (`items.type: Required value: must not be empty for specified array items`, and a map-list's items must be objects), so operator-gen refuses the type with a located error that names serde_json::Value as the way out";

const EXCEPTIONS: &[Exception] = &[
    Exception {
        rust: "twins::flattentwin::FlattenCarrier",
        differs: "(has(self.e)?1:0)+(has(self.f)?1:0) == 1",
        controller_gen: "[has(self.e),has(self.f)].filter(x,x==true).size() == 1",
        reason: "ExactlyOneOf's rule: controller-gen v0.21.0 writes `[has(self.a),...].filter(x,x==true).size() == 1`, while the controller-tools testdata the conformance test compares with (testdata.kubebuilder.io_oneofs.yaml) holds `(has(self.a)?1:0)+... == 1`; operator-gen writes the conformance golden's form. The rest of the type (the flattened struct's other rule, embedded-resource, preserve-unknown-fields, map type, and no title, example or external docs) is compared before the first difference",
    },
    Exception {
        rust: "k8s_openapi::api::scheduling::v1alpha3::CompositePodGroupTemplate",
        differs: "cannot be recursive",
        controller_gen: r#""items":{}"#,
        reason: RECURSIVE,
    },
    Exception {
        rust: "k8s_openapi::api::scheduling::v1alpha3::Workload",
        differs: "cannot be recursive",
        controller_gen: r#""items":{}"#,
        reason: RECURSIVE,
    },
    Exception {
        rust: "k8s_openapi::api::scheduling::v1alpha3::WorkloadSpec",
        differs: "cannot be recursive",
        controller_gen: r#""items":{}"#,
        reason: RECURSIVE,
    },
    Exception {
        rust: "k8s_openapi::api::scheduling::v1beta1::CompositePodGroupTemplate",
        differs: "cannot be recursive",
        controller_gen: r#""items":{}"#,
        reason: RECURSIVE,
    },
    Exception {
        rust: "k8s_openapi::api::scheduling::v1beta1::Workload",
        differs: "cannot be recursive",
        controller_gen: r#""items":{}"#,
        reason: RECURSIVE,
    },
    Exception {
        rust: "k8s_openapi::api::scheduling::v1beta1::WorkloadSpec",
        differs: "cannot be recursive",
        controller_gen: r#""items":{}"#,
        reason: RECURSIVE,
    },
];

fn differential() -> PathBuf {
    workspace().join("testdata/differential")
}

/// One line of `types.tsv`: a type both twins hold in one spec field.
struct Listed {
    rust: String,
    go: String,
    kind: String,
    field: String,
    form: String,
}

fn listed() -> Vec<Listed> {
    let path = differential().join("types.tsv");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 5, "types.tsv line `{l}` has not 5 columns");
            Listed {
                rust: cols[0].into(),
                go: cols[1].into(),
                kind: cols[2].into(),
                field: cols[3].into(),
                form: cols[4].into(),
            }
        })
        .collect()
}

/// CRD documents by kind.
fn by_kind(docs: impl IntoIterator<Item = Value>) -> BTreeMap<String, Value> {
    docs.into_iter()
        .map(|d| {
            let kind = d["spec"]["names"]["kind"]
                .as_str()
                .unwrap_or_else(|| panic!("a CRD without spec.names.kind: {d}"))
                .to_string();
            (kind, d)
        })
        .collect()
}

/// controller-gen's CRDs for the Go twin: run now when controller-gen and Go are here, else
/// (outside CI only) the output `hack/twins/generate.sh` recorded in `golden.json`.
fn judge() -> (BTreeMap<String, Value>, &'static str) {
    if let Some(controller_gen) = tools::go_tool("controller-gen")
        && tools::go_available("controller-gen cannot load the Go twin")
    {
        let crds = run_controller_gen(&controller_gen);
        tools::record_ran(tools::Ran::GoPeers);
        return (crds, "controller-gen run now");
    }
    println!(
        "differential: comparing against testdata/differential/golden.json, controller-gen's output recorded by hack/twins/generate.sh"
    );
    (golden(), "golden.json")
}

fn run_controller_gen(controller_gen: &Path) -> BTreeMap<String, Value> {
    let out = tempfile::tempdir().expect("temp dir");
    let status = tools::offline_go(&mut Command::new(controller_gen))
        .current_dir(differential().join("go"))
        .arg("crd")
        .arg("paths=./...")
        .arg(format!("output:crd:dir={}", out.path().display()))
        .status()
        .expect("controller-gen runs");
    assert!(
        status.success(),
        "controller-gen failed on testdata/differential/go ({status}); in CI, .ci/run fills the module cache it reads"
    );
    let mut docs = Vec::new();
    for entry in std::fs::read_dir(out.path()).expect("controller-gen output") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("CRD file");
        docs.extend(normalized_documents(&text));
    }
    by_kind(docs)
}

/// `golden.json` with its shared nodes expanded: controller-gen's documents again.
fn golden() -> BTreeMap<String, Value> {
    let path = differential().join("golden.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let golden: Value = serde_json::from_str(&text).expect("golden.json parses");
    let shared = golden["shared"]
        .as_object()
        .expect("golden.json has shared");
    fn expand(v: &Value, shared: &serde_json::Map<String, Value>) -> Value {
        match v {
            Value::Object(m) => match m.get("$shared") {
                Some(Value::String(h)) => expand(
                    shared
                        .get(h)
                        .unwrap_or_else(|| panic!("golden.json: no shared node {h}")),
                    shared,
                ),
                _ => Value::Object(
                    m.iter()
                        .map(|(k, x)| (k.clone(), expand(x, shared)))
                        .collect(),
                ),
            },
            Value::Array(a) => Value::Array(a.iter().map(|x| expand(x, shared)).collect()),
            other => other.clone(),
        }
    }
    let docs = golden["documents"]
        .as_object()
        .expect("golden.json has documents")
        .values()
        .map(|d| {
            let mut d = expand(d, shared);
            remove_generator_annotation(&mut d);
            d
        });
    by_kind(docs)
}

/// What one side made of the twin: CRDs by kind, or why a kind has none.
type Side = BTreeMap<String, Result<Value, String>>;

/// `operator-gen manifests` on each kind's module alone (in a temporary crate holding only that
/// file), so a kind that cannot have a CRD (the recursive types' kind) does not take the others
/// with it: `manifests` writes all CRDs or none.
fn scanned(kinds: &BTreeSet<&str>) -> Side {
    // a twin kind holds dozens of Kubernetes types: its CRD is bigger than etcd stores, which
    // controller-gen does not check; the comparison is about the schema
    let options = ManifestsOptions {
        allow_oversized_crds: true,
        ..Default::default()
    };
    kinds
        .iter()
        .map(|kind| {
            let module = kind.to_lowercase();
            let dir = tempfile::tempdir().expect("temp dir");
            let src = dir.path().join("src");
            std::fs::create_dir_all(&src).expect("src dir");
            std::fs::write(src.join("lib.rs"), format!("pub mod {module};\n")).expect("lib.rs");
            let file = format!("{module}.rs");
            std::fs::copy(differential().join("rust/src").join(&file), src.join(&file))
                .unwrap_or_else(|e| panic!("testdata/differential/rust/src/{file}: {e}"));
            let doc = manifests::generate(dir.path(), &options)
                .map_err(|e| format!("manifests failed: {e}"))
                .and_then(|outputs| {
                    by_kind(
                        outputs
                            .iter()
                            .filter(|(f, _)| f.starts_with("config/crd/"))
                            .flat_map(|(_, text)| normalized_documents(text)),
                    )
                    .remove(*kind)
                    .ok_or_else(|| format!("manifests wrote no CRD of kind {kind}"))
                });
            (kind.to_string(), doc)
        })
        .collect()
}

fn derived() -> Side {
    twins::crds()
        .into_iter()
        .map(|(kind, crd)| {
            let doc = crd.map(|yaml| normalized_documents(&yaml).remove(0));
            (
                kind.to_string(),
                doc.map_err(|e| format!("try_crd failed: {e}")),
            )
        })
        .collect()
}

const SPEC: &str = "/spec/versions/0/schema/openAPIV3Schema/properties/spec";

/// A field's schema and whether the spec requires it.
fn field(doc: &Value, name: &str) -> Option<(Value, bool)> {
    let spec = doc.pointer(SPEC)?;
    let schema = spec.get("properties")?.get(name)?.clone();
    let required = spec
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|x| x == name));
    Some((schema, required))
}

/// The difference between controller-gen's schema of a field and one side's.
fn compare(judge: &Value, side: &Result<Value, String>, name: &str) -> Option<String> {
    let ours = match side {
        Ok(doc) => doc,
        Err(e) => return Some(format!("no CRD of its kind: {e}")),
    };
    let (want, want_required) = field(judge, name).expect("controller-gen's CRD holds the field");
    let Some((got, got_required)) = field(ours, name) else {
        return Some(format!("no spec field {name}"));
    };
    if want_required != got_required {
        return Some(format!(
            "required: controller-gen {want_required}, ours {got_required}"
        ));
    }
    first_difference(&got, &want, "")
        .map(|d| d.chars().take(300).collect::<String>())
        .map(|d| format!("first difference (ours != controller-gen) at {d}"))
}

/// A CRD without its spec's fields: names, scope, versions, subresources, root schema.
fn envelope(doc: &Value) -> Value {
    let mut doc = doc.clone();
    if let Some(spec) = doc.pointer_mut(SPEC).and_then(Value::as_object_mut) {
        spec.remove("properties");
        spec.remove("required");
    }
    doc
}

/// The category of a difference, for the summary: the schema key where it starts, or the
/// kind of failure.
fn category(diff: &str) -> String {
    if let Some(rest) = diff.strip_prefix("first difference (ours != controller-gen) at ") {
        let path = rest.split(':').next().unwrap_or(rest);
        let key = path
            .rsplit('/')
            .find(|s| !s.is_empty() && s.parse::<usize>().is_err())
            .unwrap_or("(root)");
        let what = if rest.contains(": None != Some") {
            "missing"
        } else if rest.contains(": Some(") && rest.contains(") != None") {
            "extra"
        } else {
            "differs"
        };
        format!("{what} `{key}`")
    } else {
        diff.chars().take(120).collect()
    }
}

#[test]
fn schemas_match_controller_gen() {
    let listed = listed();
    let (judge, source) = judge();
    let kinds: BTreeSet<&str> = listed.iter().map(|l| l.kind.as_str()).collect();
    assert_eq!(
        judge.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        kinds,
        "controller-gen's kinds and types.tsv's differ"
    );
    // the list and the Go twin agree: controller-gen's spec fields are exactly the listed ones
    for kind in &kinds {
        let want: BTreeSet<&str> = listed
            .iter()
            .filter(|l| l.kind == *kind)
            .map(|l| l.field.as_str())
            .collect();
        let got: BTreeSet<&str> = judge[*kind]
            .pointer(&format!("{SPEC}/properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            got, want,
            "{kind}: controller-gen's spec fields are not the listed ones"
        );
    }

    let exceptions: BTreeMap<&str, &Exception> = EXCEPTIONS.iter().map(|e| (e.rust, e)).collect();
    assert_eq!(
        exceptions.len(),
        EXCEPTIONS.len(),
        "a type is listed twice in EXCEPTIONS"
    );
    let sides = [("manifests", scanned(&kinds)), ("derive", derived())];
    let mut failures = Vec::new();
    for (side, docs) in &sides {
        for kind in &kinds {
            match &docs[*kind] {
                Ok(doc) => {
                    if let Some(d) = first_difference(&envelope(doc), &envelope(&judge[*kind]), "")
                    {
                        failures.push(format!(
                            "{kind} ({side}): the CRD around the fields differs: {d}"
                        ));
                    }
                }
                // a kind without a CRD is explained only when each of its types is an exception
                Err(_)
                    if listed
                        .iter()
                        .filter(|l| l.kind == *kind)
                        .all(|l| exceptions.contains_key(l.rust.as_str())) => {}
                Err(e) => failures.push(format!("{kind} ({side}): {e}")),
            }
        }
    }

    let mut equal = 0;
    let mut excused: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut categories: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for l in &listed {
        let diffs: Vec<(&str, Option<String>)> = sides
            .iter()
            .map(|(side, docs)| (*side, compare(&judge[&l.kind], &docs[&l.kind], &l.field)))
            .collect();
        let differing: Vec<(&str, &String)> = diffs
            .iter()
            .filter_map(|(side, d)| d.as_ref().map(|d| (*side, d)))
            .collect();
        match exceptions.get(l.rust.as_str()) {
            None if differing.is_empty() => equal += 1,
            None => {
                for (side, diff) in &differing {
                    categories
                        .entry(format!("{side}: {}", category(diff)))
                        .or_default()
                        .push(&l.rust);
                }
                // a kind without a CRD is reported once, above
                if differing
                    .iter()
                    .all(|(_, d)| d.starts_with("no CRD of its kind"))
                {
                    continue;
                }
                failures.push(format!(
                    "{} ({} field {}, {}; Go {}): {}",
                    l.rust,
                    l.kind,
                    l.field,
                    l.form,
                    l.go,
                    differing
                        .iter()
                        .map(|(side, d)| format!("{side}: {d}"))
                        .collect::<Vec<_>>()
                        .join("; ")
                ));
            }
            Some(e) => {
                let mut stale: Vec<String> = diffs
                    .iter()
                    .filter_map(|(side, d)| match d {
                        Some(d) if d.contains(e.differs) => None,
                        Some(d) => Some(format!("{side} differs otherwise: {d}")),
                        None => Some(format!("{side} is equal to controller-gen's")),
                    })
                    .collect();
                let want = field(&judge[&l.kind], &l.field)
                    .map(|(schema, _)| schema.to_string())
                    .unwrap_or_default();
                if !want.contains(e.controller_gen) {
                    stale.push(format!(
                        "controller-gen's schema no longer contains `{}`",
                        e.controller_gen
                    ));
                }
                if stale.is_empty() {
                    excused.entry(e.reason).or_default().push(e.rust);
                } else {
                    failures.push(format!(
                        "{}: its EXCEPTIONS row (`{}`) is stale: {}; update or remove the row",
                        l.rust,
                        e.differs,
                        stale.join("; ")
                    ));
                }
            }
        }
    }
    for name in exceptions.keys() {
        if !listed.iter().any(|l| l.rust == *name) {
            failures.push(format!("{name}: in EXCEPTIONS but not a listed type"));
        }
    }
    println!(
        "differential: compared {} types in {} kinds against {source}, for manifests and the derive: {equal} equal, {} exceptions",
        listed.len(),
        kinds.len(),
        excused.values().map(Vec::len).sum::<usize>()
    );
    for (reason, types) in &excused {
        println!("exception ({} types): {reason}", types.len());
        for t in types {
            println!("  {t}");
        }
    }
    if !categories.is_empty() {
        println!("differences by category (types):");
        for (c, types) in &categories {
            println!("  {:4}  {c}  e.g. {}", types.len(), types[0]);
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences from controller-gen:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
