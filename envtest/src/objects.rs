//! Reading test objects (a project's samples) from YAML files.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// The object in the YAML file at `path` (one document), e.g. a sample under `config/samples/`.
pub fn read_yaml<T: DeserializeOwned>(path: impl AsRef<Path>) -> Result<T> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| Error::ObjectFile {
        path: path.to_path_buf(),
        why: format!("cannot read it: {e}"),
    })?;
    serde_saphyr::from_str(&text).map_err(|e| Error::ObjectFile {
        path: path.to_path_buf(),
        why: format!("not the object the test reads: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    #[test]
    fn a_sample_reads_as_its_type_and_a_broken_one_names_its_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let good = dir.path().join("cm.yaml");
        std::fs::write(
            &good,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sample\ndata:\n  a: b\n",
        )
        .expect("write");
        let cm: ConfigMap = read_yaml(&good).expect("reads");
        assert_eq!(cm.metadata.name.as_deref(), Some("sample"));
        assert_eq!(
            cm.data.and_then(|d| d.get("a").cloned()).as_deref(),
            Some("b")
        );
        let bad = dir.path().join("bad.yaml");
        std::fs::write(&bad, "metadata: [1, 2\n").expect("write");
        let err = read_yaml::<ConfigMap>(&bad)
            .expect_err("broken")
            .to_string();
        assert!(err.starts_with(&bad.display().to_string()), "{err}");
        let missing = read_yaml::<ConfigMap>(dir.path().join("none.yaml"))
            .expect_err("missing")
            .to_string();
        assert!(missing.contains("none.yaml: cannot read it"), "{missing}");
    }
}
