//! Installing CRDs: server-side apply, then waiting until each is Established and served by discovery.

use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};

use crate::error::{Error, Result};

/// The field manager of CRDs applied by [`install`].
pub const FIELD_MANAGER: &str = "operator-gen-envtest";

/// Applies `crds` (server-side, forcing conflicts) and waits up to `timeout` until every one is
/// Established and each served version shows up in discovery.
pub(crate) async fn install(
    client: &kube::Client,
    crds: &[CustomResourceDefinition],
    timeout: Duration,
) -> Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    for crd in crds {
        let name = crd_name(crd)?;
        api.patch(name, &params, &Patch::Apply(crd))
            .await
            .map_err(Error::kube(format!("cannot apply CRD {name}")))?;
    }
    let deadline = Instant::now() + timeout;
    for crd in crds {
        let name = crd_name(crd)?;
        wait_established(&api, name, deadline, timeout).await?;
        for version in crd.spec.versions.iter().filter(|v| v.served) {
            let api_version = format!("{}/{}", crd.spec.group, version.name);
            wait_discovered(
                client,
                name,
                &api_version,
                &crd.spec.names.plural,
                deadline,
                timeout,
            )
            .await?;
        }
    }
    Ok(())
}

/// The CRDs in the YAML files of `dir`, files in name order; an error when there is none or a
/// document is not a CRD.
pub(crate) fn read_dir(dir: &Path) -> Result<Vec<CustomResourceDefinition>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::CrdFile {
        path: dir.to_path_buf(),
        why: format!("cannot read the directory: {e}"),
    })?;
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let mut crds = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| Error::CrdFile {
            path: file.clone(),
            why: format!("cannot read it: {e}"),
        })?;
        let docs: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(&text).map_err(|e| Error::CrdFile {
                path: file.clone(),
                why: format!("not YAML: {e}"),
            })?;
        for doc in docs.into_iter().filter(|d| !d.is_null()) {
            if doc.get("kind").and_then(|k| k.as_str()) != Some("CustomResourceDefinition") {
                return Err(Error::CrdFile {
                    path: file.clone(),
                    why: "holds a document that is not a CustomResourceDefinition".to_owned(),
                });
            }
            let crd = serde_json::from_value(doc).map_err(|e| Error::CrdFile {
                path: file.clone(),
                why: format!("not a valid CustomResourceDefinition: {e}"),
            })?;
            crds.push(crd);
        }
    }
    if crds.is_empty() {
        return Err(Error::CrdFile {
            path: dir.to_path_buf(),
            why: "holds no CustomResourceDefinition".to_owned(),
        });
    }
    Ok(crds)
}

fn crd_name(crd: &CustomResourceDefinition) -> Result<&str> {
    crd.metadata.name.as_deref().ok_or(Error::UnnamedCrd)
}

async fn wait_established(
    api: &Api<CustomResourceDefinition>,
    name: &str,
    deadline: Instant,
    timeout: Duration,
) -> Result<()> {
    loop {
        let crd = api
            .get(name)
            .await
            .map_err(Error::kube(format!("cannot read CRD {name}")))?;
        let conditions = crd.status.and_then(|s| s.conditions).unwrap_or_default();
        let condition = |kind: &str| conditions.iter().find(|c| c.type_ == kind);
        if condition("Established").is_some_and(|c| c.status == "True") {
            return Ok(());
        }
        if let Some(c) = condition("NamesAccepted").filter(|c| c.status == "False") {
            return Err(Error::CrdNotEstablished {
                name: name.to_owned(),
                why: format!(
                    "names not accepted: {}",
                    c.message.as_deref().unwrap_or("no message")
                ),
            });
        }
        if Instant::now() >= deadline {
            let summary: Vec<String> = conditions
                .iter()
                .map(|c| {
                    format!(
                        "{}={} {}",
                        c.type_,
                        c.status,
                        c.message.as_deref().unwrap_or("")
                    )
                })
                .collect();
            return Err(Error::CrdNotEstablished {
                name: name.to_owned(),
                why: format!(
                    "not established after {}s; conditions: [{}]",
                    timeout.as_secs(),
                    summary.join("; ")
                ),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn wait_discovered(
    client: &kube::Client,
    name: &str,
    api_version: &str,
    plural: &str,
    deadline: Instant,
    timeout: Duration,
) -> Result<()> {
    loop {
        let served = match client.list_api_group_resources(api_version).await {
            Ok(list) => list.resources.iter().any(|r| r.name == plural),
            Err(_) => false,
        };
        if served {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(Error::CrdNotEstablished {
                name: name.to_owned(),
                why: format!(
                    "{plural} not in discovery for {api_version} after {}s",
                    timeout.as_secs()
                ),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
