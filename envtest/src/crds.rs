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

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(plural: &str) -> String {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.test.dev\nspec:\n  group: test.dev\n  names:\n    kind: K{plural}\n    plural: {plural}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n"
        )
    }

    fn names(crds: &[CustomResourceDefinition]) -> Vec<&str> {
        crds.iter()
            .filter_map(|c| c.metadata.name.as_deref())
            .collect()
    }

    #[test]
    fn a_directory_gives_its_crds_in_file_name_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("b.yaml"), crd("bees")).expect("write");
        let two = format!("{}---\n{}", crd("ants"), crd("apes"));
        std::fs::write(dir.path().join("a.yml"), two).expect("write");
        std::fs::write(dir.path().join("kustomization.txt"), "not yaml: [").expect("write");
        let crds = read_dir(dir.path()).expect("reads");
        assert_eq!(
            names(&crds),
            ["ants.test.dev", "apes.test.dev", "bees.test.dev"]
        );
    }

    #[test]
    fn no_crd_or_another_kind_is_an_error_naming_make_manifests() {
        let dir = tempfile::tempdir().expect("tempdir");
        let empty = read_dir(dir.path()).expect_err("empty").to_string();
        assert_eq!(
            empty,
            format!(
                "{}: holds no CustomResourceDefinition; run `make manifests` (operator-gen manifests) to write the CRDs",
                dir.path().display()
            )
        );
        let missing = dir.path().join("bases");
        let gone = read_dir(&missing).expect_err("missing").to_string();
        assert!(gone.contains("cannot read the directory"), "{gone}");
        std::fs::write(
            dir.path().join("role.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
        )
        .expect("write");
        let other = read_dir(dir.path()).expect_err("configmap").to_string();
        assert!(
            other.contains("role.yaml: holds a document that is not a CustomResourceDefinition"),
            "{other}"
        );
    }
}
