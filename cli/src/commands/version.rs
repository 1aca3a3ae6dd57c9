//! `operator-gen version`: the CLI version and the crate versions it scaffolds.

use crate::project::versions;

/// The text `version` prints.
pub fn text() -> String {
    let minors: Vec<String> = versions::K8S_MINORS
        .iter()
        .map(|m| format!("1.{m}"))
        .collect();
    format!(
        "operator-gen {cli}\nkube {kube}\nk8s-openapi {openapi} (Kubernetes {first} to {last}, default {default})\n",
        cli = versions::CLI,
        kube = versions::KUBE,
        openapi = versions::K8S_OPENAPI,
        first = minors.first().map(String::as_str).unwrap_or_default(),
        last = minors.last().map(String::as_str).unwrap_or_default(),
        default = versions::K8S_DEFAULT,
    )
}
