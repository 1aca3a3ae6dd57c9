//! The feature gates the control plane turns on beyond the apiserver's defaults, each only on
//! the releases that know it (an apiserver refuses to start with a gate it does not know).

use std::path::Path;
use std::process::Command;

/// Alpha gates the control plane turns on, each with the first minor release of Kubernetes 1
/// that has it: `ShardedListAndWatch`, the server-side `shardSelector` of list and watch.
const GATES: &[(&str, u32)] = &[("ShardedListAndWatch", 36)];

/// `--feature-gates=...` for the apiserver at `binary`, from its `--version`; `None` when it
/// knows none of [`GATES`] or its version cannot be read.
pub(crate) fn flag(binary: &Path) -> Option<String> {
    let output = Command::new(binary).arg("--version").output().ok()?;
    let minor = minor_version(&String::from_utf8_lossy(&output.stdout))?;
    flag_for(minor)
}

fn flag_for(minor: u32) -> Option<String> {
    let on: Vec<String> = GATES
        .iter()
        .filter(|(_, since)| minor >= *since)
        .map(|(gate, _)| format!("{gate}=true"))
        .collect();
    (!on.is_empty()).then(|| format!("--feature-gates={}", on.join(",")))
}

/// The minor version of `Kubernetes v1.<minor>.<patch>...`, as `kube-apiserver --version` prints it.
fn minor_version(text: &str) -> Option<u32> {
    let version = text.trim().strip_prefix("Kubernetes v1.")?;
    let digits: String = version.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_are_turned_on_from_the_release_that_has_them() {
        assert_eq!(minor_version("Kubernetes v1.37.2\n"), Some(37));
        assert_eq!(minor_version("Kubernetes v1.36.0-alpha.1"), Some(36));
        assert_eq!(minor_version("v1.37.2"), None);
        assert_eq!(
            flag_for(37).as_deref(),
            Some("--feature-gates=ShardedListAndWatch=true")
        );
        assert_eq!(
            flag_for(36).as_deref(),
            Some("--feature-gates=ShardedListAndWatch=true")
        );
        assert_eq!(flag_for(35), None);
    }
}
