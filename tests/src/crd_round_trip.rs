//! A CRD through `create api --from-crd` and `manifests` in a scratch project, and the
//! node-by-node differences between the CRD and what `manifests` writes back.
//!
//! Compared: `apiVersion`, `kind`, `metadata.name`, `metadata.labels`,
//! `metadata.annotations` but the generator annotations ([`crate::VERSION_ANNOTATIONS`]),
//! every other key of `metadata`, `spec` whole (its versions matched by name, their order a
//! difference of its own) and `status`. Numbers are equal when their values are (`1` and
//! `1.0`); nothing else is normalised.

use std::path::Path;

use serde_json::Value;

use crate::cli;

/// One difference: where (a JSON path whose versions are named, `/spec/versions[v1]/...`) and
/// what.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub path: String,
    pub what: String,
}

/// How a round trip ended.
#[derive(Debug)]
pub enum Outcome {
    /// `manifests` wrote the CRD; its differences (none when equal).
    Compared(Vec<Difference>),
    /// A command failed: which, and its error.
    Failed { step: String, error: String },
}

/// The group a scratch project uses for `api_group`: its first label, under the domain of the
/// rest (`cert-manager.io`: group `cert-manager`, domain `io`).
pub fn group_and_domain(api_group: &str) -> Option<(&str, &str)> {
    api_group.split_once('.')
}

/// Imports `crd` (one CRD document, as text) into a new project in `dir` with the given extra
/// `create api` flags, runs `manifests`, and compares.
pub fn round_trip(crd_text: &str, crd: &Value, dir: &Path, create_flags: &[&str]) -> Outcome {
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let plural = crd
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some((_, domain)) = group_and_domain(group) else {
        return Outcome::Failed {
            step: "init".into(),
            error: format!("group {group:?} has no domain part"),
        };
    };
    std::fs::create_dir_all(dir).expect("mkdir scratch");
    std::fs::write(dir.join("crd.yaml"), crd_text).expect("write crd");
    let mut steps: Vec<Vec<String>> = vec![
        vec![
            "init".into(),
            "--domain".into(),
            domain.into(),
            "--project-name".into(),
            "demo".into(),
        ],
        [
            "create",
            "api",
            "--from-crd",
            "crd.yaml",
            "--controller=false",
        ]
        .iter()
        .chain(create_flags)
        .map(|s| s.to_string())
        .collect(),
        vec!["manifests".into(), "--allow-dangerous-types".into()],
    ];
    for args in steps.drain(..) {
        let out = cli::run(dir, &args);
        if out.code != 0 {
            let error = out
                .stderr
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or_default()
                .to_string();
            return Outcome::Failed {
                step: args[..2.min(args.len())].join(" "),
                error,
            };
        }
    }
    let file = dir.join(format!("config/crd/bases/{group}_{plural}.yaml"));
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Outcome::Failed {
            step: "manifests".into(),
            error: format!("wrote no {}", file.display()),
        };
    };
    let written: Value = match serde_saphyr::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            return Outcome::Failed {
                step: "manifests".into(),
                error: format!("wrote YAML that does not parse: {e}"),
            };
        }
    };
    Outcome::Compared(differences(crd, &written))
}

/// Every difference between `original` and `written`, as the module's doc says.
pub fn differences(original: &Value, written: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    let (mut a, mut b) = (original.clone(), written.clone());
    crate::remove_generator_annotation(&mut a);
    crate::remove_generator_annotation(&mut b);
    let versions_a = take_versions(&mut a);
    let versions_b = take_versions(&mut b);
    diff(&a, &b, "", &mut out);
    let names = |v: &[Value]| -> Vec<String> {
        v.iter()
            .map(|x| {
                x.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    let (na, nb) = (names(&versions_a), names(&versions_b));
    let mut sorted_a = na.clone();
    sorted_a.sort();
    let mut sorted_b = nb.clone();
    sorted_b.sort();
    if na != nb && sorted_a == sorted_b {
        out.push(Difference {
            path: "/spec/versions".into(),
            what: format!("order {} != {}", na.join(","), nb.join(",")),
        });
    }
    for (name, va) in na.iter().zip(&versions_a) {
        let path = format!("/spec/versions[{name}]");
        match nb.iter().position(|n| n == name) {
            Some(i) => diff(va, &versions_b[i], &path, &mut out),
            None => out.push(Difference {
                path,
                what: "missing".into(),
            }),
        }
    }
    for name in nb.iter().filter(|n| !na.contains(n)) {
        out.push(Difference {
            path: format!("/spec/versions[{name}]"),
            what: "added".into(),
        });
    }
    out
}

fn take_versions(doc: &mut Value) -> Vec<Value> {
    doc.pointer_mut("/spec")
        .and_then(Value::as_object_mut)
        .and_then(|s| s.remove("versions"))
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 120 {
        format!("{}...", s.chars().take(120).collect::<String>())
    } else {
        s
    }
}

/// Every differing node between `a` and `b` under `path`.
pub fn diff(a: &Value, b: &Value, path: &str, out: &mut Vec<Difference>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let p = format!("{path}/{key}");
                match (x.get(key), y.get(key)) {
                    (Some(u), Some(v)) => diff(u, v, &p, out),
                    (Some(u), None) => out.push(Difference {
                        path: p,
                        what: format!("missing {}", short(u)),
                    }),
                    (None, Some(v)) => out.push(Difference {
                        path: p,
                        what: format!("added {}", short(v)),
                    }),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                diff(u, v, &format!("{path}/{i}"), out);
            }
        }
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => {}
        _ if a == b => {}
        _ => out.push(Difference {
            path: path.to_string(),
            what: format!("{} != {}", short(a), short(b)),
        }),
    }
}
