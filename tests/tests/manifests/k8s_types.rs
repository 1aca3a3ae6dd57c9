//! The committed table of Kubernetes types (`codegen/src/known/k8s.json`) equals a fresh build
//! from a real kube-apiserver's `/openapi/v3` documents and the Go sources of the same release,
//! and covers every type k8s-openapi has for that release. `UPDATE_GOLDENS=1` (or
//! `hack/k8s-types/regenerate.sh`) rewrites the table.

use operator_gen_envtest::{ControlPlane, Settings, require_assets};
use operator_gen_tests::k8s_types::{GoSources, k8s_openapi_versions, transform};
use operator_gen_tests::{tools, workspace};
use serde_json::Value;
use std::path::PathBuf;

const TABLE: &str = "codegen/src/known/k8s.json";

async fn get_json(client: &kube::Client, path: &str) -> Value {
    let request = http::Request::get(path)
        .body(Vec::new())
        .expect("request builds");
    let text = client
        .request_text(request)
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {path} is not JSON: {e}"))
}

/// The Go module cache the apiserver was built from (`hack/envtest/build.sh`).
fn go_mod_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("GOMODCACHE") {
        return PathBuf::from(dir);
    }
    tools::tools_bin()
        .parent()
        .and_then(|p| p.parent())
        .map(|root| root.join("go/mod"))
        .unwrap_or_default()
}

/// The k8s-openapi sources this workspace builds against, found with `cargo metadata`.
fn k8s_openapi_src() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .current_dir(workspace())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata fails");
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let manifest = meta["packages"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "k8s-openapi"))
        .and_then(|p| p["manifest_path"].as_str())
        .expect("k8s-openapi is a dependency");
    PathBuf::from(manifest)
        .parent()
        .expect("manifest dir")
        .join("src")
}

#[tokio::test(flavor = "multi_thread")]
async fn committed_table_equals_a_fresh_build_from_the_apiserver() {
    require_assets!();
    // every group-version and feature, alpha and beta included, so every type is served
    let plane = ControlPlane::start_with(Settings {
        apiserver_args: vec![
            "--runtime-config=api/all=true".into(),
            "--feature-gates=AllAlpha=true,AllBeta=true".into(),
        ],
        ..Default::default()
    })
    .await
    .expect("control plane starts");
    let client = plane.client();
    let version = get_json(&client, "/version").await;
    let kubernetes = version["gitVersion"]
        .as_str()
        .and_then(|v| v.strip_prefix('v'))
        .and_then(|v| v.split(['-', '+']).next())
        .expect("gitVersion")
        .to_string();
    let index = get_json(&client, "/openapi/v3").await;
    let paths = index["paths"].as_object().expect("/openapi/v3 lists paths");
    let mut docs = Vec::new();
    for (path, entry) in paths {
        let url = entry["serverRelativeURL"]
            .as_str()
            .unwrap_or_else(|| panic!("no serverRelativeURL for {path}"));
        docs.push(get_json(&client, url).await);
    }
    drop(plane);

    let mod_cache = go_mod_cache();
    let api_module = mod_cache.join(format!(
        "k8s.io/api@v0.{}",
        kubernetes.split_once('.').map_or("", |(_, r)| r)
    ));
    if !api_module.is_dir() {
        tools::skip_or_fail(
            &format!(
                "the Go sources of Kubernetes {kubernetes} are not at {}",
                api_module.display()
            ),
            "source hack/envtest/ensure.sh",
        );
        return;
    }
    let go = GoSources::new(&mod_cache, &kubernetes);
    let versions = k8s_openapi_versions(&k8s_openapi_src()).expect("k8s-openapi sources");
    let table = transform(&docs, &go, &kubernetes, &versions).unwrap_or_else(|e| panic!("{e}"));

    // every type k8s-openapi has for this release is in the table
    let minor: u32 = kubernetes
        .split('.')
        .nth(1)
        .and_then(|m| m.parse().ok())
        .expect("minor version");
    let missing: Vec<&String> = versions
        .iter()
        .filter(|(path, vs)| vs.contains(&minor) && !table.types.contains_key(*path))
        .map(|(path, _)| path)
        .filter(|p| p.as_str() != "List")
        .collect();
    assert!(
        missing.is_empty(),
        "k8s-openapi has these Kubernetes {kubernetes} types the apiserver does not serve: {missing:?}"
    );
    for expected in [
        "api::core::v1::Container",
        "api::networking::v1::IngressSpec",
        "api::autoscaling::v2::HorizontalPodAutoscalerSpec",
        "api::rbac::v1::PolicyRule",
        "apimachinery::pkg::apis::meta::v1::OwnerReference",
        "apimachinery::pkg::api::resource::Quantity",
    ] {
        assert!(table.types.contains_key(expected), "{expected} is missing");
    }
    println!(
        "k8s types: {} types and {} kinds from Kubernetes {kubernetes}",
        table.types.len(),
        table.kinds.len()
    );

    let fresh = table.to_text();
    let path = workspace().join(TABLE);
    if std::env::var_os("UPDATE_GOLDENS").is_some() {
        std::fs::write(&path, &fresh).expect("write the table");
        return;
    }
    let committed = std::fs::read_to_string(&path).expect("the committed table");
    if committed != fresh {
        let first = committed
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(fresh.lines().count()));
        panic!(
            "{TABLE} is stale (first difference at line {}): regenerate it with hack/k8s-types/regenerate.sh",
            first + 1
        );
    }
}
