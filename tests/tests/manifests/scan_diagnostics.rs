//! The source scan's diagnostics for the compile-fail ui cases: each `tests/ui/<case>.rs` goes
//! through `operator_gen::manifests::scan_source` (what `operator-gen manifests` runs, no compile) and
//! must fail with exactly one diagnostic, with the expected message, at the `line:col` the derive's
//! error has in `tests/ui/<case>.stderr`. Both paths report the same problem at the same place.

use operator_gen::manifests::scan_source;
use operator_gen_tests::workspace;
use std::path::Path;

/// case → the scan's message, exactly.
const CASES: &[(&str, &str)] = &[
    (
        "mixed_unit_enum",
        "enum `Source` mixes unit variants (strings on the wire) with data variants (objects): the apiserver needs one type, so give `Default` a field or tag the enum",
    ),
    (
        "unknown_marker",
        "unknown marker `+kubebuilder:validation:Minimun`: did you mean `+kubebuilder:validation:Minimum`?",
    ),
    (
        "field_marker_on_type",
        "marker `+optional` cannot stand on a type: put it on a field",
    ),
    (
        "type_marker_on_field",
        "marker `+kubebuilder:subresource:status` cannot stand on a field: put it on a type",
    ),
    (
        "root_doc_kind_marker",
        "marker `+kubebuilder:subresource:status` in #[k8s(doc)] has no effect on the root object's schema: put it on the spec struct's doc comment",
    ),
    (
        "malformed_value",
        "marker `+kubebuilder:validation:Minimum` expects a number, found `abc`",
    ),
    (
        "duplicate_argument",
        "marker `+kubebuilder:printcolumn` repeats argument `name`: give it once",
    ),
    (
        "duplicate_attribute_key",
        "#[k8s(minimum)] is given twice: give it once",
    ),
    (
        "unknown_attribute_key",
        "unknown key `min_lenght` in #[k8s(...)]: did you mean `min_length`?",
    ),
    (
        "bad_attribute_value_type",
        "#[k8s(min_length)]: `kubebuilder:validation:MinLength` expects an integer",
    ),
    (
        "missing_kind",
        "#[k8s(...)] on `FrigateSpec` needs `kind = \"...\"`",
    ),
    (
        "missing_k8s_attribute",
        "#[derive(CustomResource)] needs #[k8s(group = \"...\", version = \"...\", kind = \"...\")]",
    ),
    (
        "custom_resource_on_enum",
        "#[derive(CustomResource)] goes on the spec struct, a struct with named fields",
    ),
    (
        "generics",
        "`FrigateSpec` has type parameters: a schema needs concrete types, so write a struct without generics",
    ),
    ("union", "unions have no schema: use an enum"),
    (
        "tuple_struct",
        "tuple structs with more than one field have no object schema: name the fields",
    ),
    (
        "map_non_string_keys",
        "map keys must be strings: JSON objects have string keys, so use String",
    ),
    (
        "trait_object_field",
        "this type has no schema: use a named struct, a primitive, Vec, Option or a string-keyed map",
    ),
    (
        "tuple_field",
        "this type has no schema: use a named struct, a primitive, Vec, Option or a string-keyed map",
    ),
    (
        // rustc reports this one itself (E0562), so the derive stays silent; the scan cannot
        // rely on rustc and says it
        "impl_trait_field",
        "`impl Trait` is not allowed in a field type: name a concrete type that has a schema",
    ),
    (
        "no_effect_marker",
        "marker `+kubebuilder:object:root` has no effect in Rust: #[derive(CustomResource)] on the spec struct generates the root type and its list; drop the marker",
    ),
    (
        "cluster_client_on_namespaced_kind",
        "`+genclient:nonNamespaced` asks for a cluster-scoped client, but the kind is namespaced: add `+kubebuilder:resource:scope=Cluster` or drop the marker",
    ),
    (
        "schema_with_resource",
        "#[k8s(group, version, kind)] belongs with #[derive(CustomResource)]: derive it instead of Schema",
    ),
];

/// `line:col` of the first error in a trybuild `.stderr` file (`  --> ui/x.rs:6:5`).
fn stderr_location(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("--> "))
        .unwrap_or_else(|| panic!("no `-->` line in:\n{stderr}"));
    let mut parts = line.rsplitn(3, ':');
    let col = parts.next().unwrap_or_default();
    let row = parts.next().unwrap_or_default();
    format!("{row}:{col}")
}

#[test]
fn every_ui_case_has_a_scan_expectation() {
    let dir = workspace().join("tests/ui");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/ui")
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "rs").then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = CASES.iter().map(|(c, _)| c.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "tests/ui/*.rs and CASES differ");
}

#[test]
fn scan_reports_what_the_derive_reports() {
    let mut failures = Vec::new();
    for (case, message) in CASES {
        let dir = workspace().join("tests/ui");
        let source = std::fs::read_to_string(dir.join(format!("{case}.rs"))).expect("case source");
        let stderr =
            std::fs::read_to_string(dir.join(format!("{case}.stderr"))).expect("case stderr");
        let want = format!("ui/{case}.rs:{}: {message}", stderr_location(&stderr));
        let name = format!("ui/{case}.rs");
        let got: Vec<String> = match scan_source(Path::new(&name), &source) {
            Ok(_) => vec!["(no diagnostic)".to_string()],
            Err(diags) => diags.iter().map(ToString::to_string).collect(),
        };
        if got != [want.clone()] {
            failures.push(format!(
                "{case}:\n  want {want}\n  got  {}",
                got.join("\n       ")
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// syn parses recursively: nesting past the scan's limit is a diagnostic where the limit is
/// crossed, not a stack overflow, on any caller's stack (this test thread has 2 MiB).
#[test]
fn deep_nesting_is_a_diagnostic() {
    let depth = 100_000;
    let source = format!(
        "#[derive(Schema)]\npub struct Deep {{\n    pub x: {}String{},\n}}\n",
        "Vec<".repeat(depth),
        ">".repeat(depth)
    );
    let diags = scan_source(Path::new("src/lib.rs"), &source).expect_err("too deep");
    let got: Vec<String> = diags.iter().map(ToString::to_string).collect();
    // `{` of the struct is level 1; the `<` of the 128th `Vec<` opens level 129, 0-based
    // column 11 (`    pub x: `) + 127 * 4 + 3, shown 1-based
    assert_eq!(
        got,
        [format!(
            "src/lib.rs:3:{}: brackets nest more than {} levels deep: name the inner types or expressions",
            11 + 127 * 4 + 3 + 1,
            operator_gen::manifests::MAX_NESTING
        )]
    );
    // just under the limit still scans
    let ok = format!(
        "#[derive(Schema)]\npub struct Deep {{\n    pub x: {}String{},\n}}\n",
        "Vec<".repeat(120),
        ">".repeat(120)
    );
    assert!(scan_source(Path::new("src/lib.rs"), &ok).is_ok());
}

/// An untagged enum whose variants need two types (a string and an object) has no structural
/// schema: `operator-gen manifests` says so where the enum is declared, naming the variants.
#[test]
fn untagged_enum_without_one_type_is_a_located_diagnostic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(
        src.join("lib.rs"),
        r#"//! A kind with an untagged enum of a string and an object.

use operator_gen_runtime::prelude::*;

#[derive(CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug)]
#[k8s(group = "example.com", version = "v1", kind = "Gadget")]
pub struct GadgetSpec {
    pub source: Source,
}

#[derive(Schema, serde::Serialize, serde::Deserialize, Clone, Debug)]
#[serde(untagged)]
pub enum Source {
    Name(String),
    Spec { url: String },
}
"#,
    )
    .expect("write");
    let err = operator_gen::manifests::generate(
        dir.path(),
        &operator_gen::manifests::ManifestsOptions::default(),
    )
    .expect_err("no structural schema")
    .to_string();
    assert!(
        err.contains("src/lib.rs:13:")
            && err.contains(
                "untagged enum `Source` has no structural schema: its variants are object (`Spec`) and string (`Name`) on the wire"
            ),
        "{err}"
    );
}

/// An error found while emitting a schema names the file the offending type was read from: two
/// versions each define `FrigateStatus`, and only v2's has a float field.
#[test]
fn emission_errors_name_the_file_of_the_type_they_are_in() {
    let version = |v: &str, field: &str| {
        format!(
            "use operator_gen_runtime::prelude::*;\n\
             use serde::{{Deserialize, Serialize}};\n\
             \n\
             #[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n\
             #[k8s(group = \"ship.example.com\", version = \"{v}\", kind = \"Frigate\", status = \"FrigateStatus\")]\n\
             pub struct FrigateSpec {{\n    pub size: i32,\n}}\n\
             \n\
             #[derive(Schema, Serialize, Deserialize, Clone, Debug)]\n\
             pub struct FrigateStatus {{\n    pub {field},\n}}\n"
        )
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("src/lib.rs", "pub mod api;\n");
    write("src/api/mod.rs", "pub mod v1;\npub mod v2;\n");
    write("src/api/v1.rs", &version("v1", "ready: bool"));
    write("src/api/v2.rs", &version("v2", "speed: f64"));
    let opts = operator_gen::manifests::ManifestsOptions::default();
    let err = operator_gen::manifests::generate(root, &opts).expect_err("f64 needs a flag");
    let message = err.to_string();
    let line = message.lines().next().unwrap_or_default();
    let located = Path::new(line.split(':').next().unwrap_or_default());
    assert!(
        located.ends_with("src/api/v2.rs"),
        "the error names {} instead of src/api/v2.rs: {message}",
        located.display()
    );
    assert!(
        line.contains(":12:") && line.contains("--allow-dangerous-types"),
        "not at v2's float field (line 12): {message}"
    );
}

/// Unsigned integers need no `--allow-dangerous-types` (only floats do): controller-gen v0.21.0
/// writes `uint8`, `uint16` and `uint` as `integer` without a format, `uint32` and `uint64` as
/// formats `int32` and `int64`, and adds no `minimum`.
#[test]
fn unsigned_integers_are_accepted_as_controller_gen_writes_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(
        root.join("src/lib.rs"),
        "use operator_gen_runtime::prelude::*;\n\
         use serde::{Deserialize, Serialize};\n\
         \n\
         #[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n\
         #[k8s(group = \"ship.example.com\", version = \"v1\", kind = \"Frigate\")]\n\
         pub struct FrigateSpec {\n    pub a: u8,\n    pub b: u16,\n    pub c: usize,\n    \
         pub d: u32,\n    pub e: u64,\n}\n",
    )
    .expect("write");
    let opts = operator_gen::manifests::ManifestsOptions::default();
    let out = operator_gen::manifests::generate(root, &opts).expect("unsigned fields are allowed");
    let crd = out
        .iter()
        .find(|(name, _)| name.ends_with("ship.example.com_frigates.yaml"))
        .map(|(_, text)| text)
        .unwrap_or_else(|| panic!("no Frigate CRD among {:?}", out.keys()));
    let field = |name: &str, format: Option<&str>| {
        let pad = " ".repeat(16);
        match format {
            Some(f) => format!("              {name}:\n{pad}format: {f}\n{pad}type: integer\n"),
            None => format!("              {name}:\n{pad}type: integer\n"),
        }
    };
    for want in [
        field("a", None),
        field("b", None),
        field("c", None),
        field("d", Some("int32")),
        field("e", Some("int64")),
    ] {
        assert!(crd.contains(&want), "no\n{want}in\n{crd}");
    }
    assert!(!crd.contains("minimum"), "{crd}");
}
