//! The inputs of the differential test against controller-gen under `testdata/differential/`
//! (the Go API package, its Rust twin, `types.tsv` and controller-gen's `golden.json`) are what
//! `hack/twins/generate.sh` writes now: nothing in them is edited by hand or stale.

use operator_gen_tests::{tools, workspace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn differential() -> PathBuf {
    workspace().join("testdata/differential")
}

/// The committed twins, type list and golden are what `hack/twins/generate.sh` writes now.
#[test]
fn committed_twins_are_current() {
    if !tools::go_available("hack/twins/generate.sh cannot run") {
        return;
    }
    let Some(controller_gen) = tools::go_tool("controller-gen") else {
        return;
    };
    let fresh = tempfile::tempdir().expect("temp dir");
    let output = tools::offline_go(&mut Command::new("bash"))
        .arg(workspace().join("hack/twins/generate.sh"))
        .arg(fresh.path())
        .env("CONTROLLER_GEN", &controller_gen)
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "hack/twins/generate.sh failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let committed = files(&differential());
    let regenerated = files(fresh.path());
    assert_eq!(
        committed.keys().collect::<Vec<_>>(),
        regenerated.keys().collect::<Vec<_>>(),
        "testdata/differential holds other files than hack/twins/generate.sh writes"
    );
    for (name, text) in &committed {
        assert!(
            *text == regenerated[name],
            "testdata/differential/{name} is stale: run hack/twins/generate.sh"
        );
    }
    println!(
        "differential: {} committed files are current",
        committed.len()
    );
    tools::record_ran(tools::Ran::GoPeers);
}

/// Every file under `root`, by relative path.
fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("directory") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root");
                out.insert(
                    rel.to_string_lossy().into_owned(),
                    std::fs::read(&path).expect("file"),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}
