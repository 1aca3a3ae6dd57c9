//! `operator-gen init --existing` around a kube-rs crate (testdata/kube-rs): it adds `PROJECT`,
//! `config/`, the Makefile and the license header, leaves every file of the crate as it was,
//! `manifests` then writes the CRDs of its kinds, and `kubectl kustomize config/default` builds
//! them with the rest of the deployment. A crate `manifests` cannot read is refused, nothing
//! written.

use std::path::Path;

use operator_gen_tests::cli::{self, copy_dir, run, snapshot, split_args};
use operator_gen_tests::operator::shell;
use operator_gen_tests::workspace;
use serde_json::Value;

const CRDS: [&str; 4] = [
    "config/crd/bases/docs.example.com_documents.yaml",
    "config/crd/bases/docs.example.com_memos.yaml",
    "config/crd/bases/tools.example.com_gadgetry.yaml",
    "config/crd/bases/tools.example.com_widgets.yaml",
];

fn operator_gen(dir: &Path, args: &str) -> cli::Output {
    run(dir, &split_args(args))
}

#[test]
fn init_existing_adds_the_project_around_a_kube_rs_crate_without_touching_it() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("kube-rs-docs");
    copy_dir(&workspace().join("testdata/kube-rs"), &dir);
    let before = snapshot(&dir);
    let out = operator_gen(&dir, "init --existing --domain example.com");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after = snapshot(&dir);
    // every file of the crate, Cargo.toml and src/ included, is byte for byte as it was
    for (path, bytes) in &before {
        assert_eq!(after.get(path), Some(bytes), "{path} changed");
    }
    let added: Vec<&str> = after
        .keys()
        .filter(|p| !before.contains_key(*p))
        .map(String::as_str)
        .collect();
    for expected in [
        "PROJECT",
        "Makefile",
        "config/default/kustomization.yaml",
        "config/crd/kustomization.yaml",
        "hack/boilerplate.rs.txt",
    ] {
        assert!(added.contains(&expected), "{expected} not added: {added:?}");
    }
    assert!(
        added.iter().all(
            |p| ["PROJECT", "Makefile", "hack/boilerplate.rs.txt"].contains(p)
                || p.starts_with("config/")
        ),
        "{added:?}"
    );
    let project = String::from_utf8_lossy(&after["PROJECT"]).into_owned();
    assert!(project.contains("projectName: kube-rs-docs\n"), "{project}");
    let crd_kustomization =
        String::from_utf8_lossy(&after["config/crd/kustomization.yaml"]).into_owned();
    for crd in CRDS {
        let listed = format!("- {}\n", crd.trim_start_matches("config/crd/"));
        assert!(crd_kustomization.contains(&listed), "{crd_kustomization}");
    }

    let out = operator_gen(&dir, "manifests");
    assert_eq!(out.code, 0, "{}", out.stderr);
    for crd in CRDS {
        assert!(dir.join(crd).is_file(), "{crd} not written");
    }
    for (path, bytes) in before
        .iter()
        .filter(|(p, _)| p.starts_with("src/") || *p == "Cargo.toml")
    {
        assert_eq!(
            std::fs::read(dir.join(path)).ok().as_ref(),
            Some(bytes),
            "{path} changed"
        );
    }

    // a second init is refused and changes nothing
    let again = snapshot(&dir);
    let out = operator_gen(&dir, "init --existing --domain example.com");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("PROJECT exists"), "{}", out.stderr);
    assert_eq!(snapshot(&dir), again);

    if !cli::require_tool("kubectl", &["version", "--client"], cli::INSTALL_KUBECTL) {
        return;
    }
    let yaml = shell(&dir, "kubectl", &["kustomize", "config/default"]);
    let docs: Vec<Value> = serde_saphyr::from_multiple(&yaml).expect("kustomize output is YAML");
    let named = |kind: &str, name: &str| {
        docs.iter()
            .any(|d| d["kind"] == kind && d["metadata"]["name"] == name)
    };
    for name in [
        "documents.docs.example.com",
        "memos.docs.example.com",
        "gadgetry.tools.example.com",
        "widgets.tools.example.com",
    ] {
        assert!(named("CustomResourceDefinition", name), "no CRD {name}");
    }
    assert!(named("ClusterRole", "kube-rs-docs-manager-role"));
    assert!(named("Deployment", "kube-rs-docs-controller-manager"));
}

#[test]
fn init_existing_refuses_a_crate_manifests_cannot_read() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("notes");
    copy_dir(&workspace().join("testdata/kube-rs"), &dir);
    let document = dir.join("src/api/document.rs");
    let text = std::fs::read_to_string(&document).expect("document.rs");
    std::fs::write(
        &document,
        text.replace("    namespaced,\n", "    namespaced,\n    no_spec,\n"),
    )
    .expect("write");
    let before = snapshot(&dir);
    let out = operator_gen(&dir, "init --existing");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("src/api/document.rs:")
            && out.stderr.contains("#[kube(no_spec)] is not read"),
        "{}",
        out.stderr
    );
    assert_eq!(snapshot(&dir), before, "a refused init wrote files");
}
