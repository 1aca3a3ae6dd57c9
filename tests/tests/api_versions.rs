//! A kind of several versions: `create api` for a second version of an existing kind, the one
//! CRD `manifests` writes for it with exactly one stored version, that CRD on a real
//! kube-apiserver (an object created in v1 read as v2 under the default `None` conversion), and
//! the generated project building and passing its own tests.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_tests::cli;

fn ok(dir: &Path, args: &str) -> String {
    let out = cli::run(dir, &cli::split_args(args));
    assert_eq!(out.code, 0, "`operator-gen {args}` failed: {}", out.stderr);
    out.stderr
}

fn project(name: &str, commands: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    for c in commands {
        ok(&dir, c);
    }
    (tmp, dir)
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("cannot read {rel}: {e}"))
}

fn crd(dir: &Path) -> CustomResourceDefinition {
    serde_saphyr::from_str(&read(dir, "config/crd/bases/crew.my.domain_captains.yaml"))
        .expect("the CRD parses")
}

/// (name, served, storage) of each version, in the CRD's order.
fn versions(crd: &CustomResourceDefinition) -> Vec<(String, bool, bool)> {
    crd.spec
        .versions
        .iter()
        .map(|v| (v.name.clone(), v.served, v.storage))
        .collect()
}

/// Without `--storage` the first version keeps storing: it gets the marker, the new one does
/// not, no second controller, roles or CRD line is scaffolded, and the CRD holds both versions.
#[test]
fn a_second_version_joins_the_kind_and_the_first_keeps_storing() {
    let (_tmp, dir) = project(
        "versions",
        &[
            "init",
            "create api --group crew --version v1 --kind Captain",
        ],
    );
    let roles_before = read(&dir, "config/rbac/kustomization.yaml");
    let said = ok(&dir, "create api --group crew --version v2 --kind Captain");
    assert!(
        said.contains("Captain already has a controller (crew/v1), which serves every version of the kind; scaffolded only the type"),
        "{said}"
    );
    let v1 = read(&dir, "src/api/v1/captain.rs");
    let v2 = read(&dir, "src/api/v2/captain.rs");
    assert_eq!(
        v1.matches("/// +kubebuilder:storageversion\n").count(),
        1,
        "{v1}"
    );
    assert!(!v2.contains("+kubebuilder:storageversion"), "{v2}");
    assert!(!dir.join("src/controller/v2").exists());
    assert_eq!(read(&dir, "config/rbac/kustomization.yaml"), roles_before);
    let crds = read(&dir, "config/crd/kustomization.yaml");
    assert_eq!(
        crds.matches("- bases/crew.my.domain_captains.yaml").count(),
        1,
        "{crds}"
    );
    let samples = read(&dir, "config/samples/kustomization.yaml");
    assert!(samples.contains("- crew_v1_captain.yaml\n"), "{samples}");
    assert!(samples.contains("- crew_v2_captain.yaml\n"), "{samples}");
    let project = read(&dir, "PROJECT");
    assert!(project.contains("path: versions::api::v1\n"), "{project}");
    assert!(project.contains("path: versions::api::v2\n"), "{project}");

    ok(&dir, "manifests");
    assert_eq!(
        versions(&crd(&dir)),
        [
            ("v1".to_owned(), true, true),
            ("v2".to_owned(), true, false)
        ]
    );

    // a third version with --storage takes the marker from v1
    ok(
        &dir,
        "create api --group crew --version v3 --kind Captain --storage",
    );
    assert!(!read(&dir, "src/api/v1/captain.rs").contains("+kubebuilder:storageversion"));
    assert!(read(&dir, "src/api/v3/captain.rs").contains("/// +kubebuilder:storageversion\n"));
    ok(&dir, "manifests");
    assert_eq!(
        versions(&crd(&dir)),
        [
            ("v1".to_owned(), true, false),
            ("v2".to_owned(), true, false),
            ("v3".to_owned(), true, true)
        ]
    );
}

/// The two-version CRD of a generated project on a real kube-apiserver: accepted, Established
/// with both versions served and v1 stored, and an object created in v1 read back in v2 (the
/// CRD's default `None` conversion: same fields, another apiVersion).
#[tokio::test]
async fn the_two_version_crd_is_established_and_serves_both_versions() {
    let (_tmp, dir) = project(
        "versions",
        &[
            "init",
            "create api --group crew --version v1 --kind Captain",
            "create api --group crew --version v2 --kind Captain",
            "manifests",
        ],
    );
    let crd = crd(&dir);
    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    plane
        .install_crds(std::slice::from_ref(&crd), Duration::from_secs(60))
        .await
        .expect("the two-version CRD is accepted and Established");
    let crds: Api<CustomResourceDefinition> = Api::all(plane.client());
    let stored = crds
        .get("captains.crew.my.domain")
        .await
        .expect("the CRD is there");
    assert_eq!(
        stored.status.and_then(|s| s.stored_versions),
        Some(vec!["v1".to_owned()])
    );

    let api = |version: &str| -> Api<DynamicObject> {
        let gvk = GroupVersionKind::gvk("crew.my.domain", version, "Captain");
        Api::namespaced_with(plane.client(), "default", &ApiResource::from_gvk(&gvk))
    };
    let captain: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "crew.my.domain/v1", "kind": "Captain",
        "metadata": {"name": "ahab"}, "spec": {"foo": "whale"}
    }))
    .expect("object");
    api("v1")
        .create(&PostParams::default(), &captain)
        .await
        .expect("created in v1");
    let read = api("v2").get("ahab").await.expect("read in v2");
    let value = serde_json::to_value(&read).expect("json");
    assert_eq!(value["apiVersion"], "crew.my.domain/v2");
    assert_eq!(value["spec"]["foo"], "whale");
}

fn shell(dir: &Path, program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env(
            "CARGO_TARGET_DIR",
            cli::workspace_root().join("target/generated-projects"),
        )
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "`{program} {}` failed:\n{}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A project with two versions of a kind (the second stored) builds, and each version's
/// generated `crd_matches_make_manifests` test passes against the one CRD of both.
#[test]
fn a_project_with_two_versions_builds_and_passes_its_tests() {
    let (_tmp, dir) = project(
        "versions-build",
        &[
            "init",
            "create api --group crew --version v1 --kind Captain",
            "create api --group crew --version v2 --kind Captain --storage",
            "manifests",
        ],
    );
    assert_eq!(
        versions(&crd(&dir)),
        [
            ("v1".to_owned(), true, false),
            ("v2".to_owned(), true, true)
        ]
    );
    let cargo = cli::cargo();
    let tests = shell(&dir, &cargo, &["test"]);
    for test in [
        "api::v1::captain::tests::crd_matches_make_manifests",
        "api::v2::captain::tests::crd_matches_make_manifests",
    ] {
        assert!(
            tests.contains(&format!("{test} ... ok")),
            "{test} did not pass:\n{tests}"
        );
    }

    // v2's entry in the file no longer what v2's source gives: v2's test fails, v1's passes
    let file = dir.join("config/crd/bases/crew.my.domain_captains.yaml");
    let text = read(&dir, "config/crd/bases/crew.my.domain_captains.yaml");
    let v2_at = text.find("  - name: v2\n").expect("the file lists v2");
    let (head, tail) = text.split_at(v2_at);
    let edited = format!(
        "{head}{}",
        tail.replacen("foo is an example field", "foo was edited", 1)
    );
    assert_ne!(edited, text);
    std::fs::write(&file, edited).expect("write the CRD");
    let out = Command::new(&cargo)
        .args(["test", "--lib"])
        .current_dir(&dir)
        .env(
            "CARGO_TARGET_DIR",
            cli::workspace_root().join("target/generated-projects"),
        )
        .output()
        .expect("run cargo test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("api::v1::captain::tests::crd_matches_make_manifests ... ok"),
        "{stdout}"
    );
    assert!(
        stdout.contains("api::v2::captain::tests::crd_matches_make_manifests ... FAILED"),
        "{stdout}"
    );
    assert!(
        stdout.contains("its version v2 differs from the derive's"),
        "{stdout}"
    );
}
