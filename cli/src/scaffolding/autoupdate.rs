//! The autoupdate plugin of `operator-gen edit --plugins autoupdate`: a scheduled GitHub Actions
//! workflow (`.github/workflows/auto_update.yml`) that installs the newest operator-gen and runs
//! `hack/auto-update.sh`, which runs `alpha update` and proposes its merge branch as a pull
//! request, or lists its conflicts in an issue. Both files are the generator's: every `edit
//! --plugins autoupdate` writes them again, as kubebuilder's plugin does its workflow.

use serde_json::json;

use crate::error::{Error, Result};
use crate::project::Project;
use crate::scaffold::{IfExists, Scaffold};
use crate::templates::Engine;

/// The plugin's key in `PROJECT`'s `plugins`.
pub const PLUGIN_KEY: &str = "autoupdate.operator-gen.io/v1-alpha";
/// The names `--plugins` accepts for it.
pub const NAMES: &[&str] = &["autoupdate", "autoupdate/v1-alpha", PLUGIN_KEY];

/// The files the plugin writes: (template, path in the project).
const FILES: &[(&str, &str)] = &[
    (
        "plugins/autoupdate/.github/workflows/auto_update.yml.tera",
        ".github/workflows/auto_update.yml",
    ),
    (
        "plugins/autoupdate/hack/auto-update.sh.tera",
        "hack/auto-update.sh",
    ),
];

/// Stage the workflow and its script; a project whose `PROJECT` records no `cliVersion`, which
/// `alpha update` starts from, is refused.
pub fn stage(s: &mut Scaffold, engine: &Engine, project: &Project) -> Result<()> {
    if project.cli_version.is_none() {
        return Err(Error::msg(
            "PROJECT records no cliVersion, which alpha update (and so the autoupdate workflow) starts from; add `cliVersion: <the operator-gen version that scaffolded the project>` to PROJECT",
        ));
    }
    let ctx = json!({
        "project_name": project.project_name,
        "repository": env!("CARGO_PKG_REPOSITORY"),
    });
    for (template, rel) in FILES {
        s.file(rel, engine.render(template, &ctx)?, IfExists::Overwrite)?;
    }
    Ok(())
}
