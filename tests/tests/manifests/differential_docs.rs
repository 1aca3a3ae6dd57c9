//! Doc text and defaults against controller-gen, generated: a Go API package and its Rust twin,
//! written by this test from one list, with a field for every sequence of one to three doc
//! lines drawn from the forms Go's comment text and controller-gen treat specially (blank lines,
//! marker lines, trailing spaces and tabs, whitespace-only lines, indentation, `TODO`, `---`,
//! code fences), and a string field defaulted (`+kubebuilder:default="..."`) to each string a
//! YAML reader could take for another type. controller-gen v0.21.0 judges the Go side;
//! `operator-gen manifests` answers for the Rust side. Each field's `description` and `default`
//! must be equal; read back by a YAML 1.1 and a 1.2 reader, operator-gen's file must give each
//! default as its string, and so must controller-gen's but for the rows of `READ_EXCEPTIONS`.
//! The test prints how many fields it compared.

use operator_gen::manifests::{self, ManifestsOptions};
use operator_gen_tests::{cli, normalized_documents, tools};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// The doc lines each field's doc is drawn from, as written after `// ` and `/// `.
const LINES: &[&str] = &[
    "",
    "+optional",
    "Text a.",
    "Trailing spaces.   ",
    "Trailing tab.\t",
    "   ",
    "  Indented two.",
    "TODO: later.",
    "---",
    "```",
];

/// Every sequence of one to three of [`LINES`].
fn docs() -> Vec<Vec<&'static str>> {
    let mut out: Vec<Vec<&str>> = LINES.iter().map(|l| vec![*l]).collect();
    for _ in 0..2 {
        let longer: Vec<Vec<&str>> = out
            .iter()
            .filter(|d| d.len() == out.last().map_or(0, Vec::len))
            .flat_map(|d| {
                LINES.iter().map(move |l| {
                    let mut d = d.clone();
                    d.push(l);
                    d
                })
            })
            .collect();
        out.extend(longer);
    }
    out
}

/// Strings defaults are given as: each a YAML 1.1 or 1.2 reader could take for another type,
/// and look-alikes that are strings to both. None holds `"` or `\`, which a marker's quoted
/// string would need escaped.
const DEFAULTS: &[&str] = &[
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "N",
    "true",
    "False",
    "null",
    "~",
    "",
    "0777",
    "0o17",
    "0x1F",
    "0b101",
    "1_000",
    "1:20",
    "190:20:30.15",
    "1e3",
    ".inf",
    "-.Inf",
    ".nan",
    "+12",
    "-0",
    "2001-12-14",
    "2001-12-14T21:59:43Z",
    "1970-01-01T00:00:00Z",
    "2001-12-14 21:59:43.10 -5",
    "=",
    "<<",
    "v1",
    "1.2.3",
    "a: b",
    "#x",
    "- a",
    "forty-two",
    " lead",
    "trail ",
];

/// Defaults controller-gen writes plain where a YAML reader takes them for something else, so
/// that reading its file back does not give the string; operator-gen quotes each, and its file
/// gives the string to both readers. A row whose default reads back as the string from
/// controller-gen's file fails the test.
const READ_EXCEPTIONS: &[(&str, &str)] = &[
    (
        "2001-12-14 21:59:43.10 -5",
        "a YAML 1.1 timestamp (spaces before the zone), which go-yaml writes plain; both Python readers read a datetime",
    ),
    (
        "=",
        "YAML 1.1's value key; go-yaml writes it plain, both Python readers resolve it to the value tag",
    ),
    (
        "<<",
        "YAML 1.1's merge key; go-yaml writes it plain, both Python readers resolve it to the merge tag",
    ),
];

fn go_comment(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|l| {
            if l.is_empty() {
                "\t//\n".to_string()
            } else {
                format!("\t// {l}\n")
            }
        })
        .collect()
}

fn rust_doc(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|l| {
            if l.is_empty() {
                "    ///\n".to_string()
            } else {
                format!("    /// {l}\n")
            }
        })
        .collect()
}

/// The Go package (`types.go`) and the Rust module, from one list.
fn sources(docs: &[Vec<&str>]) -> (String, String) {
    let mut go = String::from(
        "package v1\n\nimport metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
         // DocsTwinSpec holds the generated fields.\ntype DocsTwinSpec struct {\n",
    );
    let mut rust = String::from(
        "use operator_gen_runtime::prelude::*;\nuse serde::{Deserialize, Serialize};\n\n\
         /// DocsTwinSpec holds the generated fields.\n\
         #[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n\
         #[k8s(group = \"twins.operator-gen.io\", version = \"v1\", kind = \"DocsTwin\")]\n\
         pub struct DocsTwinSpec {\n",
    );
    for (i, doc) in docs.iter().enumerate() {
        let _ = writeln!(
            go,
            "{}\tD{i} *string `json:\"d{i},omitempty\"`",
            go_comment(doc)
        );
        let _ = write!(
            rust,
            "{}    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub d{i}: Option<String>,\n",
            rust_doc(doc)
        );
    }
    for (i, value) in DEFAULTS.iter().enumerate() {
        let marker = format!("+kubebuilder:default=\"{value}\"");
        let _ = write!(
            go,
            "\t// {marker}\n\tV{i} string `json:\"v{i},omitempty\"`\n"
        );
        let _ = write!(
            rust,
            "    /// {marker}\n    #[serde(default)]\n    pub v{i}: String,\n"
        );
    }
    go.push_str(
        "}\n\n// +kubebuilder:object:root=true\n\n// DocsTwin is the kind.\ntype DocsTwin struct {\n\
         \tmetav1.TypeMeta   `json:\",inline\"`\n\tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\
         \tSpec DocsTwinSpec `json:\"spec,omitempty\"`\n}\n\n// +kubebuilder:object:root=true\n\n\
         // DocsTwinList is a list of DocsTwin.\ntype DocsTwinList struct {\n\
         \tmetav1.TypeMeta `json:\",inline\"`\n\tmetav1.ListMeta `json:\"metadata,omitempty\"`\n\
         \tItems []DocsTwin `json:\"items\"`\n}\n",
    );
    rust.push_str("}\n");
    (go, rust)
}

/// controller-gen's CRD for the Go package, and its file's text.
fn controller_gen(controller_gen: &Path, go: &str, dir: &Path) -> String {
    let twins = cli::workspace_root().join("testdata/differential/go");
    let api = dir.join("api/v1");
    std::fs::create_dir_all(&api).expect("mkdir");
    for file in ["go.mod", "go.sum"] {
        std::fs::copy(twins.join(file), dir.join(file)).expect("copy go.mod");
    }
    std::fs::copy(
        twins.join("api/v1/groupversion_info.go"),
        api.join("groupversion_info.go"),
    )
    .expect("copy groupversion_info.go");
    std::fs::write(api.join("docstwin_types.go"), go).expect("write Go");
    let out = dir.join("crds");
    let status = tools::offline_go(&mut Command::new(controller_gen))
        .current_dir(dir)
        .arg("crd")
        .arg("paths=./...")
        .arg(format!("output:crd:dir={}", out.display()))
        .status()
        .expect("controller-gen runs");
    assert!(
        status.success(),
        "controller-gen failed on the generated package"
    );
    std::fs::read_to_string(out.join("twins.operator-gen.io_docstwins.yaml"))
        .expect("controller-gen's CRD")
}

/// `operator-gen manifests`' CRD for the Rust module, and its file's text.
fn operator_gen(rust: &str, dir: &Path) -> String {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("lib.rs"), "pub mod docstwin;\n").expect("lib.rs");
    std::fs::write(src.join("docstwin.rs"), rust).expect("write Rust");
    let outputs =
        manifests::generate(dir, &ManifestsOptions::default()).expect("manifests succeeds");
    outputs
        .into_iter()
        .find(|(f, _)| f.ends_with("twins.operator-gen.io_docstwins.yaml"))
        .map(|(_, text)| text)
        .expect("manifests writes the DocsTwin CRD")
}

const SPEC: &str = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties";

#[test]
fn doc_text_and_defaults_match_controller_gen() {
    let Some(peer) = tools::go_tool("controller-gen") else {
        return;
    };
    if !tools::go_available("controller-gen cannot load the generated Go package") {
        return;
    }
    let docs = docs();
    let (go, rust) = sources(&docs);
    let tmp = tempfile::tempdir().expect("temp dir");
    let theirs = controller_gen(&peer, &go, &tmp.path().join("go"));
    tools::record_ran(tools::Ran::GoPeers);
    let ours = operator_gen(&rust, &tmp.path().join("rust"));
    let (a, b) = (
        normalized_documents(&theirs).remove(0),
        normalized_documents(&ours).remove(0),
    );
    let mut wrong = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        let name = format!("d{i}");
        let (x, y) = (
            &a.pointer(&format!("{SPEC}/{name}/description")),
            &b.pointer(&format!("{SPEC}/{name}/description")),
        );
        if x != y {
            wrong.push(format!(
                "doc {doc:?}: controller-gen {x:?}, operator-gen {y:?}"
            ));
        }
    }
    for (i, value) in DEFAULTS.iter().enumerate() {
        let pointer = format!("{SPEC}/v{i}/default");
        let (x, y) = (a.pointer(&pointer), b.pointer(&pointer));
        if x != y || x != Some(&Value::String(value.to_string())) {
            wrong.push(format!(
                "default {value:?}: controller-gen {x:?}, operator-gen {y:?}"
            ));
        }
    }
    // the defaults as YAML 1.1 and 1.2 readers take them from each file: from operator-gen's,
    // always the string; from controller-gen's, the string but for the exceptions
    let (theirs_file, ours_file) = (tmp.path().join("theirs.yaml"), tmp.path().join("ours.yaml"));
    std::fs::write(&theirs_file, &theirs).expect("write");
    std::fs::write(&ours_file, &ours).expect("write");
    let read = tools::yaml_readers(&[&theirs_file, &ours_file]);
    if let Some((one_one, one_two)) = &read {
        for (version, docs) in [("1.1", one_one), ("1.2", one_two)] {
            for (i, value) in DEFAULTS.iter().enumerate() {
                let pointer = format!("{SPEC}/v{i}/default");
                let (x, y) = (docs[0].pointer(&pointer), docs[1].pointer(&pointer));
                let want = Value::String(value.to_string());
                if y != Some(&want) {
                    wrong.push(format!(
                        "default {value:?} read by YAML {version} from operator-gen's file: {y:?}"
                    ));
                }
                let excused = READ_EXCEPTIONS.iter().any(|(v, _)| v == value);
                if (x == Some(&want)) == excused {
                    wrong.push(format!(
                        "default {value:?} read by YAML {version} from controller-gen's file: {x:?}{}",
                        if excused { ", no longer an exception: remove its row" } else { "" }
                    ));
                }
            }
        }
    }
    for (value, reason) in READ_EXCEPTIONS {
        println!(
            "exception: controller-gen's default {value:?} does not read back as itself: {reason}"
        );
    }
    println!(
        "differential docs: {} doc texts and {} defaults compared with controller-gen{}",
        docs.len(),
        DEFAULTS.len(),
        if read.is_some() {
            ", the defaults also as YAML 1.1 and 1.2 readers read both files"
        } else {
            ""
        }
    );
    assert!(
        wrong.is_empty(),
        "{} differences:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
