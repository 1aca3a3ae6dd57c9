//! Types in other crates: `operator-gen manifests` follows workspace members and path
//! dependencies (testdata/workspace: the operator, its API crate `fleet-api` and another binary
//! `fleet-tool` on the same API crate), and the derive compiled from the API crate's source
//! writes the same CRD byte for byte. It reads a registry dependency that depends on
//! operator-gen-runtime from its source, and knows a path dependency by the name the depending
//! crate gives it (testdata/registry: the registry is replaced by a vendored directory, so
//! cargo resolves it offline).

#[path = "../../../testdata/workspace/api/src/lib.rs"]
mod fleet_api;

// testdata/registry's crates, compiled here with the real runtime: the Dock kind sees the
// registry crate and the renamed path dependency by the names its project gives them
#[path = "../../../testdata/registry/kinds/src/lib.rs"]
mod berths;
#[path = "../../../testdata/registry/vendor/shared-api/src/lib.rs"]
mod shared_api;
mod dock {
    use super::{berths, shared_api};
    include!("../../../testdata/registry/src/dock.rs");
}

use std::path::{Path, PathBuf};

use operator_gen::manifests::{self, ManifestsOptions, Outputs};
use operator_gen_tests::cli::copy_dir;
use operator_gen_tests::workspace;

const SHIPS: &str = "config/crd/bases/fleet.example.com_ships.yaml";
const HARBORS: &str = "config/crd/bases/fleet.example.com_harbors.yaml";
const DOCKS: &str = "config/crd/bases/harbor.example.com_docks.yaml";

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

/// testdata/registry copied where cargo may write (`cargo metadata` brings a stale lock up to
/// date).
fn registry_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("project");
    copy_dir(&workspace().join("testdata/registry"), dir.path());
    dir
}

#[test]
fn a_registry_crate_lends_its_types_and_the_derive_agrees() {
    let project = registry_project();
    let lock = std::fs::read_to_string(project.path().join("Cargo.lock")).expect("Cargo.lock");
    let out = generate(project.path());
    // shared-api's own kind (Gadget) and RBAC marker are its publisher's: not written here
    assert_eq!(keys(&out), [DOCKS, "config/rbac/role.yaml"]);
    assert!(!out["config/rbac/role.yaml"].contains("gadgets"));
    // the derive, compiled from the same sources, agrees byte for byte
    assert_eq!(out[DOCKS], dock::Dock::crd_yaml());
    let spec = spec_schema(&out[DOCKS]);
    let props = |v: &serde_json::Value| -> Vec<String> {
        v["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .cloned()
            .collect()
    };
    // Widget and Part, read from vendor/shared-api, the registry crate's source
    let widget = &spec["properties"]["widget"];
    assert_eq!(props(widget), ["colour", "parts"]);
    assert_eq!(
        widget["properties"]["colour"]["enum"],
        serde_json::json!(["red", "green", "blue"])
    );
    assert_eq!(widget["properties"]["parts"]["maxItems"], 8);
    let part = &widget["properties"]["parts"]["items"];
    assert_eq!(props(part), ["serial", "weightGrams"]);
    assert_eq!(part["required"], serde_json::json!(["serial"]));
    assert_eq!(
        part["properties"]["serial"]["pattern"],
        "^[A-Z]{2}[0-9]{4}$"
    );
    // the same Part by its full path through the crate's module
    assert_eq!(spec["properties"]["spares"]["items"], *part);
    // Berth, from the path dependency harbor-kinds, which the operator calls `berths`
    let berth = &spec["properties"]["berth"];
    assert_eq!(props(berth), ["depthMeters", "quay"]);
    assert_eq!(berth["properties"]["quay"]["minLength"], 1);
    assert_eq!(berth["properties"]["depthMeters"]["minimum"], 2);
    // an up-to-date lock is left as it was
    let after = std::fs::read_to_string(project.path().join("Cargo.lock")).expect("Cargo.lock");
    assert_eq!(after, lock);
}

#[test]
fn a_lock_without_the_registry_crate_is_brought_up_to_date() {
    let project = registry_project();
    let lock_path = project.path().join("Cargo.lock");
    let lock = std::fs::read_to_string(&lock_path).expect("Cargo.lock");
    // as after adding the dependency, before any build
    let stale: String = lock
        .split("\n\n")
        .filter(|block| !block.contains("name = \"shared-api\""))
        .collect::<Vec<_>>()
        .join("\n\n")
        .replace(" \"shared-api\",\n", "");
    assert!(!stale.contains("shared-api"), "{stale}");
    std::fs::write(&lock_path, stale).expect("Cargo.lock");
    let out = generate(project.path());
    assert_eq!(out[DOCKS], dock::Dock::crd_yaml());
    let updated = std::fs::read_to_string(&lock_path).expect("Cargo.lock");
    assert!(updated.contains("name = \"shared-api\""), "{updated}");
}

#[test]
fn without_a_lock_a_registry_type_is_an_error_saying_why() {
    let project = registry_project();
    std::fs::remove_file(project.path().join("Cargo.lock")).expect("Cargo.lock");
    let err = manifests::generate(project.path(), &ManifestsOptions::default())
        .expect_err("shared-api is not looked for without a lock")
        .to_string();
    assert!(
        err.starts_with("src/dock.rs:")
            && err.contains("`shared_api::Widget`")
            && err.contains("no Cargo.lock"),
        "{err}"
    );
    assert!(!project.path().join("Cargo.lock").exists());
}

#[test]
fn when_cargo_cannot_resolve_offline_a_registry_type_is_an_error_saying_why() {
    let project = registry_project();
    let manifest = project.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("Cargo.toml");
    // a dependency the vendored registry does not hold, as one not downloaded yet
    let text = text.replace(
        "[patch.crates-io]",
        "anchors = { version = \"0.1.0\", registry = \"fixtures\" }\n\n[patch.crates-io]",
    );
    std::fs::write(&manifest, text).expect("Cargo.toml");
    let err = manifests::generate(project.path(), &ManifestsOptions::default())
        .expect_err("cargo cannot resolve anchors offline")
        .to_string();
    assert!(
        err.starts_with("src/dock.rs:")
            && err.contains("`shared_api::Widget`")
            && err.contains("`cargo fetch`"),
        "{err}"
    );
}

#[test]
fn a_renamed_path_dependency_is_known_by_its_new_name_where_renamed() {
    let dir = tempfile::tempdir().expect("project");
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("directory");
        std::fs::write(path, text).expect("file");
    };
    copy_dir(
        &workspace().join("testdata/registry/kinds"),
        &dir.path().join("kinds"),
    );
    // no lock: only `cargo metadata --no-deps` runs. The project calls harbor-kinds
    // `moorings`; its path dependency `pier` calls it `berths`
    write(
        "Cargo.toml",
        "[package]\nname = \"quay\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dependencies]\nmoorings = { package = \"harbor-kinds\", path = \"kinds\" }\n\
         pier = { path = \"pier\" }\n\n[workspace]\n",
    );
    write(
        "pier/Cargo.toml",
        "[package]\nname = \"pier\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dependencies]\nberths = { package = \"harbor-kinds\", path = \"../kinds\" }\n",
    );
    write(
        "pier/src/lib.rs",
        "#[derive(Schema)]\npub struct Slip {\n    pub berth: berths::Berth,\n}\n",
    );
    let lib = "use operator_gen_runtime::prelude::*;\n\n\
         #[derive(CustomResource)]\n\
         #[k8s(group = \"harbor.example.com\", version = \"v1\", kind = \"Quay\")]\n\
         pub struct QuaySpec {\n    pub berth: moorings::Berth,\n    pub slip: pier::Slip,\n}\n";
    write("src/lib.rs", lib);
    let out = generate(dir.path());
    let spec = spec_schema(&out["config/crd/bases/harbor.example.com_quays.yaml"]);
    let berth = &spec["properties"]["berth"];
    assert_eq!(berth["properties"]["depthMeters"]["minimum"], 2);
    assert_eq!(spec["properties"]["slip"]["properties"]["berth"], *berth);
    // `berths` is pier's name for the crate, not the project's
    write("src/lib.rs", &lib.replace("moorings::", "berths::"));
    let err = manifests::generate(dir.path(), &ManifestsOptions::default())
        .expect_err("berths is no name of the project's")
        .to_string();
    assert!(
        err.starts_with("src/lib.rs:") && err.contains("`berths::Berth`"),
        "{err}"
    );
}

/// A project that is a member of an enclosing workspace, with no `[workspace]` and no path
/// dependency of its own: the workspace's `Cargo.lock`, two levels up, still leads `manifests`
/// to the registry crate (the fixture moved under a workspace root that holds its lock, patch
/// and registry config).
#[test]
fn a_member_of_an_enclosing_workspace_finds_the_workspace_lock() {
    let top = tempfile::tempdir().expect("workspace");
    let member = top.path().join("ops");
    copy_dir(&workspace().join("testdata/registry"), &member);
    let moved = |rel: &str, to: &Path| std::fs::rename(member.join(rel), to).expect(rel);
    moved("Cargo.lock", &top.path().join("Cargo.lock"));
    std::fs::create_dir_all(top.path().join(".cargo")).expect(".cargo");
    let config = std::fs::read_to_string(member.join(".cargo/config.toml")).expect("config");
    std::fs::write(
        top.path().join(".cargo/config.toml"),
        config.replace("directory = \"vendor\"", "directory = \"ops/vendor\""),
    )
    .expect("config");
    std::fs::remove_dir_all(member.join(".cargo")).expect(".cargo");
    std::fs::write(
        top.path().join("Cargo.toml"),
        "[workspace]\nmembers = [\"ops\"]\nresolver = \"3\"\n\n[patch.crates-io]\noperator-gen-runtime = { path = \"ops/runtime\" }\n",
    )
    .expect("Cargo.toml");
    // the member: the registry crate only, no path dependency, no workspace or patch of its own
    let manifest = std::fs::read_to_string(member.join("Cargo.toml")).expect("Cargo.toml");
    let manifest: String = manifest
        .lines()
        .filter(|l| {
            !(l.starts_with("berths")
                || l.starts_with("[workspace]")
                || l.starts_with("[patch.crates-io]")
                || l.starts_with("operator-gen-runtime = { path"))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!manifest.contains("path ="), "{manifest}");
    std::fs::write(member.join("Cargo.toml"), manifest).expect("Cargo.toml");
    let dock = std::fs::read_to_string(member.join("src/dock.rs")).expect("dock.rs");
    let dock = dock.replace(
        "    /// berth is where ships moor, from the renamed path dependency.\n    pub berth: berths::Berth,\n",
        "",
    );
    assert!(!dock.contains("berths"), "{dock}");
    std::fs::write(member.join("src/dock.rs"), dock).expect("dock.rs");
    let out = generate(&member);
    assert_eq!(keys(&out), [DOCKS, "config/rbac/role.yaml"]);
    let spec = spec_schema(&out[DOCKS]);
    let widget = &spec["properties"]["widget"];
    assert!(
        widget["properties"]["colour"]["enum"].is_array(),
        "the registry crate's Widget: {widget}"
    );
    assert!(!member.join("Cargo.lock").exists());
}
