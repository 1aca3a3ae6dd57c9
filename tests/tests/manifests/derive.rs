//! Derive end to end: the testdata inputs compiled with the real derives; `crd_yaml()` must be
//! byte-identical to what `operator-gen manifests` writes for the same source.

#[path = "../../../testdata/conformance/cronjobs/src/lib.rs"]
mod cronjobs;
#[path = "../../../testdata/conformance/enums/src/lib.rs"]
mod enums;
#[path = "../../../testdata/conformance/externaldocs/src/lib.rs"]
mod externaldocs;
#[path = "../../../testdata/conformance/foos/src/lib.rs"]
mod foos;
#[path = "../../../testdata/conformance/immutabletypes/src/lib.rs"]
mod immutabletypes;
#[path = "../../../testdata/conformance/jobs/src/lib.rs"]
mod jobs;
#[path = "../../../testdata/conformance/multiple_versions/src/lib.rs"]
mod multiple_versions;
#[path = "../../../testdata/conformance/nogroup/src/lib.rs"]
mod nogroup;
#[path = "../../../testdata/conformance/oneofs/src/lib.rs"]
mod oneofs;
#[path = "../../../testdata/paths/src/lib.rs"]
mod paths;
#[path = "../../../testdata/conformance/plural/src/lib.rs"]
mod plural;
#[path = "../../../testdata/conformance/project_v4/src/lib.rs"]
mod project_v4;
#[path = "../../../testdata/validation/src/lib.rs"]
mod validation;

use kube::Resource;
use operator_gen::manifests::{self, ManifestsOptions};
use operator_gen_tests::workspace;

fn scanned(case: &str, file: &str) -> String {
    let root = workspace().join("testdata/conformance").join(case);
    let outputs = manifests::generate(&root, &ManifestsOptions::default()).expect("manifests");
    outputs
        .get(file)
        .cloned()
        .unwrap_or_else(|| panic!("{case} has no {file}"))
}

#[test]
fn scan_and_derive_agree_byte_for_byte() {
    let cases: Vec<(&str, &str, String)> = vec![
        (
            "foos",
            "config/crd/bases/bar.example.com_foos.yaml",
            foos::Foo::crd_yaml(),
        ),
        (
            "jobs",
            "config/crd/bases/testdata.kubebuilder.io_jobs.yaml",
            jobs::Job::crd_yaml(),
        ),
        (
            "enums",
            "config/crd/bases/testdata.kubebuilder.io_enums.yaml",
            enums::Enum::crd_yaml(),
        ),
        (
            "externaldocs",
            "config/crd/bases/testdata.kubebuilder.io_externaldocs.yaml",
            externaldocs::ExternalDoc::crd_yaml(),
        ),
        (
            "project_v4",
            "config/crd/bases/crew.testproject.org_captains.yaml",
            project_v4::v1::captain::Captain::crd_yaml(),
        ),
        (
            "project_v4",
            "config/crd/bases/crew.testproject.org_admirales.yaml",
            project_v4::v1::admiral::Admiral::crd_yaml(),
        ),
        (
            "project_v4",
            "config/crd/bases/crew.testproject.org_navigators.yaml",
            project_v4::v1::navigator::Navigator::crd_yaml(),
        ),
        (
            "project_v4",
            "config/crd/bases/crew.testproject.org_sailors.yaml",
            project_v4::v1::sailor::Sailor::crd_yaml(),
        ),
    ];
    let cases = cases.into_iter().chain([
        (
            "../validation",
            "config/crd/bases/test.operator-gen.dev_widgets.yaml",
            validation::Widget::crd_yaml(),
        ),
        (
            "../paths",
            "config/crd/bases/paths.example.com_lookups.yaml",
            paths::Lookup::crd_yaml(),
        ),
        (
            "plural",
            "config/crd/bases/plural.example.com_testquotas.yaml",
            plural::TestQuota::crd_yaml(),
        ),
        (
            "nogroup",
            "config/crd/bases/_cronjobs.yaml",
            nogroup::CronJob::crd_yaml(),
        ),
        (
            "oneofs",
            "config/crd/bases/testdata.kubebuilder.io_oneofs.yaml",
            oneofs::Oneof::crd_yaml(),
        ),
        (
            "immutabletypes",
            "config/crd/bases/testdata.kubebuilder.io_immutabletypes.yaml",
            immutabletypes::ImmutableType::crd_yaml(),
        ),
    ]);
    for (case, file, derived) in cases {
        assert_eq!(derived, scanned(case, file), "{case}: {file}");
    }
}

#[test]
fn root_type_behaves_like_a_kube_resource() {
    use project_v4::v1::admiral::{Admiral, AdmiralSpec};
    let mut a = Admiral::new(
        "nelson",
        AdmiralSpec {
            foo: Some("bar".into()),
        },
    );
    assert_eq!(Admiral::kind(&()), "Admiral");
    assert_eq!(Admiral::api_version(&()), "crew.testproject.org/v1");
    assert_eq!(Admiral::plural(&()), "admirales");
    assert_eq!(
        Admiral::url_path(&(), None),
        "/apis/crew.testproject.org/v1/admirales"
    );
    assert_eq!(a.meta().name.as_deref(), Some("nelson"));
    a.status = Some(Default::default());
    let json = serde_json::to_value(&a).expect("serialises");
    assert_eq!(json["apiVersion"], "crew.testproject.org/v1");
    assert_eq!(json["kind"], "Admiral");
    assert_eq!(json["spec"]["foo"], "bar");
    let back: Admiral = serde_json::from_value(json).expect("deserialises");
    assert_eq!(back.spec.foo.as_deref(), Some("bar"));
    let crd = Admiral::crd();
    assert_eq!(crd.spec.scope, "Cluster");
    assert_eq!(
        crd.metadata.name.as_deref(),
        Some("admirales.crew.testproject.org")
    );
    // each version module's derive describes its own version
    for (crd, version) in [
        (project_v4::v1::firstmate::FirstMate::crd(), "v1"),
        (project_v4::v2::firstmate::FirstMate::crd(), "v2"),
    ] {
        let versions: Vec<&str> = crd.spec.versions.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(versions, [version]);
    }
    let mate = project_v4::v2::firstmate::FirstMate::new(
        "x",
        project_v4::v2::firstmate::FirstMateSpec::default(),
    );
    assert!(mate.status.is_none());
    assert!(
        project_v4::v1::firstmate::FirstMateStatus::default()
            .conditions
            .is_empty()
    );
}

#[test]
fn no_spec_fields_sit_on_the_root() {
    let quota = plural::TestQuota::new("q", plural::TestQuotaFields { test: "yes".into() });
    let json = serde_json::to_value(&quota).expect("serialises");
    assert_eq!(json["test"], "yes");
    assert!(json.get("spec").is_none());
    assert_eq!(json["apiVersion"], "plural.example.com/v1");
    let back: plural::TestQuota = serde_json::from_value(json).expect("deserialises");
    assert_eq!(back.spec.test, "yes");
    assert_eq!(nogroup::CronJob::api_version(&()), "nogroup");
    let _ = nogroup::CronJobFields {};
}

/// The cronjobs kind spans three version modules (v1 stored, v1beta1 unserved, v1beta2 without
/// spec); merged, the derives give the scan's bytes. The scan allows floats here, as upstream does.
#[test]
fn cronjobs_versions_make_the_scanned_crd() {
    let root = workspace().join("testdata/conformance/cronjobs");
    let options = ManifestsOptions {
        allow_dangerous_types: true,
        ..Default::default()
    };
    let outputs = manifests::generate(&root, &options).expect("manifests");
    let settings = operator_gen_runtime::Settings {
        allow_dangerous_types: true,
        ..Default::default()
    };
    let merged = operator_gen_runtime::crd_for_versions_with(
        vec![
            cronjobs::v1beta2::CronJob::crd_version(),
            cronjobs::v1::CronJob::crd_version(),
            cronjobs::v1beta1::CronJob::crd_version(),
        ],
        &settings,
    )
    .expect("one storage version");
    assert_eq!(
        operator_gen_runtime::crd_yaml(&merged),
        outputs["config/crd/bases/testdata.kubebuilder.io_cronjobs.yaml"]
    );
}

#[test]
fn several_versions_make_one_crd_like_the_scan() {
    let merged = operator_gen_runtime::crd_for_versions(vec![
        project_v4::v2::firstmate::FirstMate::crd_version(),
        project_v4::v1::firstmate::FirstMate::crd_version(),
    ])
    .expect("one storage version");
    assert_eq!(
        operator_gen_runtime::crd_yaml(&merged),
        scanned(
            "project_v4",
            "config/crd/bases/crew.testproject.org_firstmates.yaml"
        )
    );
    let versioned = operator_gen_runtime::crd_for_versions(vec![
        multiple_versions::v1beta1::VersionedResource::crd_version(),
        multiple_versions::v1beta2::VersionedResource::crd_version(),
    ])
    .expect("v1beta2 is the storage version");
    assert_eq!(
        operator_gen_runtime::crd_yaml(&versioned),
        scanned(
            "multiple_versions",
            "config/crd/bases/testdata.kubebuilder.io_versionedresources.yaml"
        )
    );
    let err = operator_gen_runtime::crd_for_versions(vec![
        project_v4::v2::firstmate::FirstMate::crd_version(),
    ])
    .map(|_| ())
    .err();
    assert!(err.is_none(), "a single version is its own storage version");
    let both_unstored = operator_gen_runtime::crd_for_versions(vec![
        project_v4::v2::firstmate::FirstMate::crd_version(),
        project_v4::v2::firstmate::FirstMate::crd_version(),
    ]);
    assert!(
        both_unstored
            .expect_err("duplicate version")
            .contains("twice")
    );
}

/// Untagged enums take kube-rs's rewriter shape: a number-or-name enum is an int-or-string;
/// object variants merge into one object whose `anyOf` holds each variant's required fields,
/// nullable because a unit variant writes `null`.
#[test]
fn untagged_enums_have_one_structural_schema() {
    let crd = serde_json::to_value(validation::Widget::crd()).expect("json");
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(
        spec["port"],
        serde_json::json!({
            "description": "The port it listens on: an untagged enum of a number and a name (int-or-string).",
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "x-kubernetes-int-or-string": true
        })
    );
    assert_eq!(
        spec["targets"]["items"],
        serde_json::json!({
            "description": "A report target: a service, a URL, or none.",
            "type": "object",
            "nullable": true,
            "properties": {
                "port": {"type": "integer", "format": "int32"},
                "service": {"type": "string"},
                "url": {"type": "string"}
            },
            "anyOf": [{"required": ["port", "service"]}, {"required": ["url"]}]
        })
    );
}
