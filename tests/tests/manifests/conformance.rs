//! Conformance: Rust twins of controller-gen's and kubebuilder's inputs under
//! `testdata/conformance/` must produce output equal to their frozen goldens in
//! `../shared/conformance/` (compared as parsed YAML without the generator annotation; see
//! `normalized_documents`). Skipped, saying so, when that directory is absent outside CI.

use operator_gen::manifests::{self, ManifestsOptions};
use operator_gen_tests::{conformance, first_difference, normalized_documents, workspace};
use std::path::Path;

/// A subtree of a golden not compared with ours, and why. The subtree must differ from ours (a
/// row whose subtree matches fails the test); the rest of the golden is compared as usual.
struct Exception {
    case: &'static str,
    golden: &'static str,
    /// JSON pointer into the golden's documents (an array).
    pointer: &'static str,
    reason: &'static str,
}

const EXCEPTIONS: &[Exception] = &[Exception {
    case: "cronjobs",
    golden: "controller-tools/pkg/crd/testdata/testdata.kubebuilder.io_cronjobs.yaml",
    pointer: "/0/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/jobTemplate/properties/spec",
    reason: "batch/v1 JobSpec as controller-gen read it from k8s.io/api v0.36 when the golden was made; \
             the table of Kubernetes types is Kubernetes 1.37's (new fields such as JobSpec.scheduling and \
             Probe.grpc.mode, reworded descriptions). JobSpec at 1.37 is compared with controller-gen's \
             by tests/tests/manifests/differential_controller_gen.rs (batch::v1::JobSpec, JobTemplateSpec)",
}];

/// A testdata case, the options it runs with, and (our output file, golden file) pairs.
type Case = (
    &'static str,
    ManifestsOptions,
    Vec<(&'static str, &'static str)>,
);

fn cases() -> Vec<Case> {
    let crd = "controller-tools/pkg/crd/testdata";
    let kb = "kubebuilder-project-v4/config";
    let plain = ManifestsOptions::default();
    vec![
        (
            "foos",
            plain.clone(),
            vec![(
                "config/crd/bases/bar.example.com_foos.yaml",
                leak(format!("{crd}/gen/bar.example.com_foos.yaml")),
            )],
        ),
        (
            "foos_maxdesclen",
            ManifestsOptions {
                max_desc_len: Some(50),
                ..plain.clone()
            },
            vec![(
                "config/crd/bases/bar.example.com_foos.yaml",
                leak(format!("{crd}/gen/bar.example.com_foos_maxdesclen.yaml")),
            )],
        ),
        (
            "jobs",
            plain.clone(),
            vec![(
                "config/crd/bases/testdata.kubebuilder.io_jobs.yaml",
                leak(format!("{crd}/testdata.kubebuilder.io_jobs.yaml")),
            )],
        ),
        (
            "enums",
            plain.clone(),
            vec![(
                "config/crd/bases/testdata.kubebuilder.io_enums.yaml",
                leak(format!("{crd}/testdata.kubebuilder.io_enums.yaml")),
            )],
        ),
        (
            "externaldocs",
            plain.clone(),
            vec![(
                "config/crd/bases/testdata.kubebuilder.io_externaldocs.yaml",
                leak(format!("{crd}/testdata.kubebuilder.io_externaldocs.yaml")),
            )],
        ),
        (
            "multiple_versions",
            plain.clone(),
            vec![(
                "config/crd/bases/testdata.kubebuilder.io_versionedresources.yaml",
                leak(format!(
                    "{crd}/multiple_versions/testdata.kubebuilder.io_versionedresources.yaml"
                )),
            )],
        ),
        (
            "project_v4",
            plain.clone(),
            vec![
                (
                    "config/crd/bases/crew.testproject.org_captains.yaml",
                    leak(format!("{kb}/crd/bases/crew.testproject.org_captains.yaml")),
                ),
                (
                    "config/crd/bases/crew.testproject.org_admirales.yaml",
                    leak(format!(
                        "{kb}/crd/bases/crew.testproject.org_admirales.yaml"
                    )),
                ),
                (
                    "config/crd/bases/crew.testproject.org_firstmates.yaml",
                    leak(format!(
                        "{kb}/crd/bases/crew.testproject.org_firstmates.yaml"
                    )),
                ),
                (
                    "config/crd/bases/crew.testproject.org_navigators.yaml",
                    leak(format!(
                        "{kb}/crd/bases/crew.testproject.org_navigators.yaml"
                    )),
                ),
                (
                    "config/crd/bases/crew.testproject.org_sailors.yaml",
                    leak(format!("{kb}/crd/bases/crew.testproject.org_sailors.yaml")),
                ),
                (
                    "config/rbac/role.yaml",
                    leak(format!("{kb}/rbac/role.yaml")),
                ),
            ],
        ),
        (
            "plural",
            plain.clone(),
            vec![(
                "config/crd/bases/plural.example.com_testquotas.yaml",
                leak(format!("{crd}/plural/plural.example.com_testquotas.yaml")),
            )],
        ),
        (
            "nogroup",
            plain.clone(),
            vec![(
                "config/crd/bases/_cronjobs.yaml",
                leak(format!("{crd}/testdata._cronjobs.yaml")),
            )],
        ),
        (
            "oneofs",
            plain.clone(),
            vec![(
                "config/crd/bases/testdata.kubebuilder.io_oneofs.yaml",
                leak(format!("{crd}/testdata.kubebuilder.io_oneofs.yaml")),
            )],
        ),
        (
            "immutabletypes",
            plain.clone(),
            vec![(
                "config/crd/bases/testdata.kubebuilder.io_immutabletypes.yaml",
                leak(format!("{crd}/testdata.kubebuilder.io_immutabletypes.yaml")),
            )],
        ),
        (
            "cronjobs",
            ManifestsOptions {
                allow_dangerous_types: true,
                ..plain.clone()
            },
            vec![(
                "config/crd/bases/testdata.kubebuilder.io_cronjobs.yaml",
                leak(format!("{crd}/testdata.kubebuilder.io_cronjobs.yaml")),
            )],
        ),
        (
            "rbac",
            plain,
            vec![(
                "config/rbac/role.yaml",
                "controller-tools/pkg/rbac/testdata/role.yaml",
            )],
        ),
    ]
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn case_root(name: &str) -> std::path::PathBuf {
    workspace().join("testdata/conformance").join(name)
}

/// Each case writes exactly the CRDs it is compared on, named in [`cases`]: a CRD that goes
/// missing or appears fails here, with or without the goldens beside the checkout.
#[test]
fn cases_write_exactly_the_named_crds() {
    let mut failures = Vec::new();
    for (name, opts, files) in cases() {
        let outputs = manifests::generate(&case_root(name), &opts)
            .unwrap_or_else(|e| panic!("{name}: manifests failed: {e}"));
        let crd = |path: &&str| path.starts_with("config/crd/bases/");
        let mut expected: Vec<&str> = files.iter().map(|(ours, _)| *ours).filter(crd).collect();
        expected.sort_unstable();
        let mut written: Vec<&str> = outputs.keys().map(String::as_str).filter(crd).collect();
        written.sort_unstable();
        if written != expected {
            failures.push(format!("{name}: wrote {written:?}, named {expected:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn outputs_match_goldens() {
    let Some(conformance) = conformance() else {
        return;
    };
    let mut failures = Vec::new();
    let mut matched = 0;
    for (name, opts, files) in cases() {
        let outputs = match manifests::generate(&case_root(name), &opts) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{name}: manifests failed: {e}"));
                continue;
            }
        };
        for (ours, golden) in files {
            let Some(text) = outputs.get(ours) else {
                failures.push(format!(
                    "{name}: no {ours} among {:?}",
                    outputs.keys().collect::<Vec<_>>()
                ));
                continue;
            };
            let golden_path = conformance.join(golden);
            let golden_text = std::fs::read_to_string(&golden_path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", golden_path.display()));
            let (mut a, mut b) = (
                serde_json::Value::Array(normalized_documents(text)),
                serde_json::Value::Array(normalized_documents(&golden_text)),
            );
            for e in EXCEPTIONS
                .iter()
                .filter(|e| e.case == name && e.golden == golden)
            {
                let (Some(ours), Some(theirs)) =
                    (a.pointer_mut(e.pointer), b.pointer_mut(e.pointer))
                else {
                    failures.push(format!("{name}: {golden}: no {} on both sides", e.pointer));
                    continue;
                };
                if ours == theirs {
                    failures.push(format!(
                        "{name}: {golden}: {} now matches; remove its EXCEPTIONS row",
                        e.pointer
                    ));
                }
                *ours = serde_json::Value::Null;
                *theirs = serde_json::Value::Null;
                println!(
                    "conformance: {name}: {golden}: {} not compared: {}",
                    e.pointer, e.reason
                );
            }
            match first_difference(&a, &b, "") {
                None => matched += 1,
                Some(d) => failures.push(format!("{name}: {golden}: first difference at {d}")),
            }
        }
    }
    println!("conformance: {matched} goldens match");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Upstream compares the `gen` fixture byte for byte; so do we, up to the generator annotation.
#[test]
fn gen_fixture_is_byte_identical() {
    let Some(conformance) = conformance() else {
        return;
    };
    for (case, opts, golden) in [
        (
            "foos",
            ManifestsOptions::default(),
            "controller-tools/pkg/crd/testdata/gen/bar.example.com_foos.yaml",
        ),
        (
            "foos_maxdesclen",
            ManifestsOptions {
                max_desc_len: Some(50),
                ..Default::default()
            },
            "controller-tools/pkg/crd/testdata/gen/bar.example.com_foos_maxdesclen.yaml",
        ),
    ] {
        let outputs = manifests::generate(&case_root(case), &opts).expect("manifests");
        let ours = outputs["config/crd/bases/bar.example.com_foos.yaml"].replace(
            &format!("operator-gen.io/version: {}", operator_gen_codegen::VERSION),
            "controller-gen.kubebuilder.io/version: (devel)",
        );
        let want = std::fs::read_to_string(conformance.join(golden)).expect("golden");
        assert_eq!(ours, want, "{case}");
    }
}

/// Same input, same bytes: two runs agree.
#[test]
fn output_is_deterministic() {
    for (name, opts, _) in cases() {
        let a = manifests::generate(&case_root(name), &opts).map_err(|e| e.to_string());
        let b = manifests::generate(&case_root(name), &opts).map_err(|e| e.to_string());
        assert_eq!(a, b, "{name}");
    }
    assert!(Path::new(&case_root("rbac")).is_dir());
}
