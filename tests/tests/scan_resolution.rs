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
