//! The layout of the integration tests: each is a module of a group, a directory of
//! `tests/tests/` whose `main.rs` declares it, and each group is one test binary. A file directly
//! under `tests/tests/` or under another workspace crate's `tests/` would be a binary of its own,
//! linking kube again; a file in a group's directory that its `main.rs` does not declare would
//! never be compiled.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use operator_gen_tests::cli;

/// The groups, each one binary: `cli`, `manifests`, `apiserver`, `project`.
const GROUPS: [&str; 4] = ["apiserver", "cli", "manifests", "project"];

/// The entries of `dir`, sorted.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("read a directory entry").path())
        .collect();
    paths.sort();
    paths
}

fn is_rust(path: &Path) -> bool {
    path.is_file() && path.extension().is_some_and(|e| e == "rs")
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The modules a `main.rs` declares with a `mod <name>;` line.
fn declared(main: &str) -> BTreeSet<String> {
    main.lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_test_file_is_a_declared_module_of_a_group() {
    let root = cli::workspace_root();
    let tests = root.join("tests/tests");
    let mut groups = Vec::new();
    let mut problems = Vec::new();
    for path in entries(&tests) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if is_rust(&path) {
            problems.push(format!(
                "tests/tests/{name} is a test binary of its own: move it into a group's \
                 directory (tests/tests/<group>/) and add `mod {};` to that group's main.rs",
                stem(&path)
            ));
            continue;
        }
        if !path.is_dir() {
            continue;
        }
        let Ok(main) = std::fs::read_to_string(path.join("main.rs")) else {
            problems.push(format!(
                "tests/tests/{name}/ has no main.rs: move its files into a group's directory"
            ));
            continue;
        };
        groups.push(name.clone());
        let declared = declared(&main);
        for file in entries(&path).iter().filter(|p| is_rust(p)) {
            let module = stem(file);
            if module != "main" && !declared.contains(&module) {
                problems.push(format!(
                    "tests/tests/{name}/{module}.rs is never compiled: add `mod {module};` to \
                     tests/tests/{name}/main.rs"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(
        groups, GROUPS,
        "the integration test groups changed: each group is a binary linking kube; put the \
         tests into one of the existing groups"
    );
}

#[test]
fn no_other_workspace_crate_has_an_integration_test_binary() {
    let root = cli::workspace_root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("read Cargo.toml");
    let manifest: toml::Table = manifest.parse().expect("Cargo.toml parses");
    let members: Vec<&str> = manifest["workspace"]["members"]
        .as_array()
        .expect("workspace.members")
        .iter()
        .filter_map(|m| m.as_str())
        .collect();
    assert!(members.contains(&"tests"), "{members:?}");
    let binaries: Vec<String> = members
        .iter()
        .filter(|m| **m != "tests")
        .map(|m| root.join(m).join("tests"))
        .filter(|dir| dir.is_dir())
        .flat_map(|dir| entries(&dir))
        .filter(|p| is_rust(p) || p.join("main.rs").is_file())
        .map(|p| p.strip_prefix(&root).unwrap_or(&p).display().to_string())
        .collect();
    assert!(
        binaries.is_empty(),
        "each is a test binary of its own: move it into a group of tests/tests/ (see \
         tests/tests/<group>/main.rs):\n{}",
        binaries.join("\n")
    );
}
