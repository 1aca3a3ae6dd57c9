//! A kind of several versions: `create api` for a second version of an existing kind, the one
//! CRD `manifests` writes for it with exactly one stored version, that CRD on a real
//! kube-apiserver (an object created in v1 read as v2 under the default `None` conversion), and
//! the generated project building and passing its own tests; and `edit --multigroup`, which
//! moves such a project into the multigroup layout.

use operator_gen_tests::operator::{generated_output, shell};
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
    let out = generated_output(
        Command::new(&cargo)
            .args(["test", "--lib"])
            .current_dir(&dir),
    )
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

/// On a project without APIs, `edit --multigroup` gives byte for byte the tree `init
/// --multigroup` gives.
#[test]
fn edit_multigroup_on_a_new_project_equals_init_multigroup() {
    let (_edited_tmp, edited) = project("same", &["init", "edit --multigroup"]);
    let (_direct_tmp, direct) = project("same", &["init --multigroup"]);
    let (edited, direct) = (cli::snapshot(&edited), cli::snapshot(&direct));
    let names =
        |t: &std::collections::BTreeMap<String, Vec<u8>>| t.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&edited), names(&direct));
    for (path, bytes) in &direct {
        assert!(
            edited.get(path) == Some(bytes),
            "{path} differs: {}",
            cli::first_line_difference(
                &String::from_utf8_lossy(bytes),
                &String::from_utf8_lossy(&edited[path])
            )
        );
    }
}

/// `edit --multigroup` on a single-group project with two versions of a kind, another kind and
/// a controller for a built-in type: the files move, a second group can then be added, and the
/// moved project builds, passes its tests and renders with kustomize, the roles group-prefixed.
#[test]
fn edit_multigroup_moves_a_project_that_still_builds() {
    let (_tmp, dir) = project(
        "fleet",
        &[
            "init",
            "create api --group crew --version v1 --kind Captain",
            "create api --group crew --version v2 --kind Captain --storage",
            "create api --group crew --version v1 --kind FirstMate",
            "create api --group apps --version v1 --kind Deployment --resource=false",
            "manifests",
            "edit --multigroup",
        ],
    );
    for gone in [
        "src/api/v1",
        "src/api/v2",
        "src/controller/captain.rs",
        "src/controller/deployment.rs",
        "config/rbac/captain_admin_role.yaml",
    ] {
        assert!(!dir.join(gone).exists(), "{gone} is still there");
    }
    for moved in [
        "src/api/crew/mod.rs",
        "src/api/crew/v1/captain.rs",
        "src/api/crew/v1/first_mate.rs",
        "src/api/crew/v2/captain.rs",
        "src/controller/crew/captain.rs",
        "src/controller/crew/first_mate.rs",
        "src/controller/apps/deployment.rs",
        "config/rbac/crew_captain_admin_role.yaml",
        "config/rbac/crew_firstmate_viewer_role.yaml",
    ] {
        assert!(dir.join(moved).is_file(), "{moved} is missing");
    }
    let main = read(&dir, "src/main.rs");
    for line in [
        "fleet::controller::crew::captain::register(&mut mgr);",
        "fleet::controller::apps::deployment::register(&mut mgr);",
    ] {
        assert!(main.contains(line), "{main}");
    }
    assert!(
        read(&dir, "src/controller/crew/captain.rs").contains("use crate::api::crew::v1::Captain;")
    );
    let project = read(&dir, "PROJECT");
    assert!(project.contains("multigroup: true\n"), "{project}");
    assert!(
        project.contains("path: fleet::api::crew::v2\n"),
        "{project}"
    );
    let said = cli::run(&dir, &cli::split_args("edit --multigroup"));
    assert_ne!(said.code, 0);
    assert!(
        said.stderr.contains("the project is already multigroup"),
        "{}",
        said.stderr
    );

    ok(
        &dir,
        "create api --group ship --version v1beta1 --kind Frigate",
    );
    ok(&dir, "manifests");
    let cargo = cli::cargo();
    shell(&dir, &cargo, &["build", "--all-targets"]);
    let tests = shell(&dir, &cargo, &["test"]);
    for test in [
        "api::crew::v1::captain::tests::crd_matches_make_manifests",
        "api::crew::v2::captain::tests::crd_matches_make_manifests",
        "api::crew::v1::first_mate::tests::crd_matches_make_manifests",
        "api::ship::v1beta1::frigate::tests::crd_matches_make_manifests",
    ] {
        assert!(
            tests.contains(&format!("{test} ... ok")),
            "{test} did not pass:\n{tests}"
        );
    }

    if !cli::require_tool("kubectl", &["version", "--client"], cli::INSTALL_KUBECTL) {
        return;
    }
    let yaml = shell(&dir, "kubectl", &["kustomize", "config/default"]);
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&yaml).expect("kustomize output is YAML");
    let has = |kind: &str, name: &str| {
        docs.iter().any(|d| {
            d["kind"].as_str() == Some(kind) && d["metadata"]["name"].as_str() == Some(name)
        })
    };
    for (kind, name) in [
        ("ClusterRole", "fleet-crew-captain-admin-role"),
        ("ClusterRole", "fleet-crew-firstmate-editor-role"),
        ("ClusterRole", "fleet-ship-frigate-viewer-role"),
        ("CustomResourceDefinition", "captains.crew.my.domain"),
        ("CustomResourceDefinition", "frigates.ship.my.domain"),
        ("Deployment", "fleet-controller-manager"),
    ] {
        assert!(
            has(kind, name),
            "kustomize renders no {kind} {name}:\n{yaml}"
        );
    }
    assert!(!has("ClusterRole", "fleet-captain-admin-role"), "{yaml}");
}
