//! Naming: operator-gen's pluraliser against flect v1.0.3 itself (the Go program
//! `hack/tools/flect`) on every noun of `testdata/naming/nouns.txt`, as written and lower-cased;
//! and `create api`, `manifests` and the derive giving a kind the same plural and file names.

use kube::Resource;
use operator_gen_codegen::names;
use operator_gen_tests::{cli, tools};
use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

/// Words where operator-gen's plural knowingly differs from flect's, with the reason. Empty: a
/// difference is a bug in the port.
const EXCEPTIONS: &[(&str, &str)] = &[];

/// The nouns of the list, in order, without comments and blank lines.
fn nouns() -> Vec<String> {
    let path = cli::workspace_root().join("testdata/naming/nouns.txt");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// flect's plural of each word, from `flect-pluralize` (word, plural, singular per line).
fn flect_plurals(flect: &std::path::Path, words: &[String]) -> Vec<(String, String)> {
    // flect reads inflections.json and acronyms.json from its working directory or from these
    // variables: give it neither
    let empty = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(flect)
        .current_dir(empty.path())
        .env_remove("INFLECT_PATH")
        .env_remove("ACRONYMS_PATH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run flect-pluralize");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for w in words {
            writeln!(stdin, "{w}").expect("write to flect-pluralize");
        }
    }
    let out = child.wait_with_output().expect("flect-pluralize output");
    assert!(out.status.success(), "flect-pluralize failed");
    String::from_utf8(out.stdout)
        .expect("flect-pluralize prints UTF-8")
        .lines()
        .map(|line| {
            let mut cols = line.split('\t');
            let word = cols.next().unwrap_or_default().to_string();
            let plural = cols.next().unwrap_or_default().to_string();
            (word, plural)
        })
        .collect()
}

#[test]
fn plurals_equal_flect() {
    let nouns = nouns();
    assert!(
        nouns.len() >= 500,
        "testdata/naming/nouns.txt holds {} nouns, the test needs at least 500",
        nouns.len()
    );
    let Some(flect) = tools::go_tool("flect-pluralize") else {
        return;
    };
    // as written (controller-gen pluralises the kind) and lower-cased (kubebuilder pluralises
    // the lower-cased kind)
    let mut words: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    for w in nouns
        .iter()
        .cloned()
        .chain(nouns.iter().map(|w| names::lower(w)))
    {
        if seen.insert(w.clone()) {
            words.push(w);
        }
    }
    let judged = flect_plurals(&flect, &words);
    let judged_words: Vec<&String> = judged.iter().map(|(w, _)| w).collect();
    assert_eq!(
        judged_words,
        words.iter().collect::<Vec<_>>(),
        "flect-pluralize did not answer word for word"
    );

    let mut differences = Vec::new();
    let mut excepted = Vec::new();
    for (word, want) in &judged {
        let ours = names::pluralize(word);
        if &ours == want {
            continue;
        }
        match EXCEPTIONS.iter().find(|(w, _)| w == word) {
            Some((_, reason)) => excepted.push(format!("{word}: {reason}")),
            None => differences.push(format!("{word}: flect {want}, operator-gen {ours}")),
        }
    }
    let stale: Vec<&str> = EXCEPTIONS
        .iter()
        .map(|(w, _)| *w)
        .filter(|w| !words.iter().any(|x| x == w))
        .collect();
    assert!(
        stale.is_empty(),
        "exceptions for words not in the list: {stale:?}"
    );

    // where controller-gen's lower(Pluralize(kind)) and kubebuilder's Pluralize(lower(kind))
    // part, operator-gen follows controller-gen (see codegen/src/names.rs)
    let split: Vec<String> = nouns
        .iter()
        .filter(|k| names::plural(k) != names::lower(&names::pluralize(&names::lower(k))))
        .map(|k| {
            format!(
                "{k} ({} vs {})",
                names::plural(k),
                names::pluralize(&names::lower(k))
            )
        })
        .collect();
    println!(
        "naming: compared {} words with flect v1.0.3 ({} nouns as written, {} more lower-cased): {} equal, {} excepted, {} different",
        judged.len(),
        nouns.len(),
        judged.len() - nouns.len(),
        judged.len() - excepted.len() - differences.len(),
        excepted.len(),
        differences.len()
    );
    for e in &excepted {
        println!("  excepted {e}");
    }
    println!(
        "naming: {} kinds where controller-gen's and kubebuilder's plurals part: {}",
        split.len(),
        split.join(", ")
    );
    assert!(
        differences.is_empty(),
        "plurals that differ from flect's:\n  {}",
        differences.join("\n  ")
    );
    tools::record_ran(tools::Ran::GoPeers);
}

mod crew {
    use operator_gen_runtime::prelude::*;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
    #[k8s(group = "crew.example.com", version = "v1", kind = "Fireman")]
    pub struct FiremanSpec {
        pub name: String,
    }

    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
    #[k8s(group = "crew.example.com", version = "v1", kind = "Cactus")]
    pub struct CactusSpec {
        pub name: String,
    }
}

/// The `bases/*.yaml` entries of `config/crd/kustomization.yaml`.
fn kustomized_crds(dir: &std::path::Path) -> BTreeSet<String> {
    let path = dir.join("config/crd/kustomization.yaml");
    let text = std::fs::read_to_string(&path).expect("read config/crd/kustomization.yaml");
    let doc: serde_json::Value =
        serde_saphyr::from_str(&text).expect("config/crd/kustomization.yaml parses");
    doc["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str()?.strip_prefix("bases/").map(str::to_string))
        .collect()
}

#[test]
fn create_api_manifests_and_derive_agree_on_plurals() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("crew");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let run = |args: &str| {
        let out = cli::run(&dir, &cli::split_args(args));
        assert_eq!(out.code, 0, "`operator-gen {args}` failed: {}", out.stderr);
    };
    run("init --domain example.com");
    run("create api --group crew --version v1 --kind Fireman");
    run("create api --group crew --version v1 --kind Cactus");
    run("create api --group crew --version v1 --kind NetworkPolicy");
    run("create api --group crew --version v1 --kind Goose --plural gooses");
    run("manifests");

    let expected: BTreeSet<String> = [
        "crew.example.com_cacti.yaml",
        "crew.example.com_firemen.yaml",
        "crew.example.com_gooses.yaml",
        "crew.example.com_networkpolicies.yaml",
    ]
    .map(String::from)
    .into();
    let written: BTreeSet<String> = std::fs::read_dir(dir.join("config/crd/bases"))
        .expect("config/crd/bases")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written, expected, "CRD files manifests wrote");
    assert_eq!(
        kustomized_crds(&dir),
        expected,
        "CRD files config/crd/kustomization.yaml lists"
    );

    for (kind, plural) in [
        ("fireman", "firemen"),
        ("cactus", "cacti"),
        ("networkpolicy", "networkpolicies"),
        ("goose", "gooses"),
    ] {
        let role = dir.join(format!("config/rbac/{kind}_editor_role.yaml"));
        let text = std::fs::read_to_string(&role)
            .unwrap_or_else(|e| panic!("read {}: {e}", role.display()));
        assert!(
            text.contains(&format!("  - {plural}\n"))
                && text.contains(&format!("  - {plural}/status\n")),
            "{} does not grant {plural} and {plural}/status:\n{text}",
            role.display()
        );
    }

    assert_eq!(crew::Fireman::plural(&()), "firemen");
    assert_eq!(crew::Cactus::plural(&()), "cacti");
    assert_eq!(
        crew::Fireman::crd().metadata.name.as_deref(),
        Some("firemen.crew.example.com")
    );
}
