//! Types in other crates: `operator-gen manifests` follows workspace members and path
//! dependencies (testdata/workspace: the operator, its API crate `fleet-api` and another binary
//! `fleet-tool` on the same API crate), and the derive compiled from the API crate's source
//! writes the same CRD byte for byte.

#[path = "../../testdata/workspace/api/src/lib.rs"]
mod fleet_api;

use std::path::{Path, PathBuf};

use operator_gen::manifests::{self, ManifestsOptions, Outputs};
use operator_gen_tests::workspace;

const SHIPS: &str = "config/crd/bases/fleet.example.com_ships.yaml";
const HARBORS: &str = "config/crd/bases/fleet.example.com_harbors.yaml";

fn fixture() -> PathBuf {
    workspace().join("testdata/workspace")
}

fn generate(root: &Path) -> Outputs {
    manifests::generate(root, &ManifestsOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
}

fn keys(outputs: &Outputs) -> Vec<&str> {
    outputs.keys().map(String::as_str).collect()
}

/// The `spec` schema of a CRD's first version.
fn spec_schema(yaml: &str) -> serde_json::Value {
    let doc: serde_json::Value = serde_saphyr::from_str(yaml).expect("CRD YAML");
    doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].clone()
}

#[test]
fn the_operator_reads_its_api_crate_and_the_derive_agrees() {
    let out = generate(&fixture());
    assert_eq!(keys(&out), [HARBORS, SHIPS, "config/rbac/role.yaml"]);
    // Ship is defined in the API crate: the derive, compiled from that source, agrees
    assert_eq!(out[SHIPS], fleet_api::v1::Ship::crd_yaml());
    // the operator reaches the spec through the API crate's re-exports, as users do
    let ship = fleet_api::v1::Ship::new("one", fleet_api::v1::ShipSpec::default());
    let status: Option<fleet_api::v1::ShipStatus> = ship.status;
    assert!(status.is_none());
    // the operator's own Harbor lists ships by the API crate's spec type
    let mut ship_spec = spec_schema(&out[SHIPS]);
    let harbor_spec = spec_schema(&out[HARBORS]);
    let berth = harbor_spec["properties"]["berths"]["items"].clone();
    ship_spec
        .as_object_mut()
        .expect("spec schema")
        .insert("description".into(), berth["description"].clone());
    assert_eq!(berth, ship_spec);
    assert_eq!(
        harbor_spec["properties"]["position"]["properties"]["latitude"]["minimum"],
        serde_json::json!(-90)
    );
    // the controller's RBAC markers, in the operator crate
    assert!(out["config/rbac/role.yaml"].contains("- ships/status"));
}

#[test]
fn another_binary_on_the_api_crate_gets_the_same_crd() {
    let operator = generate(&fixture());
    let tool = generate(&fixture().join("tool"));
    assert_eq!(keys(&tool), [SHIPS, "config/rbac/role.yaml"]);
    assert_eq!(tool[SHIPS], operator[SHIPS]);
    let api = generate(&fixture().join("api"));
    assert_eq!(api[SHIPS], operator[SHIPS]);
}

#[test]
fn a_type_in_no_crate_in_reach_is_an_error_naming_it_and_its_user() {
    let dir = tempfile::tempdir().expect("project");
    std::fs::create_dir_all(dir.path().join("src")).expect("src");
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"lonely\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )
    .expect("Cargo.toml");
    std::fs::write(
        dir.path().join("src/lib.rs"),
        "use operator_gen_runtime::prelude::*;\n\n\
         #[derive(CustomResource)]\n\
         #[k8s(group = \"fleet.example.com\", version = \"v1\", kind = \"Dock\")]\n\
         pub struct DockSpec {\n    pub ship: fleet_api::v1::ShipSpec,\n}\n",
    )
    .expect("lib.rs");
    let err = manifests::generate(dir.path(), &ManifestsOptions::default())
        .expect_err("fleet_api is not in reach")
        .to_string();
    assert!(
        err.starts_with("src/lib.rs:") && err.contains("`fleet_api::v1::ShipSpec`"),
        "{err}"
    );
}
