//! The library crates (`codegen`, `codegen-macros`, `runtime`, `envtest`) are publishable and kept
//! in step: each takes version, edition, licence and repository from the workspace, has a
//! description and a README of its own, and every dependency of one workspace crate on another
//! (outside dev-dependencies) carries the workspace's version beside its path, so the packaged
//! manifest names it by version. That the crates package is checked by `.ci/run`
//! (`cargo package --no-verify` of all four together).

use std::path::Path;

use operator_gen_tests::cli;

/// The library crates that get published: directory and package name.
const LIBRARIES: &[(&str, &str)] = &[
    ("codegen", "operator-gen-codegen"),
    ("codegen-macros", "operator-gen-macros"),
    ("runtime", "operator-gen-runtime"),
    ("envtest", "operator-gen-envtest"),
];

fn manifest(dir: &Path) -> toml::Table {
    let path = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{} is not TOML: {e}", path.display()))
}

fn get<'a>(table: &'a toml::Table, path: &str) -> Option<&'a toml::Value> {
    let mut keys = path.split('.');
    let first = table.get(keys.next()?)?;
    keys.try_fold(first, |v, k| v.get(k))
}

#[test]
fn library_crates_are_publishable_and_in_step() {
    let root = cli::workspace_root();
    let workspace = manifest(&root);
    let version = get(&workspace, "workspace.package.version")
        .and_then(toml::Value::as_str)
        .expect("[workspace.package] version");
    let mut failures = Vec::new();

    // the workspace's own crates, as other members name them
    let shared = get(&workspace, "workspace.dependencies")
        .and_then(toml::Value::as_table)
        .expect("[workspace.dependencies]");
    for (name, dep) in shared.iter().filter(|(n, _)| n.starts_with("operator-gen")) {
        if dep.get("version").and_then(toml::Value::as_str) != Some(version) {
            failures.push(format!(
                "[workspace.dependencies] {name} lacks version = \"{version}\""
            ));
        }
    }

    for (dir, name) in LIBRARIES {
        let crate_dir = root.join(dir);
        let m = manifest(&crate_dir);
        if get(&m, "package.name").and_then(toml::Value::as_str) != Some(name) {
            failures.push(format!("{dir}/Cargo.toml is not package {name}"));
        }
        for key in [
            "version",
            "edition",
            "rust-version",
            "license",
            "repository",
        ] {
            if get(&m, &format!("package.{key}.workspace")).and_then(toml::Value::as_bool)
                != Some(true)
            {
                failures.push(format!("{name}: {key} does not come from the workspace"));
            }
        }
        if get(&m, "package.publish").and_then(toml::Value::as_bool) == Some(false) {
            failures.push(format!("{name} says publish = false"));
        }
        if get(&m, "package.description")
            .and_then(toml::Value::as_str)
            .is_none_or(|d| d.trim().is_empty())
        {
            failures.push(format!("{name} has no description"));
        }
        match get(&m, "package.readme").and_then(toml::Value::as_str) {
            Some(readme) if crate_dir.join(readme).is_file() => {}
            other => failures.push(format!(
                "{name}: readme {other:?} is not a file of the crate"
            )),
        }
        for kind in ["dependencies", "build-dependencies"] {
            let Some(deps) = m.get(kind).and_then(toml::Value::as_table) else {
                continue;
            };
            for (dep_name, dep) in deps {
                let package = dep
                    .get("package")
                    .and_then(toml::Value::as_str)
                    .unwrap_or(dep_name);
                if !package.starts_with("operator-gen") {
                    continue;
                }
                let from_workspace =
                    dep.get("workspace").and_then(toml::Value::as_bool) == Some(true);
                let versioned = dep.get("version").and_then(toml::Value::as_str) == Some(version);
                if !(from_workspace || versioned) {
                    failures.push(format!(
                        "{name}: [{kind}] {dep_name} names neither the workspace's entry nor version \"{version}\""
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "library crates not ready to publish:\n{}",
        failures.join("\n")
    );
}
