//! The source scan resolves types the way rustc does across a crate's modules: `crate::`,
//! `super::`, `self::`, renamed and glob `use`, `mod.rs` and `#[path]` files, inline modules.

use operator_gen::manifests::{self, ManifestsOptions};
use std::path::Path;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

const HEAD: &str = "use operator_gen_runtime::prelude::*;\nuse serde::{Deserialize, Serialize};\n";

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "PROJECT", "version: \"3\"\n");
    write(
        root,
        "src/lib.rs",
        "pub mod api;\npub mod shared;\n#[path = \"elsewhere/extra.rs\"]\npub mod extra;\n",
    );
    write(root, "src/api/mod.rs", "pub mod v1;\n");
    write(
        root,
        "src/api/v1/mod.rs",
        &format!(
            "{HEAD}pub mod kinds;\n\n#[derive(Schema, Serialize, Deserialize, Clone, Debug)]\npub struct Local {{ pub local: String }}\n"
        ),
    );
    write(
        root,
        "src/api/v1/kinds.rs",
        &format!(
            "{HEAD}use crate::shared::Shared;\nuse crate::extra::Extra as Renamed;\nuse super::*;\nuse self::inner::Inner;\n\n\
             #[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n\
             #[k8s(group = \"resolve.example.com\", version = \"v1\", kind = \"Thing\")]\n\
             pub struct ThingSpec {{\n    pub a: Shared,\n    pub b: Renamed,\n    pub c: Local,\n    pub d: Inner,\n    pub e: super::super::super::shared::deep::Deep,\n}}\n\n\
             pub mod inner {{\n    {HEAD}\n    #[derive(Schema, Serialize, Deserialize, Clone, Debug)]\n    pub struct Inner {{ pub inner: bool }}\n}}\n"
        ),
    );
    write(
        root,
        "src/shared/mod.rs",
        &format!(
            "{HEAD}pub mod deep;\n\n#[derive(Schema, Serialize, Deserialize, Clone, Debug)]\npub struct Shared {{ pub shared: i32 }}\n"
        ),
    );
    write(
        root,
        "src/shared/deep.rs",
        &format!(
            "{HEAD}#[derive(Schema, Serialize, Deserialize, Clone, Debug)]\npub struct Deep {{ pub deep: i64 }}\n"
        ),
    );
    write(
        root,
        "src/elsewhere/extra.rs",
        &format!(
            "{HEAD}#[derive(Schema, Serialize, Deserialize, Clone, Debug)]\npub struct Extra {{ pub extra: String }}\n"
        ),
    );
    dir
}

#[test]
fn every_kind_of_path_resolves() {
    let dir = project();
    let outputs = manifests::generate(dir.path(), &ManifestsOptions::default()).expect("manifests");
    let crd = &outputs["config/crd/bases/resolve.example.com_things.yaml"];
    for (field, property, ty) in [
        ("a", "shared", "integer"),
        ("b", "extra", "string"),
        ("c", "local", "string"),
        ("d", "inner", "boolean"),
        ("e", "deep", "integer"),
    ] {
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(crd).expect("yaml");
        let spec =
            &docs[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(
            spec["properties"][field]["properties"][property]["type"], ty,
            "{field}: {crd}"
        );
    }
}

#[test]
fn an_unresolvable_type_is_a_located_error() {
    let dir = project();
    let kinds = dir.path().join("src/api/v1/kinds.rs");
    let text = std::fs::read_to_string(&kinds)
        .expect("read")
        .replace("pub a: Shared", "pub a: Missing");
    std::fs::write(&kinds, text).expect("write");
    let err = manifests::generate(dir.path(), &ManifestsOptions::default())
        .expect_err("unresolved")
        .to_string();
    assert!(err.starts_with("src/api/v1/kinds.rs:"), "{err}");
    assert!(
        err.contains(
            "`Missing` has no schema: add #[derive(Schema)] to it, or import it with `use`"
        ),
        "{err}"
    );
}

/// `testdata/paths`: this crate's own `Condition`, `Volume`, `Container`, `Time` and `Value`
/// keep their schemas; Kubernetes types reached through a rename, a module alias, a `pub use`
/// re-export, a glob, a full path and the prelude get the built-in ones.
#[test]
fn types_are_known_by_full_path_never_by_last_segment() {
    let root = operator_gen_tests::workspace().join("testdata/paths");
    let outputs = manifests::generate(&root, &ManifestsOptions::default()).expect("manifests");
    let crd = &outputs["config/crd/bases/paths.example.com_lookups.yaml"];
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(crd).expect("yaml");
    let spec = &docs[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    let own = |field: &str, property: &str| {
        assert!(
            spec[field]["properties"][property].is_object(),
            "{field} should be this crate's type with property {property}: {}",
            spec[field]
        );
    };
    own("condition", "healthy");
    own("volume", "size_gb");
    own("container", "image_ref");
    own("value", "amount");
    assert_eq!(
        spec["time"]["type"], "string",
        "this crate's Time is a newtype over String"
    );
    assert_eq!(
        spec["time"]["description"],
        "A time of day of this crate, as \"HH:MM\"."
    );
    assert!(spec["time"].get("format").is_none(), "{}", spec["time"]);

    // Kubernetes' own, with their field docs or else the type's description
    assert_eq!(
        spec["kubeCondition"]["description"],
        "Kubernetes' condition, renamed."
    );
    assert_eq!(
        spec["kubeCondition"]["properties"]["lastTransitionTime"]["format"],
        "date-time"
    );
    assert_eq!(
        spec["kubeVolume"]["properties"]["configMap"]["x-kubernetes-map-type"],
        "atomic"
    );
    assert_eq!(
        spec["kubeContainer"]["description"],
        "A single application container that you want to run within a pod."
    );
    assert_eq!(
        spec["kubeContainer"]["properties"]["ports"]["x-kubernetes-list-type"],
        "map"
    );
    assert_eq!(spec["kubeTime"]["format"], "date-time");
    assert_eq!(
        spec["kubeValue"]["x-kubernetes-preserve-unknown-fields"],
        true
    );
    assert_eq!(spec["quantity"]["x-kubernetes-int-or-string"], true);
    assert_eq!(spec["objectMeta"], serde_json::json!({"type": "object"}));
    let networking = &spec["networking"]["properties"];
    assert_eq!(
        networking["ingress"]["description"],
        "The ingress to expose."
    );
    assert!(networking["ingress"]["properties"]["rules"].is_object());
    assert_eq!(
        networking["policy"]["description"],
        "NetworkPolicySpec provides the specification of a NetworkPolicy"
    );
}

/// A path into k8s-openapi the table does not have is an error naming it and the release.
#[test]
fn a_kubernetes_type_missing_from_the_table_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        &format!(
            "{HEAD}\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n\
             #[k8s(group = \"missing.example.com\", version = \"v1\", kind = \"Gap\")]\n\
             pub struct GapSpec {{\n    pub x: k8s_openapi::api::core::v1::NoSuchSpec,\n}}\n"
        ),
    );
    let err = manifests::generate(root, &ManifestsOptions::default())
        .expect_err("an unknown Kubernetes type fails");
    let text = format!("{err}");
    assert!(
        text.contains("`k8s_openapi::api::core::v1::NoSuchSpec` is not in operator-gen's table of Kubernetes 1.37"),
        "{text}"
    );
}

/// As controller-gen writes descriptions: a field without its own doc takes its type's doc, for
/// this crate's types and Kubernetes types alike (list items too); a field doc replaces it.
#[test]
fn a_field_without_doc_takes_its_types_description() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "PROJECT", "version: \"3\"\n");
    write(
        root,
        "src/lib.rs",
        &format!(
            "{HEAD}\n/// Inner holds one string.\n#[derive(Schema, Serialize, Deserialize, Clone, Debug)]\n\
             pub struct Inner {{ pub x: String }}\n\n\
             /// Label is a name of this crate.\n#[derive(Schema, Serialize, Deserialize, Clone, Debug)]\n\
             pub struct Label(pub String);\n\n\
             #[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n\
             #[k8s(group = \"docs.example.com\", version = \"v1\", kind = \"Doc\")]\n\
             pub struct DocSpec {{\n    pub plain: Inner,\n    /// Its own doc.\n    pub documented: Inner,\n\
             pub labels: Vec<Label>,\n    pub affinity: Option<k8s_openapi::api::core::v1::Affinity>,\n\
             /// Where pods go.\n    pub placed: Option<k8s_openapi::api::core::v1::Affinity>,\n}}\n"
        ),
    );
    let outputs = manifests::generate(root, &ManifestsOptions::default()).expect("manifests");
    let crd = &outputs["config/crd/bases/docs.example.com_docs.yaml"];
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(crd).expect("yaml");
    let spec = &docs[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(spec["plain"]["description"], "Inner holds one string.");
    assert_eq!(spec["documented"]["description"], "Its own doc.");
    assert!(
        spec["labels"].get("description").is_none(),
        "{}",
        spec["labels"]
    );
    assert_eq!(
        spec["labels"]["items"]["description"],
        "Label is a name of this crate."
    );
    assert_eq!(
        spec["affinity"]["description"],
        "Affinity is a group of affinity scheduling rules."
    );
    assert_eq!(spec["placed"]["description"], "Where pods go.");
}

/// A Kubernetes type that contains itself (Kubernetes 1.37's `CompositePodGroupTemplate`) is an
/// error located at the field that names it, not at a file the user cannot see.
#[test]
fn a_recursive_kubernetes_type_is_an_error_at_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        &format!(
            "{HEAD}\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n\
             #[k8s(group = \"loop.example.com\", version = \"v1\", kind = \"Loop\")]\n\
             pub struct LoopSpec {{\n    pub template: k8s_openapi::api::scheduling::v1alpha3::CompositePodGroupTemplate,\n}}\n"
        ),
    );
    let err = manifests::generate(root, &ManifestsOptions::default())
        .expect_err("a recursive Kubernetes type fails");
    let text = format!("{err}");
    assert!(
        text.contains("src/lib.rs:7:9: `k8s_openapi::api::scheduling::v1alpha3::CompositePodGroupTemplate` contains itself"),
        "{text}"
    );
}

/// A flattened struct defined in other modules (two levels, through `use` and a `super::`
/// path) carries its type-level markers to the struct that flattens it, as controller-gen
/// carries an embedded struct's: the embedding struct's own rule first, then the flattened
/// ones, the deepest last; a `MinProperties` both set is kept as `allOf` of both.
#[test]
fn a_flattened_struct_from_another_module_carries_its_markers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "PROJECT", "version: \"3\"\n");
    write(root, "src/lib.rs", "pub mod api;\npub mod common;\n");
    write(
        root,
        "src/common/mod.rs",
        &format!(
            "{HEAD}pub mod base;\n\n/// +kubebuilder:validation:XValidation:rule=\"self.mid > 0\"\n\
             /// +kubebuilder:validation:MinProperties=2\n\
             #[derive(Schema, Serialize, Deserialize, Clone, Debug)]\n\
             pub struct Mid {{\n    #[serde(flatten)]\n    pub base: base::Base,\n    pub mid: i32,\n}}\n"
        ),
    );
    write(
        root,
        "src/common/base.rs",
        &format!(
            "{HEAD}/// +kubebuilder:validation:XValidation:rule=\"self.base > 0\"\n\
             /// +kubebuilder:validation:MinProperties=1\n\
             /// +kubebuilder:validation:MaxProperties=4\n\
             #[derive(Schema, Serialize, Deserialize, Clone, Debug)]\n\
             pub struct Base {{ pub base: i32 }}\n"
        ),
    );
    write(
        root,
        "src/api/mod.rs",
        &format!(
            "{HEAD}use crate::common::Mid;\n\n\
             /// +kubebuilder:validation:XValidation:rule=\"self.own > 0\"\n\
             #[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n\
             #[k8s(group = \"flat.example.com\", version = \"v1\", kind = \"Flat\")]\n\
             pub struct FlatSpec {{\n    pub own: i32,\n    #[serde(flatten)]\n    pub mid: Mid,\n}}\n"
        ),
    );
    let outputs = manifests::generate(root, &ManifestsOptions::default()).expect("manifests");
    let crd = &outputs["config/crd/bases/flat.example.com_flats.yaml"];
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(crd).expect("yaml");
    let spec = &docs[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let rules: Vec<&str> = spec["x-kubernetes-validations"]
        .as_array()
        .unwrap_or_else(|| panic!("no rules: {crd}"))
        .iter()
        .filter_map(|r| r["rule"].as_str())
        .collect();
    assert_eq!(
        rules,
        ["self.own > 0", "self.mid > 0", "self.base > 0"],
        "{crd}"
    );
    assert_eq!(
        spec["allOf"],
        serde_json::json!([{"minProperties": 1}, {"minProperties": 2}]),
        "{crd}"
    );
    assert_eq!(spec["maxProperties"], 4, "{crd}");
    assert_eq!(
        spec["required"],
        serde_json::json!(["base", "mid", "own"]),
        "{crd}"
    );
}
