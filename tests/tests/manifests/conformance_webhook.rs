//! Conformance of the webhook generator: Rust twins of controller-tools' webhook fixtures and of
//! kubebuilder's project-v4 webhook markers under `testdata/conformance/` must produce
//! `config/webhook/manifests.yaml` equal to the goldens in `../shared/conformance/`, compared as
//! parsed YAML (some goldens are hand-ordered); skipped, saying so, when that directory is absent
//! outside CI. Also the scan's diagnostics for bad markers.

use operator_gen::manifests::{self, ManifestsOptions};
use operator_gen_tests::{conformance, first_difference, normalized_documents, workspace};
use std::path::Path;

const OUTPUT: &str = "config/webhook/manifests.yaml";

/// (testdata case, golden under `../shared/conformance/`)
const CASES: &[(&str, &str)] = &[
    (
        "webhook_valid",
        "controller-tools/pkg/webhook/testdata/valid/manifests.yaml",
    ),
    (
        "webhook_valid_url",
        "controller-tools/pkg/webhook/testdata/valid-url/manifests.yaml",
    ),
    (
        "webhook_valid_custom_service",
        "controller-tools/pkg/webhook/testdata/valid-custom-service/manifests.yaml",
    ),
    (
        "webhook_valid_custom_name",
        "controller-tools/pkg/webhook/testdata/valid-custom-name/manifests.yaml",
    ),
    (
        "webhook_valid_ordered",
        "controller-tools/pkg/webhook/testdata/valid-ordered/manifests.yaml",
    ),
    (
        "project_v4",
        "kubebuilder-project-v4/config/webhook/manifests.yaml",
    ),
];

/// The difference between our output for `case` and its golden under `conformance`, if any.
fn compare(conformance: &Path, case: &str, golden: &str) -> Option<String> {
    let root = workspace().join("testdata/conformance").join(case);
    let outputs = match manifests::generate(&root, &ManifestsOptions::default()) {
        Ok(o) => o,
        Err(e) => return Some(format!("{case}: manifests failed: {e}")),
    };
    let Some(ours) = outputs.get(OUTPUT) else {
        return Some(format!("{case}: no {OUTPUT} among {:?}", outputs.keys()));
    };
    let golden_path = conformance.join(golden);
    let expected = match std::fs::read_to_string(&golden_path) {
        Ok(t) => t,
        Err(e) => {
            return Some(format!(
                "{case}: cannot read {}: {e}",
                golden_path.display()
            ));
        }
    };
    let (ours_docs, golden_docs) = (normalized_documents(ours), normalized_documents(&expected));
    if ours_docs.len() != golden_docs.len() {
        return Some(format!(
            "{case}: {} documents != {} in the golden\n{ours}",
            ours_docs.len(),
            golden_docs.len()
        ));
    }
    ours_docs
        .iter()
        .zip(&golden_docs)
        .enumerate()
        .find_map(|(i, (o, g))| first_difference(o, g, &format!("doc{i}")))
        .map(|d| format!("{case} vs {golden}: {d}\n{ours}"))
}

#[test]
fn webhook_goldens_match() {
    let Some(conformance) = conformance() else {
        return;
    };
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|(case, golden)| compare(&conformance, case, golden))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} webhook goldens differ:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n\n")
    );
}

#[test]
fn webhook_output_is_stable() {
    let root = workspace().join("testdata/conformance/webhook_valid_ordered");
    let first = manifests::generate(&root, &ManifestsOptions::default()).expect("generates");
    let second = manifests::generate(&root, &ManifestsOptions::default()).expect("generates");
    assert_eq!(first.get(OUTPUT), second.get(OUTPUT));
}

#[test]
fn no_webhook_markers_no_webhook_file() {
    let root = workspace().join("testdata/conformance/rbac");
    let outputs = manifests::generate(&root, &ManifestsOptions::default()).expect("generates");
    assert!(!outputs.contains_key(OUTPUT), "{:?}", outputs.keys());
}

/// The scan's error for a crate whose `src/lib.rs` is `source`.
fn scan_error(source: &str) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "src/lib.rs", source);
    match manifests::generate(dir.path(), &ManifestsOptions::default()) {
        Ok(o) => panic!("expected an error, got {:?}", o.keys()),
        Err(e) => e.to_string(),
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

const GOOD: &str = "failurePolicy=fail,groups=apps,resources=deployments,verbs=create;update,versions=v1,admissionReviewVersions=v1,name=vdeployment-v1.kb.io,mutating=false";

#[test]
fn bad_webhook_markers_are_located_diagnostics() {
    let cases = [
        (
            format!("path=/validate-apps-v1-deployment,{GOOD}"),
            "needs `sideEffects=None` or `sideEffects=NoneOnDryRun`",
        ),
        (
            format!(
                "path=/validate-apps-v1-deployment,url=https://example.com/validate,sideEffects=None,{GOOD}"
            ),
            "has both `path` and `url`",
        ),
        (
            format!("path=/validate-apps-v1-deployment,sideEffects=None,timeoutSeconds=0,{GOOD}"),
            "timeoutSeconds `0` is out of range: use 1 to 30 seconds",
        ),
    ];
    for (args, want) in cases {
        let source = format!(
            "//! A crate with one bad webhook marker.\n//!\n//! +kubebuilder:webhook:{args}\n"
        );
        let err = scan_error(&source);
        assert!(err.contains(want), "{args}: {err}");
        assert!(
            err.contains("src/lib.rs:3:"),
            "not located on line 3: {err}"
        );
    }
}

#[test]
fn webhook_marker_on_a_type_in_a_submodule_is_located() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "src/lib.rs", "//! Root.\n\npub mod hooks;\n");
    write(
        dir.path(),
        "src/hooks.rs",
        &format!(
            "//! Webhooks.\n\n/// The handler.\n///\n/// +kubebuilder:webhook:path=/v,sideEffects=Some,{GOOD}\npub struct Handler;\n"
        ),
    );
    let err = match manifests::generate(dir.path(), &ManifestsOptions::default()) {
        Ok(o) => panic!("expected an error, got {:?}", o.keys()),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("src/hooks.rs:"), "{err}");
    assert!(err.contains("sideEffects `Some` is not allowed"), "{err}");
}
