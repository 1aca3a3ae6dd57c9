//! `create api --from-crd` on the hand-chosen CRDs of `testdata/from-crd/`: each imported into
//! a new project and written back by `manifests`, node for node equal (as
//! `operator_gen_tests::crd_round_trip` compares); and a CRD whose descriptions and root Go's
//! comment text and controller-gen cannot hold, whose notes name exactly the paths that differ.

use std::path::PathBuf;

use operator_gen_tests::cli;
use operator_gen_tests::crd_round_trip::{Outcome, round_trip};
use serde_json::Value;

fn inputs() -> Vec<PathBuf> {
    let dir = cli::workspace_root().join("testdata/from-crd");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read testdata/from-crd")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// The keys anywhere in `v`, and whether some `versions` list has several entries.
fn keys(v: &Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.insert(k.clone());
                if k == "versions" && x.as_array().is_some_and(|a| a.len() > 1) {
                    out.insert("several versions".into());
                }
                keys(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
        _ => {}
    }
}

#[test]
fn testdata_crds_come_back_node_for_node() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut seen = std::collections::BTreeSet::new();
    let mut compared = Vec::new();
    let mut failures = Vec::new();
    for file in inputs() {
        let text = std::fs::read_to_string(&file).expect("read crd");
        let crd: Value = serde_saphyr::from_str(&text).expect("testdata CRD parses");
        keys(&crd, &mut seen);
        let name = file
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        match round_trip(&text, &crd, &tmp.path().join(&name), &[]) {
            Outcome::Compared(d) if d.is_empty() => compared.push(name),
            Outcome::Compared(d) => failures.push(format!("{name}: {d:#?}")),
            Outcome::Failed { step, error } => {
                failures.push(format!("{name}: `{step}` failed: {error}"))
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "from_crd: {} CRDs came back node for node: {}",
        compared.len(),
        compared.join(", ")
    );
    // the inputs hold what the command must carry
    for want in [
        "x-kubernetes-list-map-keys",
        "x-kubernetes-validations",
        "messageExpression",
        "optionalOldSelf",
        "default",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-map-type",
        "additionalPrinterColumns",
        "scale",
        "selectableFields",
        "deprecationWarning",
        "several versions",
        "nullable",
        "enum",
        "shortNames",
        "categories",
        "labels",
    ] {
        assert!(seen.contains(want), "no testdata CRD has `{want}`");
    }
}
