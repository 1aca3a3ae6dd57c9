//! The kubeconfig files the control plane writes, built as kube's typed `Kubeconfig`.

use std::path::{Path, PathBuf};

use kube::config::{
    AuthInfo, Cluster, Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext,
};

use crate::error::{Error, Result};

/// The cluster and context name in every kubeconfig written here.
pub(crate) const NAME: &str = "envtest";

/// How a kubeconfig user authenticates; every credential is a file next to the kubeconfig.
pub(crate) enum Credentials<'a> {
    /// A client certificate and its key.
    ClientCert { cert: &'a Path, key: &'a Path },
    /// A bearer token read from a file.
    TokenFile(&'a Path),
}

/// A kubeconfig for `server`, trusting the CA in `ca`, as `user`.
pub(crate) fn build(
    server: &str,
    ca: &Path,
    user: &str,
    credentials: Credentials<'_>,
) -> Kubeconfig {
    let path = |p: &Path| Some(p.display().to_string());
    let mut auth = AuthInfo::default();
    match credentials {
        Credentials::ClientCert { cert, key } => {
            auth.client_certificate = path(cert);
            auth.client_key = path(key);
        }
        Credentials::TokenFile(file) => auth.token_file = path(file),
    }
    Kubeconfig {
        clusters: vec![NamedCluster {
            name: NAME.to_owned(),
            cluster: Some(Cluster {
                server: Some(server.to_owned()),
                certificate_authority: path(ca),
                ..Cluster::default()
            }),
            ..NamedCluster::default()
        }],
        auth_infos: vec![NamedAuthInfo {
            name: user.to_owned(),
            auth_info: Some(auth),
            ..NamedAuthInfo::default()
        }],
        contexts: vec![NamedContext {
            name: NAME.to_owned(),
            context: Some(Context {
                cluster: NAME.to_owned(),
                user: Some(user.to_owned()),
                ..Context::default()
            }),
            ..NamedContext::default()
        }],
        current_context: Some(NAME.to_owned()),
        kind: Some("Config".to_owned()),
        api_version: Some("v1".to_owned()),
        ..Kubeconfig::default()
    }
}

/// Writes `config` to `path` as JSON, which kubectl and client-go read as YAML.
pub(crate) fn write(config: &Kubeconfig, path: &Path) -> Result<PathBuf> {
    let text = serde_json::to_string_pretty(config)
        .map_err(|error| Error::io(path)(std::io::Error::other(error)))?;
    std::fs::write(path, text + "\n").map_err(Error::io(path))?;
    Ok(path.to_path_buf())
}

/// A kube client config for a kubeconfig built here.
pub(crate) async fn client_config(config: Kubeconfig) -> Result<kube::Config> {
    let options = kube::config::KubeConfigOptions {
        context: Some(NAME.to_owned()),
        ..Default::default()
    };
    Ok(kube::Config::from_custom_kubeconfig(config, &options).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_kubeconfig_reads_back_with_the_same_names() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = build(
            "https://127.0.0.1:6443",
            &dir.path().join("ca.crt"),
            "admin",
            Credentials::ClientCert {
                cert: &dir.path().join("a.crt"),
                key: &dir.path().join("a.key"),
            },
        );
        let path = write(&config, &dir.path().join("kubeconfig")).expect("write");
        let back = Kubeconfig::read_from(&path).expect("read back");
        assert_eq!(back.current_context.as_deref(), Some(NAME));
        let cluster = back.clusters[0].cluster.as_ref().expect("cluster");
        assert_eq!(cluster.server.as_deref(), Some("https://127.0.0.1:6443"));
        let user = back.auth_infos[0].auth_info.as_ref().expect("user");
        assert!(
            user.client_key
                .as_deref()
                .is_some_and(|k| k.ends_with("a.key"))
        );
        assert_eq!(
            back.contexts[0]
                .context
                .as_ref()
                .and_then(|c| c.user.as_deref()),
            Some("admin")
        );
    }
}
