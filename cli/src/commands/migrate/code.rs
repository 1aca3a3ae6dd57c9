//! The Go code of a kubebuilder project carried into the scaffolded Rust files: each
//! controller's `+kubebuilder:rbac` markers replace the scaffold's, each webhook file's
//! `+kubebuilder:webhook` markers replace the scaffold's, and the Go functions (the reconciler,
//! the defaulter and validator, the conversions) are appended as comments to port. A spoke's
//! conversion becomes `From` impls that say, when called, what is left to port.

use std::collections::BTreeMap;

use super::go::GoFile;
use super::report::Report;
use crate::project::{Project, names, paths};

/// The Go files of the project outside `api/` (and those of `api/`): relative path → text and
/// its parse.
pub struct GoSources {
    pub files: BTreeMap<String, (String, Option<GoFile>)>,
}

/// The marker lines of a Go file with the given prefix (`+kubebuilder:rbac:`), in order.
pub fn marker_lines(text: &str, prefix: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("//"))
        .map(str::trim)
        .filter(|l| l.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

/// Replace the `//! <prefix>` lines of `rust` by `markers` (at the first one's place, or after
/// the module doc when there is none).
pub fn replace_markers(rust: &str, prefix: &str, markers: &[String]) -> String {
    let strip = format!("//! {prefix}");
    let mut out = String::new();
    let mut placed = false;
    let put = |out: &mut String| {
        for m in markers {
            out.push_str(&format!("//! {m}\n"));
        }
    };
    let mut lines = rust.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with(&strip) {
            if !placed {
                put(&mut out);
                placed = true;
            }
            continue;
        }
        let last_doc =
            line.starts_with("//!") && !lines.peek().is_some_and(|n| n.starts_with("//!"));
        out.push_str(line);
        out.push('\n');
        if last_doc && !placed && !markers.is_empty() {
            out.push_str("//!\n");
            put(&mut out);
            placed = true;
        }
    }
    out
}

/// Go source as a block of `//` comment lines under a title.
pub fn commented(title: &str, go: &[String]) -> String {
    let mut out = format!("\n// {title}\n");
    for block in go {
        out.push_str("//\n");
        for line in block.lines() {
            if line.is_empty() {
                out.push_str("//\n");
            } else {
                out.push_str(&format!("// {}\n", line.replace('\t', "    ")));
            }
        }
    }
    out
}

/// The Go file among `files` under `dir` holding a method of `receiver`, preferring one whose
/// path has `prefer` as a directory.
pub fn find_receiver<'a>(
    sources: &'a GoSources,
    dir: &str,
    receiver: &str,
    prefer: &str,
) -> Option<(&'a str, &'a String, &'a GoFile)> {
    let mut found = None;
    for (path, (text, file)) in &sources.files {
        let Some(file) = file else { continue };
        if !path.starts_with(dir) {
            continue;
        }
        if file
            .funcs
            .iter()
            .any(|f| f.receiver.as_deref() == Some(receiver))
        {
            let better = path.contains(&format!("/{prefer}/"));
            if found.is_none() || better {
                found = Some((path.as_str(), text, file));
            }
            if better {
                break;
            }
        }
    }
    found
}

/// The Rust controller file of a kind.
pub fn controller_file(project: &Project, group: &str, kind: &str) -> String {
    let kind_module = names::kind_module(kind);
    if project.multigroup {
        format!(
            "src/controller/{}/{kind_module}.rs",
            names::module_name(group)
        )
    } else {
        format!("src/controller/{kind_module}.rs")
    }
}

/// The Rust webhook file of a kind's version.
pub fn webhook_file(project: &Project, group: &str, version: &str, kind: &str) -> String {
    format!(
        "src/webhook/{}/{}.rs",
        paths::version_dir(project, group, version),
        names::kind_module(kind)
    )
}

/// The Rust file of a spoke's conversion.
pub fn conversion_file(project: &Project, group: &str, spoke: &str, kind: &str) -> String {
    format!(
        "src/api/{}/{}_conversion.rs",
        paths::version_dir(project, group, spoke),
        names::kind_module(kind)
    )
}

/// The text of every function of `file` whose receiver is one of `receivers` (all of them
/// when `receivers` is empty).
pub fn funcs_of(file: &GoFile, receivers: &[&str]) -> Vec<String> {
    file.funcs
        .iter()
        .filter(|f| {
            receivers.is_empty()
                || f.receiver
                    .as_deref()
                    .is_some_and(|r| receivers.contains(&r))
        })
        .map(|f| f.text.clone())
        .collect()
}

/// A spoke's conversion file: the scaffold's module doc and `use`, then `From` impls that
/// stop with what to port, and the Go functions as comments.
pub fn conversion(scaffolded: &str, kind: &str, go_path: &str, go: &[String]) -> String {
    let head_end = scaffolded.find("\nimpl ").unwrap_or(scaffolded.len());
    let head: String = scaffolded[..head_end]
        .lines()
        .filter(|l| !l.starts_with("// TODO(user)") && !l.starts_with("// scaffold gives"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut out = head.trim_end().to_owned();
    out.push_str(&format!(
        "\n\n// TODO(user): port the Go conversion of {go_path} (below) into these two impls.\n\nimpl From<super::{kind}> for hub::{kind} {{\n    fn from(_spoke: super::{kind}) -> Self {{\n        todo!(\"port ConvertTo of {go_path}\")\n    }}\n}}\n\nimpl From<hub::{kind}> for super::{kind} {{\n    fn from(_hub: hub::{kind}) -> Self {{\n        todo!(\"port ConvertFrom of {go_path}\")\n    }}\n}}\n"
    ));
    out.push_str(&commented(
        &format!("The Go conversion ({go_path}), to port:"),
        go,
    ));
    out
}

/// Report a Go file whose code was kept as comments.
pub fn report_kept(report: &mut Report, go_path: &str, rust_path: &str, what: &str) {
    report.add(
        "code",
        go_path,
        format!("{what} kept as comments at the end of {rust_path}: port it"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_replace_the_scaffolds() {
        let rust = "//! The controller.\n//!\n//! +kubebuilder:rbac:groups=a,resources=b,verbs=get\n//! +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create\n\nuse x;\n";
        let go = "// +kubebuilder:rbac:groups=a,resources=b,verbs=get;list\nfunc f() {}\n";
        let markers = marker_lines(go, "+kubebuilder:rbac:");
        let out = replace_markers(rust, "+kubebuilder:rbac:", &markers);
        assert_eq!(
            out,
            "//! The controller.\n//!\n//! +kubebuilder:rbac:groups=a,resources=b,verbs=get;list\n\nuse x;\n"
        );
        let none = replace_markers("//! Doc.\n\nuse x;\n", "+kubebuilder:rbac:", &markers);
        assert!(
            none.starts_with("//! Doc.\n//!\n//! +kubebuilder:rbac:groups=a"),
            "{none}"
        );
    }

    #[test]
    fn go_code_becomes_comments() {
        let text = commented("Go:", &["func f() {\n\treturn\n\n}".to_owned()]);
        assert_eq!(
            text,
            "\n// Go:\n//\n// func f() {\n//     return\n//\n// }\n"
        );
    }
}
