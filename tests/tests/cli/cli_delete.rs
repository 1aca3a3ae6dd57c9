//! `delete api` undoes `create api`: on every combination of an `init` layout, the kinds already
//! there and the API created, `create api` then `delete api` gives back the tree as it was
//! before, byte for byte, directories included; after `manifests` too, but for the one file
//! listed in [`AFTER_MANIFESTS`]. A shared `mod.rs` holding the user's code stays, and an edited
//! types file needs `--force`; a kind of the same name in another group is not a use. And a project with two kinds, one deleted, still builds and
//! renders with `kubectl kustomize config/default` without it.

use operator_gen_tests::operator::shell;
use std::collections::BTreeMap;
use std::path::Path;

use operator_gen_tests::cli;

fn ok(dir: &Path, args: &str) -> cli::Output {
    let out = cli::run(dir, &cli::split_args(args));
    assert_eq!(out.code, 0, "`operator-gen {args}` failed: {}", out.stderr);
    out
}

/// The paths where two trees differ, each with how.
fn differences(
    expected: &BTreeMap<String, Vec<u8>>,
    actual: &BTreeMap<String, Vec<u8>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (path, bytes) in expected {
        match actual.get(path) {
            None => out.push(format!("{path} is gone")),
            Some(b) if b != bytes => out.push(format!(
                "{path} differs, {}",
                cli::first_line_difference(
                    &String::from_utf8_lossy(bytes),
                    &String::from_utf8_lossy(b)
                )
            )),
            Some(_) => {}
        }
    }
    for path in actual.keys().filter(|p| !expected.contains_key(*p)) {
        out.push(format!("{path} is left over"));
    }
    out
}

/// The layouts `init` makes.
const INITS: &[&str] = &[
    "init",
    "init --multigroup",
    "init --namespaced --license none",
];

/// What is in the project before the API is created: nothing, a kind, a kind and a controller
/// for a built-in type.
const BEFORE: &[&[&str]] = &[
    &[],
    &["create api --group crew --version v1 --kind Captain"],
    &[
        "create api --group crew --version v1 --kind Captain",
        "create api --group apps --version v1 --kind Deployment --resource=false",
    ],
];

/// The API created and deleted again, as `create api` flags and `delete api` flags: a new kind
/// in a version already there, a second version of a kind (sharing its roles and CRD), another
/// group, a cluster-scoped kind with its own plural, a controller for a built-in type.
const APIS: &[(&str, &str)] = &[
    (
        "--group crew --version v1 --kind FirstMate",
        "--group crew --version v1 --kind FirstMate",
    ),
    (
        "--group crew --version v2 --kind Captain --controller=false --force",
        "--group crew --version v2 --kind Captain",
    ),
    (
        "--group ship --version v1beta1 --kind Frigate",
        "--group ship --version v1beta1 --kind Frigate",
    ),
    (
        "--group crew --version v1 --kind Octopus --plural octopi --namespaced=false",
        "--group crew --version v1 --kind Octopus",
    ),
    (
        "--group core --version v1 --kind Pod --resource=false",
        "--group core --version v1 --kind Pod",
    ),
];

/// Whether the combination is one `create api` accepts: a second group needs a multigroup
/// project, a cluster-scoped kind a cluster-wide manager, a second version an existing kind.
fn valid(init: &str, before: &[&str], create: &str) -> bool {
    let multigroup = init.contains("--multigroup");
    let namespaced = init.contains("--namespaced");
    let has_captain = before.iter().any(|c| c.contains("Captain"));
    let refused = (create.contains("--group ship") && !multigroup)
        || (create.contains("--namespaced=false") && namespaced)
        || (create.contains("--version v2 --kind Captain") && !has_captain);
    !refused
}

#[test]
fn create_then_delete_gives_back_the_tree() {
    let mut combinations = 0;
    let mut failures = Vec::new();
    for init in INITS {
        for before in BEFORE {
            for (create, delete) in APIS {
                if !valid(init, before, create) {
                    continue;
                }
                combinations += 1;
                let tmp = tempfile::tempdir().expect("tempdir");
                let dir = tmp.path().join("demo");
                std::fs::create_dir_all(&dir).expect("mkdir");
                ok(&dir, init);
                for args in *before {
                    ok(&dir, args);
                }
                let was = cli::tree_with_dirs(&dir);
                ok(&dir, &format!("create api {create}"));
                assert_ne!(
                    was,
                    cli::tree_with_dirs(&dir),
                    "`create api {create}` changed nothing"
                );
                ok(&dir, &format!("delete api {delete}"));
                let what = format!("{init}, {before:?}, create api {create}");
                let diff = differences(&was, &cli::tree_with_dirs(&dir));
                if !diff.is_empty() {
                    failures.push(format!("{what}:\n  {}", diff.join("\n  ")));
                }
            }
        }
    }
    println!("create api then delete api gave back the tree in {combinations} combinations");
    // 3 layouts x 3 starting points x 5 APIs, less the 12 `create api` refuses (see `valid`)
    assert_eq!(combinations, 33, "the combinations that ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The files in which `init`, `create api`, `manifests`, `delete api` differs from `init`, each
/// with its reason. A row that no longer differs fails the test, as does any other difference.
const AFTER_MANIFESTS: &[(&str, &str)] = &[(
    "config/rbac/role.yaml",
    "manifests' output: `delete api` regenerates nothing, and the next `make manifests` writes \
     the rules of the kinds left (none), not init's commented placeholder",
)];

#[test]
fn create_manifests_delete_gives_back_the_init_tree_but_manifests_output() {
    for init in INITS {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("demo");
        std::fs::create_dir_all(&dir).expect("mkdir");
        ok(&dir, init);
        let was = cli::tree_with_dirs(&dir);
        ok(&dir, "create api --group crew --version v1 --kind Captain");
        ok(&dir, "manifests");
        let crd = "config/crd/bases/crew.my.domain_captains.yaml";
        assert!(dir.join(crd).is_file(), "{init}: manifests wrote no {crd}");
        let out = ok(&dir, "delete api --group crew --version v1 --kind Captain");
        assert!(
            out.stderr.contains(&format!("remove {crd}")),
            "{init}: {}",
            out.stderr
        );
        assert!(
            !dir.join("config/crd/bases").exists(),
            "{init}: config/crd/bases is left"
        );
        let mut diff = differences(&was, &cli::tree_with_dirs(&dir));
        for (file, reason) in AFTER_MANIFESTS {
            let before = diff.len();
            diff.retain(|d| !d.starts_with(&format!("{file} ")));
            assert!(
                diff.len() < before,
                "{init}: {file} no longer differs; drop its row ({reason})"
            );
        }
        assert!(diff.is_empty(), "{init}: {}", diff.join("\n"));
    }
}

/// A shared `mod.rs` that holds the user's own module stays, with the line declaring it, and
/// the command says so; an edited types file goes with `--force`, and the kind's names are no
/// longer found anywhere.
#[test]
fn a_mod_rs_with_user_code_stays_and_force_deletes_an_edited_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    std::fs::create_dir_all(&dir).expect("mkdir");
    ok(&dir, "init");
    ok(&dir, "create api --group crew --version v1 --kind Captain");
    let module = dir.join("src/api/v1/mod.rs");
    let text = std::fs::read_to_string(&module).expect("read mod.rs");
    std::fs::write(
        &module,
        text.replace("pub mod captain;", "pub mod captain;\npub mod common;"),
    )
    .expect("write mod.rs");
    std::fs::write(
        dir.join("src/api/v1/common.rs"),
        "//! Shared by the kinds of v1.\n",
    )
    .expect("write common.rs");
    let types = dir.join("src/api/v1/captain.rs");
    let text = std::fs::read_to_string(&types).expect("read captain.rs");
    std::fs::write(&types, text + "\n// tuned by hand\n").expect("write captain.rs");

    let refused = cli::run(
        &dir,
        &cli::split_args("delete api --group crew --version v1 --kind Captain"),
    );
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("src/api/v1/captain.rs was edited"),
        "{}",
        refused.stderr
    );
    assert!(types.is_file(), "the refused delete removed the types file");

    let out = ok(
        &dir,
        "delete api --group crew --version v1 --kind Captain --force",
    );
    assert!(
        out.stderr
            .contains("kept src/api/v1/mod.rs: it holds more than what `create api` scaffolded"),
        "{}",
        out.stderr
    );
    assert!(!types.exists(), "--force left the edited types file");
    let module = std::fs::read_to_string(&module).expect("mod.rs stays");
    assert!(module.contains("pub mod common;"), "{module}");
    for gone in ["pub mod captain;", "pub use captain::*;"] {
        assert!(
            !module.contains(gone),
            "{gone} is left in mod.rs:\n{module}"
        );
    }
    let api = std::fs::read_to_string(dir.join("src/api/mod.rs")).expect("api/mod.rs");
    assert!(
        api.contains("pub mod v1;"),
        "the kept module's declaration went:\n{api}"
    );
    for file in [
        "src/main.rs",
        "src/controller/mod.rs",
        "config/rbac/kustomization.yaml",
        "config/crd/kustomization.yaml",
        "config/samples/kustomization.yaml",
        "PROJECT",
    ] {
        let text = std::fs::read_to_string(dir.join(file)).expect("read");
        assert!(
            !text.to_lowercase().contains("captain"),
            "{file} still names the kind:\n{text}"
        );
    }
}

/// With the same kind in two groups, a use of this group's kind stops `delete api`, naming it,
/// and a use of the other group's (its types, its module) does not.
#[test]
fn a_kind_of_the_same_name_in_another_group_is_not_a_use() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    std::fs::create_dir_all(&dir).expect("mkdir");
    ok(&dir, "init --multigroup");
    ok(&dir, "create api --group crew --version v1 --kind Captain");
    ok(&dir, "create api --group ship --version v1 --kind Captain");
    let uses = dir.join("src/uses.rs");
    std::fs::write(
        &uses,
        "pub fn a(_: &crate::api::crew::v1::CaptainSpec) {}\n",
    )
    .expect("write");
    let delete = "delete api --group crew --version v1 --kind Captain";
    let refused = cli::run(&dir, &cli::split_args(delete));
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(
            "src/uses.rs:1 still uses crew/v1 Captain (it names `crew::v1::CaptainSpec`)"
        ),
        "{}",
        refused.stderr
    );
    std::fs::write(
        &uses,
        "use crate::api::ship::v1::{captain, Captain, CaptainSpec};\n\npub fn a(_: &Captain, _: &CaptainSpec) {}\n",
    )
    .expect("write");
    ok(&dir, delete);
    for gone in [
        "src/api/crew",
        "src/controller/crew",
        "config/rbac/crew_captain_admin_role.yaml",
    ] {
        assert!(!dir.join(gone).exists(), "{gone} is left");
    }
    for kept in [
        "src/api/ship/v1/captain.rs",
        "src/controller/ship/captain.rs",
        "config/rbac/ship_captain_admin_role.yaml",
    ] {
        assert!(
            dir.join(kept).exists(),
            "{kept} went with the other group's kind"
        );
    }
}

#[test]
fn after_delete_the_project_builds_and_kustomizes_without_the_kind() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("deleted");
    std::fs::create_dir_all(&dir).expect("mkdir");
    ok(&dir, "init");
    ok(&dir, "create api --group crew --version v1 --kind Captain");
    ok(
        &dir,
        "create api --group crew --version v1 --kind FirstMate --namespaced=false",
    );
    ok(&dir, "manifests");
    ok(
        &dir,
        "delete api --group crew --version v1 --kind FirstMate",
    );
    ok(&dir, "manifests");
    for gone in [
        "src/api/v1/first_mate.rs",
        "src/controller/first_mate.rs",
        "config/samples/crew_v1_firstmate.yaml",
        "config/rbac/firstmate_admin_role.yaml",
        "config/crd/bases/crew.my.domain_firstmates.yaml",
    ] {
        assert!(!dir.join(gone).exists(), "{gone} is left");
    }
    let role = std::fs::read_to_string(dir.join("config/rbac/role.yaml")).expect("role.yaml");
    assert!(role.contains("captains"), "{role}");
    assert!(!role.contains("firstmates"), "{role}");

    shell(&dir, &cli::cargo(), &["build"]);

    if !cli::require_tool("kubectl", &["version", "--client"], cli::INSTALL_KUBECTL) {
        return;
    }
    let yaml = shell(&dir, "kubectl", &["kustomize", "config/default"]);
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&yaml).expect("kustomize output is YAML");
    let names: Vec<String> = docs
        .iter()
        .map(|d| {
            format!(
                "{} {}",
                d["kind"].as_str().unwrap_or(""),
                d["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    for present in [
        "CustomResourceDefinition captains.crew.my.domain",
        "ClusterRole deleted-captain-editor-role",
        "Deployment deleted-controller-manager",
    ] {
        assert!(
            names.iter().any(|n| n == present),
            "no {present} in {names:?}"
        );
    }
    for absent in ["firstmates.crew.my.domain", "deleted-firstmate-editor-role"] {
        assert!(
            !names.iter().any(|n| n.ends_with(&format!(" {absent}"))),
            "{absent} is still rendered: {names:?}"
        );
    }
}
