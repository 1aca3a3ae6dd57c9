//! `manifests` judges a CRD's size as the apiserver stores it (compact JSON, plus the fields
//! server-side apply records, plus a margin), not by its YAML: a CRD whose YAML is bigger than
//! etcd's 1.5 MiB request limit but whose stored form is smaller is written, and the real
//! apiserver takes it by server-side apply and marks it Established; a CRD whose stored form is
//! bigger is refused with a message naming `--max-crd-size`, which lets it through, and the
//! apiserver then refuses it as etcd's limit says. Just under the limit (within 64 KiB) the
//! apiserver stores it.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use operator_gen::manifests::{self, MAX_CRD_BYTES, ManifestsOptions, STORED_MARGIN, stored_bytes};
use operator_gen_envtest::{ControlPlane, FIELD_MANAGER, require_assets};
use std::time::Duration;

/// A crate whose one kind nests `depth` structs; the innermost has `fields` fields, each with a
/// doc comment of `lines` lines of `line`. Deep nesting indents YAML, not JSON.
fn project(depth: usize, fields: usize, lines: usize, line: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut src = String::from(
        "use operator_gen_runtime::prelude::*;\nuse serde::{Deserialize, Serialize};\n\n\
         #[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n\
         #[k8s(group = \"size.example.com\", version = \"v1\", kind = \"Big\")]\n\
         pub struct BigSpec {\n    pub n: Level0,\n}\n",
    );
    for level in 0..depth {
        src.push_str(&format!(
            "\n#[derive(Schema, Serialize, Deserialize, Clone, Debug)]\npub struct Level{level} {{\n"
        ));
        if level + 1 < depth {
            src.push_str(&format!("    pub n: Level{},\n}}\n", level + 1));
            continue;
        }
        for f in 0..fields {
            for i in 0..lines {
                src.push_str(&format!("    /// {line} {i}\n"));
            }
            src.push_str(&format!("    pub f{f}: String,\n"));
        }
        src.push_str("}\n");
    }
    std::fs::write(dir.path().join("PROJECT"), "version: \"3\"\n").expect("PROJECT");
    std::fs::create_dir_all(dir.path().join("src")).expect("src");
    std::fs::write(dir.path().join("src/lib.rs"), src).expect("lib.rs");
    dir
}

fn crd_of(outputs: &manifests::Outputs) -> (String, CustomResourceDefinition) {
    let yaml = outputs["config/crd/bases/size.example.com_bigs.yaml"].clone();
    let crd = serde_saphyr::from_str(&yaml).expect("the CRD parses");
    (yaml, crd)
}

/// A doc line: long lines make JSON about as big as YAML.
const LONG: &str = "abcdefghijklmnopqrstuvwxyz abcdefghijklmnopqrstuvwxyz";

async fn apply(plane: &ControlPlane, crd: &CustomResourceDefinition) -> Result<(), String> {
    let api: Api<CustomResourceDefinition> = Api::all(plane.client());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    api.patch("bigs.size.example.com", &params, &Patch::Apply(crd))
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn crds_are_measured_as_the_apiserver_stores_them() {
    require_assets!();
    // YAML over the limit, stored form under it: written
    let small = project(12, 40, 700, "ab");
    let outputs = manifests::generate(small.path(), &ManifestsOptions::default()).expect("written");
    let (yaml, crd) = crd_of(&outputs);
    let json = serde_json::to_vec(&crd).expect("JSON").len();
    let estimate = stored_bytes(&crd);
    println!(
        "crd_size: YAML {} bytes, JSON {json} bytes, stored estimate {estimate} bytes, limit {MAX_CRD_BYTES}",
        yaml.len()
    );
    assert!(yaml.len() > MAX_CRD_BYTES, "YAML {} bytes", yaml.len());
    assert!(estimate < MAX_CRD_BYTES, "estimate {estimate} bytes");

    let plane = ControlPlane::start().await.expect("control plane starts");
    plane
        .install_crds(std::slice::from_ref(&crd), Duration::from_secs(60))
        .await
        .expect("the apiserver takes the CRD by server-side apply and marks it Established");
    // what the apiserver keeps: the object with its status and managed fields, as compact JSON
    let api: Api<CustomResourceDefinition> = Api::all(plane.client());
    let stored = api.get("bigs.size.example.com").await.expect("get");
    let stored = serde_json::to_vec(&stored).expect("JSON").len();
    println!("crd_size: the apiserver holds {stored} bytes");
    assert!(
        stored <= estimate,
        "the estimate ({estimate}) is below what the apiserver holds ({stored})"
    );
    assert!(
        estimate - stored <= STORED_MARGIN,
        "the estimate ({estimate}) exceeds what the apiserver holds ({stored}) by more than the margin"
    );

    // a stored form just under the limit: written, and the apiserver stores it
    let near = project(2, 40, 656, LONG);
    let outputs = manifests::generate(near.path(), &ManifestsOptions::default()).expect("written");
    let (_, crd) = crd_of(&outputs);
    let estimate = stored_bytes(&crd);
    println!("crd_size: just under the limit: stored estimate {estimate} bytes");
    assert!(
        estimate < MAX_CRD_BYTES && estimate > MAX_CRD_BYTES - (64 << 10),
        "estimate {estimate} bytes is not within 64 KiB under the limit"
    );
    apply(&plane, &crd)
        .await
        .expect("the apiserver stores a CRD just under the limit");

    // a stored form just over the limit: refused, naming the flag
    let big = project(2, 40, 680, LONG);
    let err = manifests::generate(big.path(), &ManifestsOptions::default())
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains("as the apiserver stores it") && err.contains("--max-crd-size BYTES"),
        "{err}"
    );
    // the flag lets it through, and etcd's limit is real: the apiserver cannot store it
    let raised = ManifestsOptions {
        max_crd_size: Some(4 << 20),
        ..Default::default()
    };
    let outputs = manifests::generate(big.path(), &raised).expect("written with the flag");
    let (_, crd) = crd_of(&outputs);
    let json = serde_json::to_vec(&crd).expect("JSON").len();
    println!(
        "crd_size: over the limit: JSON {json} bytes, stored estimate {} bytes",
        stored_bytes(&crd)
    );
    assert!(json > MAX_CRD_BYTES, "JSON {json} bytes");
    let refused = apply(&plane, &crd).await.expect_err("etcd refuses it");
    assert!(refused.contains("too large"), "{refused}");
}
