//! `create api --image`: kubebuilder's deploy-image/v1-alpha plugin. A kind whose controller
//! deploys and keeps a Deployment of one image; its options as `PROJECT` records them, under
//! `plugins: deploy-image.go.kubebuilder.io/v1-alpha: resources:`, with kubebuilder's field
//! names and string values, so `alpha generate` and `alpha update` replay them.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::project::{Project, ResourceEntry};

/// The plugin's key in `PROJECT`'s `plugins`, kubebuilder's.
pub const PLUGIN_KEY: &str = "deploy-image.go.kubebuilder.io/v1-alpha";

/// The flags of the plugin, as `PROJECT` records them (kubebuilder's `options`, in its order).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Options {
    /// The container's command, comma-separated (`--image-container-command`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub container_command: String,
    /// The container's port (`--image-container-port`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub container_port: String,
    /// The operand's image (`--image`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub image: String,
    /// The container's user ID (`--run-as-user`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_as_user: String,
}

/// One resource of the plugin's configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct ResourceData {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    domain: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    group: String,
    kind: String,
    #[serde(default)]
    options: Options,
    version: String,
}

/// The plugin's configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Config {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    resources: Vec<ResourceData>,
}

/// What the templates of a deploy-image kind see as `deploy_image`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeployImageContext {
    /// The image.
    pub image: String,
    /// The container's command, one word per element; empty for the image's own.
    pub command: Vec<String>,
    /// The container's port, when given.
    pub port: Option<u16>,
    /// The container's user ID, when given.
    pub run_as_user: Option<i64>,
    /// The environment variable that overrides the image (`MEMCACHED_IMAGE`).
    pub image_env: String,
}

impl Options {
    /// The options checked: an image of one word, a port in 1..=65535, a user ID of 0 or more;
    /// the context the templates see.
    pub fn check(&self, kind: &str) -> Result<DeployImageContext> {
        let image = self.image.trim();
        if image.is_empty()
            || image
                .chars()
                .any(|c| c.is_whitespace() || c == '"' || c == '\\')
        {
            return Err(Error::msg(format!(
                "--image {:?} is not an image reference; pass one such as memcached:1.6.26-alpine",
                self.image
            )));
        }
        let port = match self.container_port.trim() {
            "" => None,
            p => Some(p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                Error::msg(format!(
                    "--image-container-port {p:?} is not a port; pass a number from 1 to 65535"
                ))
            })?),
        };
        let run_as_user = match self.run_as_user.trim() {
            "" => None,
            u => Some(u.parse::<i64>().ok().filter(|u| *u >= 0).ok_or_else(|| {
                Error::msg(format!(
                    "--run-as-user {u:?} is not a user ID; pass a number of 0 or more"
                ))
            })?),
        };
        let command: Vec<String> = self
            .container_command
            .split(',')
            .map(|w| w.trim().to_owned())
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(bad) = command.iter().find(|w| w.contains(['"', '\\'])) {
            return Err(Error::msg(format!(
                "--image-container-command word {bad:?} holds a quote or a backslash; pass the command's words separated by commas, without quotes"
            )));
        }
        Ok(DeployImageContext {
            image: image.to_owned(),
            command,
            port,
            run_as_user,
            image_env: format!("{}_IMAGE", kind.to_uppercase()),
        })
    }
}

fn config(project: &Project) -> Config {
    project
        .plugins
        .get(PLUGIN_KEY)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

fn same(d: &ResourceData, r: &ResourceEntry) -> bool {
    d.group == r.group && d.version == r.version && d.kind == r.kind
}

/// The options `PROJECT` records for resource `r`, when it was created with `--image`.
pub fn options_of(project: &Project, r: &ResourceEntry) -> Option<Options> {
    config(project)
        .resources
        .into_iter()
        .find(|d| same(d, r))
        .map(|d| d.options)
}

/// Records `options` for `r` in `project`'s plugins, replacing an earlier record of it; `None`
/// takes the record out (and the plugin's key with its last resource).
pub fn record(project: &mut Project, r: &ResourceEntry, options: Option<&Options>) {
    let mut cfg = config(project);
    cfg.resources.retain(|d| !same(d, r));
    if let Some(options) = options {
        cfg.resources.push(ResourceData {
            domain: r.domain.clone(),
            group: r.group.clone(),
            kind: r.kind.clone(),
            options: options.clone(),
            version: r.version.clone(),
        });
    }
    if cfg.resources.is_empty() {
        project.plugins.remove(PLUGIN_KEY);
    } else if let Ok(value) = serde_json::to_value(&cfg) {
        project.plugins.insert(PLUGIN_KEY.to_owned(), value);
    }
}

/// The `create api` flags that give `options` again (`alpha generate`'s replay).
pub fn flags(options: &Options) -> Vec<String> {
    let mut args = vec!["--image".to_owned(), options.image.clone()];
    for (flag, value) in [
        ("--image-container-command", &options.container_command),
        ("--image-container-port", &options.container_port),
        ("--run-as-user", &options.run_as_user),
    ] {
        if !value.is_empty() {
            args.push(flag.to_owned());
            args.push(value.clone());
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(image: &str, command: &str, port: &str, user: &str) -> Options {
        Options {
            image: image.into(),
            container_command: command.into(),
            container_port: port.into(),
            run_as_user: user.into(),
        }
    }

    #[test]
    fn checks_each_flag() {
        let ok = options("memcached:1.6", "memcached, -m=64,,-v", "11211", "1001")
            .check("Memcached")
            .expect("valid");
        assert_eq!(ok.command, ["memcached", "-m=64", "-v"]);
        assert_eq!(ok.port, Some(11211));
        assert_eq!(ok.run_as_user, Some(1001));
        assert_eq!(ok.image_env, "MEMCACHED_IMAGE");
        for (bad, flag) in [
            (options("", "", "", ""), "--image"),
            (options("a b", "", "", ""), "--image"),
            (options("m:1", "", "0", ""), "--image-container-port"),
            (options("m:1", "", "65536", ""), "--image-container-port"),
            (options("m:1", "", "http", ""), "--image-container-port"),
            (options("m:1", "", "", "-1"), "--run-as-user"),
            (
                options("m:1", "a,\"b\"", "", ""),
                "--image-container-command",
            ),
        ] {
            let e = bad.check("M").expect_err("refused").to_string();
            assert!(e.starts_with(flag), "{e}");
        }
    }
}
