//! The scaffolded controller's unit test seeds the fake API with the project's sample, and the
//! fake admits it as the apiserver would with the kind's CRD: in a generated project whose
//! `foo` field carries a `Pattern` and a CEL rule, `cargo test` of that unit test passes with a
//! valid sample and fails, naming the broken rule, with a sample that breaks either.

use std::path::Path;
use std::process::Command;

use operator_gen_tests::cli;
use operator_gen_tests::operator::{generated_output, operator_gen};

/// The markers given to the scaffolded `foo` field.
const MARKERS: &str = "    /// +kubebuilder:validation:Pattern=`^[a-z]+$`
    /// +kubebuilder:validation:XValidation:rule=\"self != 'forbidden'\",message=\"foo must not be forbidden\"
";

/// Adds [`MARKERS`] to the scaffolded `foo` field of `types`.
fn add_markers(types: &Path) {
    let source = std::fs::read_to_string(types).expect("read the types file");
    let field = "    /// +optional\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub foo: Option<String>,";
    assert!(
        source.contains(field),
        "the scaffold's foo field changed:\n{source}"
    );
    let marked = source.replace(field, &format!("{MARKERS}{field}"));
    std::fs::write(types, marked).expect("write the types file");
}

/// Writes the sample with `spec.foo: value`.
fn write_sample(sample: &Path, value: &str) {
    let text = std::fs::read_to_string(sample).expect("read the sample");
    let start = text.find("\nspec:").expect("the sample has a spec");
    let text = format!("{}\nspec:\n  foo: {value:?}\n", &text[..start]);
    std::fs::write(sample, text).expect("write the sample");
}

/// `cargo test` of the controller's unit test: whether it passed, and its output.
fn unit_test(dir: &Path) -> (bool, String) {
    let mut cargo = Command::new(cli::cargo());
    cargo
        .args(["test", "--lib", "--", "reconcile_adds_the_finalizer"])
        .current_dir(dir);
    let out = generated_output(&mut cargo).expect("run cargo test");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn the_scaffolded_unit_test_fails_on_a_sample_the_crd_refuses() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("admitted");
    std::fs::create_dir_all(&dir).expect("mkdir");
    operator_gen(&dir, "init --domain my.domain");
    operator_gen(&dir, "create api --group crew --version v1 --kind Captain");
    add_markers(&dir.join("src/api/v1/captain.rs"));
    let sample = dir.join("config/samples/crew_v1_captain.yaml");

    write_sample(&sample, "valid");
    let (passed, out) = unit_test(&dir);
    assert!(passed, "the valid sample fails the unit test:\n{out}");
    assert!(
        out.contains("reconcile_adds_the_finalizer_reports_ready_and_cleans_up ... ok"),
        "{out}"
    );

    for (value, says) in [
        ("Valid", "spec.foo in body should match '^[a-z]+$'"),
        (
            "forbidden",
            "spec.foo: Invalid value: \"forbidden\": foo must not be forbidden",
        ),
    ] {
        write_sample(&sample, value);
        let (passed, out) = unit_test(&dir);
        assert!(
            !passed,
            "a sample with foo {value:?} passes the unit test:\n{out}"
        );
        assert!(
            out.contains("the seeded object is refused") && out.contains(says),
            "the failure with foo {value:?} does not say {says:?}:\n{out}"
        );
    }
}
