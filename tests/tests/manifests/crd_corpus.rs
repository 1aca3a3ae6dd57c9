//! The differential on the world: every CRD of the corpus `hack/corpus/crds.sh` fetches (real
//! CRDs of public projects, pinned in `hack/corpus/crds.pins`) imported with
//! `create api --from-crd` into a new project, written back by `manifests`, and compared node by
//! node with the original (as `operator_gen_tests::crd_round_trip` compares). Every difference
//! and every refused import must be explained by a row of [`EXCEPTIONS`], and every row must
//! explain something; the test prints how many CRDs it compared and how many each row explains.
//! The corpus is a tool: without it the test skips outside CI and fails in CI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use operator_gen_tests::crd_round_trip::{Difference, Outcome, round_trip};
use operator_gen_tests::tools;
use serde_json::Value;

/// One explained difference: the CRDs it applies to (`project/file.yaml`, `project/*` or `*`),
/// a part of the JSON path of the difference (or `refused` for an import `create api` refuses),
/// a part of what differs (or of the error), and why.
struct Exception {
    crds: &'static str,
    path: &'static str,
    what: &'static str,
    reason: &'static str,
}

const EXCEPTIONS: &[Exception] = &[
    Exception {
        crds: "argo-workflows/*",
        path: "refused",
        what: "a list needs `items`",
        reason: "argo-workflows' full CRDs have lists with no `items` schema; no Rust type writes a list without one, so the import refuses it, naming the path",
    },
    Exception {
        crds: "*",
        path: "refused",
        what: "`allOf`",
        reason: "controller-gen writes `allOf` where two markers set one keyword differently; no marker writes an allOf, so the import refuses it, naming the path",
    },
    Exception {
        crds: "*",
        path: "refused",
        what: "`oneOf`",
        reason: "a hand-written `oneOf` (gateway-api, kyverno, on a field or on the spec itself); no marker writes it, so the import refuses it, naming the path",
    },
    Exception {
        crds: "kyverno/*",
        path: "refused",
        what: "`not`",
        reason: "a hand-written `not`; no marker writes it, so the import refuses it, naming the path",
    },
    Exception {
        crds: "external-snapshotter/*",
        path: "refused",
        what: "`x-kubernetes-int-or-string` without `anyOf",
        reason: "an int-or-string without the anyOf controller-gen writes beside it; no type writes one without the other",
    },
    Exception {
        crds: "karpenter/*",
        path: "refused",
        what: "needs a string field, but this one is array",
        reason: "`maxLength` and `pattern` on a list (the apiserver ignores them there); `manifests` refuses a string marker on a list field, as controller-gen refuses it",
    },
    Exception {
        crds: "gateway-api/*",
        path: "/description",
        what: "",
        reason: "gateway-api v1.3.0's descriptions were written by an older controller-gen, which kept the blank line a removed marker line leaves (`\\n\\n\\n`); a doc comment gives Go's comment text, which collapses runs of blank lines",
    },
    Exception {
        crds: "external-snapshotter/*",
        path: "/description",
        what: "",
        reason: "written by an older controller-gen: blank-line runs in descriptions (collapsed by Go's comment text), and root apiVersion/kind descriptions of its time, which the import writes as controller-gen v0.21.0 does",
    },
    Exception {
        crds: "*",
        path: "/status",
        what: "missing",
        reason: "an older controller-gen wrote an empty `status` (acceptedNames, conditions, storedVersions) into the CRD file; `manifests` writes none",
    },
    Exception {
        crds: "*",
        path: "/metadata/creationTimestamp",
        what: "missing",
        reason: "an older controller-gen wrote `creationTimestamp: null`; `manifests` writes none",
    },
    Exception {
        crds: "argo-workflows/*",
        path: "/description",
        what: "added",
        reason: "argo-workflows' CRDs give the root's apiVersion and kind no description; `manifests` writes controller-gen's",
    },
    Exception {
        crds: "external-snapshotter/*",
        path: "/properties/metadata",
        what: "added",
        reason: "a CRD whose root has no `metadata` property; `manifests` writes `metadata: {type: object}` as controller-gen does",
    },
    Exception {
        crds: "katib/*",
        path: "/spec/names/listKind",
        what: "added",
        reason: "katib's CRDs name no listKind (the apiserver defaults it to <Kind>List); `manifests` writes it",
    },
    Exception {
        crds: "katib/*",
        path: "/x-kubernetes-preserve-unknown-fields",
        what: "missing",
        reason: "katib's roots are schemaless (`x-kubernetes-preserve-unknown-fields` on the root, no properties); no marker stands on the root object for it",
    },
    Exception {
        crds: "katib/*",
        path: "/openAPIV3Schema/properties",
        what: "added",
        reason: "katib's roots have no properties; `manifests` writes the root's apiVersion, kind, metadata and the empty spec and status",
    },
];

fn corpus() -> Option<PathBuf> {
    let cache = std::env::var_os("OPERATOR_GEN_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/operator-gen"))
        })?;
    let dir = cache.join("corpus/crds");
    if dir.join(".stamp").is_file() {
        return Some(dir);
    }
    tools::skip_or_fail(
        &format!(
            "{} is absent: the CRD corpus was not round-tripped",
            dir.display()
        ),
        "bash hack/corpus/crds.sh",
    );
    None
}

/// Each CRD document of the corpus: `project/file.yaml` (with `#N` for the Nth of a file of
/// several), its text and its value.
fn documents(dir: &Path) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    let mut projects: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    projects.sort();
    for project in projects {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&project)
            .expect("read project")
            .map(|e| e.expect("entry").path())
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("read crd");
            let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let docs: Vec<Value> = docs
                .into_iter()
                .filter(|d| {
                    d.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
                })
                .collect();
            let name = format!(
                "{}/{}",
                project.file_name().expect("name").to_string_lossy(),
                file.file_name().expect("name").to_string_lossy()
            );
            let several = docs.len() > 1;
            for (i, doc) in docs.into_iter().enumerate() {
                let text = if several {
                    serde_json::to_string(&doc).expect("json")
                } else {
                    text.clone()
                };
                let id = if several {
                    format!("{name}#{i}")
                } else {
                    name.clone()
                };
                out.push((id, text, doc));
            }
        }
    }
    out
}

fn applies(pattern: &str, crd: &str) -> bool {
    pattern == "*"
        || pattern == crd
        || pattern
            .strip_suffix('*')
            .is_some_and(|p| crd.starts_with(p))
}

#[test]
fn corpus_crds_come_back_node_for_node_or_are_explained() {
    let Some(dir) = corpus() else { return };
    let docs = documents(&dir);
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut used = vec![0usize; EXCEPTIONS.len()];
    let mut unexplained: Vec<String> = Vec::new();
    let mut equal = 0;
    let mut refused = 0;
    let mut projects = std::collections::BTreeSet::new();
    for (i, (id, text, crd)) in docs.iter().enumerate() {
        projects.insert(id.split('/').next().unwrap_or_default().to_string());
        let diffs: Vec<Difference> =
            match round_trip(text, crd, &tmp.path().join(format!("c{i}")), &[]) {
                Outcome::Compared(d) => d,
                Outcome::Failed { step, error } => {
                    refused += 1;
                    vec![Difference {
                        path: "refused".into(),
                        what: format!("`{step}`: {error}"),
                    }]
                }
            };
        let _ = std::fs::remove_dir_all(tmp.path().join(format!("c{i}")));
        if diffs.is_empty() {
            equal += 1;
        }
        for d in diffs {
            let row = EXCEPTIONS.iter().position(|e| {
                applies(e.crds, id) && d.path.contains(e.path) && d.what.contains(e.what)
            });
            match row {
                Some(r) => used[r] += 1,
                None => unexplained.push(format!("{id} {} {}", d.path, d.what)),
            }
        }
    }
    eprintln!(
        "crd_corpus: compared {} CRDs from {} projects: {equal} equal node for node, {refused} refused by create api --from-crd",
        docs.len(),
        projects.len()
    );
    for (e, n) in EXCEPTIONS.iter().zip(&used) {
        eprintln!(
            "crd_corpus: {n:>4} x [{} {} {}] {}",
            e.crds, e.path, e.what, e.reason
        );
    }
    let mut by_path: BTreeMap<String, usize> = BTreeMap::new();
    for u in &unexplained {
        *by_path.entry(u.chars().take(300).collect()).or_default() += 1;
    }
    let unused: Vec<String> = EXCEPTIONS
        .iter()
        .zip(&used)
        .filter(|(_, n)| **n == 0)
        .map(|(e, _)| format!("[{} {} {}]", e.crds, e.path, e.what))
        .collect();
    assert!(
        docs.len() >= 200,
        "the corpus holds {} CRDs, fewer than 200: check hack/corpus/crds.pins",
        docs.len()
    );
    assert!(
        unexplained.is_empty(),
        "{} unexplained differences:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    assert!(
        unused.is_empty(),
        "exception rows that explain nothing (drop them): {}",
        unused.join(", ")
    );
}
