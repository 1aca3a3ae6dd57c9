//! `alpha migrate` on a corpus of real kubebuilder-style Go API packages
//! (`hack/migrate-corpus/corpus.tsv`: pinned versions, fetched from the Go module proxy into
//! the module cache under `$HOME` by `hack/migrate-corpus/fetch.sh`, never vendored). Each row's
//! package is placed into a kubebuilder v4.15.0 project (`kubebuilder init --domain DOMAIN`,
//! `create api` for each of its kinds, the package's Go files, but tests, over `api/VERSION/`),
//! controller-gen v0.21.0 writes its CRDs, `alpha migrate` writes the operator-gen project, the
//! migrated project builds (cargo, in the shared target directory), and every CRD equals
//! controller-gen's node by node (parsed YAML). Every difference is a row of the one exceptions
//! table below with its reason; a row that covers no difference fails the test. It prints how
//! many packages, CRDs and nodes it compared.
//!
//! Without Go, kubebuilder, controller-gen or the fetched modules the test skips outside CI and
//! fails in CI.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::migrate_kubebuilder::{build, diffs, go_env, go_tools, migrate, run, yaml_docs};
use operator_gen_tests::cli;
use operator_gen_tests::tools::{self, Ran, record_ran};

/// Differences from controller-gen's CRDs: (package, CRD file or `*`, path prefix, reason).
const EXCEPTIONS: &[(&str, &str, &str, &str)] = &[(
    "*",
    "*",
    "/metadata/annotations",
    "each tool stamps its own version annotation (controller-gen.kubebuilder.io/version, operator-gen.io/version)",
)];

/// One row of corpus.tsv.
struct Row {
    module: String,
    version: String,
    package: String,
    domain: String,
    group: String,
    api_version: String,
    kinds: Vec<String>,
}

impl Row {
    fn id(&self) -> String {
        format!("{}@{}/{}", self.module, self.version, self.package)
    }
}

fn corpus() -> Vec<Row> {
    let path = cli::workspace_root().join("hack/migrate-corpus/corpus.tsv");
    let text = std::fs::read_to_string(&path).expect("read corpus.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert_eq!(c.len(), 7, "corpus.tsv row {l:?} has not 7 columns");
            Row {
                module: c[0].into(),
                version: c[1].into(),
                package: c[2].into(),
                domain: c[3].into(),
                group: c[4].into(),
                api_version: c[5].into(),
                kinds: c[6].split(',').map(str::to_owned).collect(),
            }
        })
        .collect()
}

/// The kubebuilder project holding `row`'s package, its CRDs written by controller-gen.
fn go_project(dir: &Path, row: &Row, kubebuilder: &Path, controller_gen: &Path, package: &Path) {
    std::fs::create_dir_all(dir).expect("go project dir");
    let kb = |args: &[&str]| {
        run(
            go_env(Command::new(kubebuilder).current_dir(dir).args(args)),
            &format!("kubebuilder {}", args.join(" ")),
        )
    };
    let repo = "example.com/corpus";
    kb(&[
        "init",
        "--domain",
        &row.domain,
        "--repo",
        repo,
        "--skip-go-version-check",
    ]);
    for kind in &row.kinds {
        kb(&[
            "create",
            "api",
            "--group",
            &row.group,
            "--version",
            &row.api_version,
            "--kind",
            kind,
            "--resource",
            "--controller=false",
            "--make=false",
        ]);
    }
    let api = dir.join("api").join(&row.api_version);
    for entry in std::fs::read_dir(&api).expect("api dir").flatten() {
        std::fs::remove_file(entry.path()).expect("remove scaffolded Go file");
    }
    for entry in std::fs::read_dir(package)
        .expect("fetched package")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".go") && !name.ends_with("_test.go") {
            let to = api.join(&name);
            std::fs::write(&to, std::fs::read(entry.path()).expect("read Go file"))
                .expect("write Go file");
        }
    }
    run(
        go_env(Command::new(controller_gen).current_dir(dir).args([
            "crd",
            "paths=./api/...",
            "output:crd:artifacts:config=config/crd/bases",
        ])),
        &format!("controller-gen crd on {}", row.id()),
    );
}

#[test]
fn corpus_migrates_to_controller_gens_crds() {
    let Some((kubebuilder, controller_gen)) = go_tools() else {
        return;
    };
    let rows = corpus();
    let mut missing = Vec::new();
    let packages: Vec<PathBuf> = rows
        .iter()
        .map(|r| {
            let dir = tools::go_module_cache()
                .join(format!("{}@{}", r.module, r.version))
                .join(&r.package);
            if !dir.is_dir() {
                missing.push(r.id());
            }
            dir
        })
        .collect();
    if !missing.is_empty() {
        tools::skip_or_fail(
            &format!("the corpus modules {} are not fetched", missing.join(", ")),
            "bash hack/migrate-corpus/fetch.sh",
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    let mut used = vec![false; EXCEPTIONS.len()];
    let (mut crds, mut nodes) = (0, 0);
    for (i, (row, package)) in rows.iter().zip(&packages).enumerate() {
        let go = tmp.path().join(format!("go{i}/corpus"));
        go_project(&go, row, &kubebuilder, &controller_gen, package);
        let rust = tmp.path().join(format!("rust{i}/corpus"));
        migrate(tmp.path(), &go, &rust);
        let bases = go.join("config/crd/bases");
        let mut files: Vec<String> = std::fs::read_dir(&bases)
            .expect("controller-gen's CRDs")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files.len(), row.kinds.len(), "{}: CRDs {files:?}", row.id());
        for file in &files {
            let ours = rust.join("config/crd/bases").join(file);
            if !ours.exists() {
                failures.push(format!("{}: operator-gen wrote no {file}", row.id()));
                continue;
            }
            crds += 1;
            let mut found = Vec::new();
            diffs(
                &yaml_docs(&bases.join(file))[0],
                &yaml_docs(&ours)[0],
                "",
                &mut found,
                &mut nodes,
            );
            for (path, what) in found {
                let hit = EXCEPTIONS.iter().position(|(p, f, prefix, _)| {
                    (*p == "*" || *p == row.id())
                        && (*f == "*" || f == file)
                        && path.starts_with(prefix)
                });
                match hit {
                    Some(h) => used[h] = true,
                    None => failures.push(format!("{} {file} {path}: {what}", row.id())),
                }
            }
        }
        let built = build(&rust);
        if !built.status.success() {
            failures.push(format!(
                "{}: the migrated project does not build:\n{}",
                row.id(),
                String::from_utf8_lossy(&built.stderr)
            ));
        }
    }
    for (i, (p, f, prefix, _)) in EXCEPTIONS.iter().enumerate() {
        if !used[i] {
            failures.push(format!(
                "exception {p} {f} {prefix} covers no difference now: drop it"
            ));
        }
    }
    println!(
        "compared {} corpus packages, {crds} CRDs and {nodes} CRD nodes with controller-gen's, {} exceptions",
        rows.len(),
        EXCEPTIONS.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    record_ran(Ran::GoPeers);
}
