//! `operator-gen alpha export-template <dir>`: turn `init`'s file set into a cargo-generate
//! template, so `cargo generate` and `operator-gen init` write the same project from one source.
//!
//! The init templates are rendered with sentinel values; the output is escaped for Liquid, and
//! each sentinel is then replaced by the Liquid expression that computes the same text from the
//! template's placeholders. `cargo-generate.toml` and a validation hook complete the template.

use std::path::Path;

use crate::error::{Error, Result};
use crate::printer::Printer;
use crate::project::boilerplate::apache2_header;
use crate::project::names::RUST_KEYWORDS;
use crate::project::runtime_crates::{LocalCrate, OUR_CRATES};
use crate::project::validate::{RESERVED_CRATES, YAML_WORDS};
use crate::project::versions;
use crate::scaffold::{IfExists, Scaffold};
use crate::scaffolding::init::{self, InitContext};
use crate::templates::Engine;

/// The template's configuration file.
pub const CONFIG_FILE: &str = "cargo-generate.toml";

/// The suffix cargo-generate strips from a template file's name.
pub const LIQUID_SUFFIX: &str = ".liquid";

/// The pre hook checking what the placeholders' regexes cannot express.
pub const HOOK_FILE: &str = "validate.rhai";

/// The cargo-generate release the template is written and tested for.
pub const CARGO_GENERATE_VERSION: &str = "0.26.0";

/// Sentinels: each is rendered by the init templates, then replaced by Liquid. They are chosen
/// to read like the values they stand for (a YAML float for the version, a plain word for the
/// names) so serializers quote them as they quote the real values.
const PROJECT_NAME: &str = "sentinel-project-name";
const CRATE_NAME: &str = "sentinel_project_name";
const DOMAIN: &str = "sentinel-domain.invalid";
const K8S_VERSION: &str = "1.9999";
const K8S_FEATURE: &str = "v1_9999";
/// The source of one of operator-gen's crates in the local cargo config, by its checkout directory.
fn source_sentinel(dir: &str) -> String {
    format!("{{ sentinel-source {dir} }}")
}
const HEADER: &str = "// sentinel-header\n";

/// Export the template into `dir`, which must be empty, missing, or a previous export.
pub fn run(dir: &Path, printer: &Printer) -> Result<()> {
    let absolute = std::path::absolute(dir).map_err(|e| Error::io("resolve", dir, e))?;
    let dir = absolute.as_path();
    check_target(dir)?;
    let files = template_files()?;
    let mut stale = Vec::new();
    collect_files(dir, dir, &mut stale)?;
    let mut scaffold = Scaffold::new(dir);
    for (rel, text) in &files {
        scaffold.file(rel, text.clone(), IfExists::Overwrite)?;
    }
    // No `check()`: the files are Liquid, not yet YAML or Rust.
    scaffold.commit(printer)?;
    for rel in stale {
        if !files.iter().any(|(r, _)| *r == rel) {
            let path = dir.join(&rel);
            std::fs::remove_file(&path).map_err(|e| Error::io("remove", &path, e))?;
            printer.status("removed", &rel);
        }
    }
    printer.hint(&format!(
        "Expand it with:\n$ cargo generate --path {} --name <project-name> -d domain=<domain>",
        dir.display()
    ));
    Ok(())
}

fn check_target(dir: &Path) -> Result<()> {
    let Ok(mut entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    if entries.next().is_none() || dir.join(CONFIG_FILE).is_file() {
        return Ok(());
    }
    Err(Error::msg(format!(
        "{} is neither empty nor an exported template (it has no {CONFIG_FILE}); pass an empty or new directory",
        dir.display()
    )))
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(root, &path, out)?;
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

/// Every file of the template (path → contents): init's files as Liquid, the configuration
/// and the hook.
pub fn template_files() -> Result<Vec<(String, String)>> {
    let ctx = InitContext {
        header: HEADER.to_owned(),
        project_name: PROJECT_NAME.to_owned(),
        crate_name: CRATE_NAME.to_owned(),
        domain: DOMAIN.to_owned(),
        multigroup: false,
        namespaced: false,
        k8s_version: K8S_VERSION.to_owned(),
        k8s_feature: K8S_FEATURE.to_owned(),
        runtime_version: versions::CLI.to_owned(),
        our_crates: OUR_CRATES.to_vec(),
        local_crates: OUR_CRATES
            .iter()
            .map(|c| LocalCrate {
                name: c.name.to_owned(),
                source: source_sentinel(c.dir),
            })
            .collect(),
        rust_version: versions::RUST.to_owned(),
        kube_version: versions::KUBE.to_owned(),
        k8s_openapi_version: versions::K8S_OPENAPI.to_owned(),
        cli_version: versions::CLI.to_owned(),
        repository: env!("CARGO_PKG_REPOSITORY").to_owned(),
    };
    let mut out = Vec::new();
    for (rel, text) in init::files(&ctx)? {
        if rel == CONFIG_FILE || rel == HOOK_FILE {
            return Err(Error::msg(format!(
                "init writes {rel}, which cargo-generate reserves; rename the template"
            )));
        }
        let liquid = to_liquid(&text);
        if let Some(left) = ["sentinel", "9999"].iter().find(|s| liquid.contains(**s)) {
            return Err(Error::msg(format!(
                "{rel}: the init templates transform a value (`{left}` is left after substitution); compute it in the context instead"
            )));
        }
        // cargo reads every Cargo.toml of a git repository it takes a crate from (a generated
        // project's `--runtime-git` patch), and Liquid is not TOML: cargo-generate strips `.liquid`
        let rel = if rel.ends_with("Cargo.toml") {
            format!("{rel}{LIQUID_SUFFIX}")
        } else {
            rel
        };
        out.push((rel, liquid));
    }
    let engine = Engine::new()?;
    out.push((CONFIG_FILE.to_owned(), config(&engine)?));
    out.push((HOOK_FILE.to_owned(), hook(&engine)?));
    out.sort();
    Ok(out)
}

/// Escape `text` for Liquid, then put the placeholders' Liquid in place of the sentinels.
fn to_liquid(text: &str) -> String {
    let escaped = text
        .replace("{{", "\u{0}{{\u{1}")
        .replace("{%", "\u{0}{%\u{1}")
        .replace('\u{0}', "{% raw %}")
        .replace('\u{1}', "{% endraw %}");
    let copyright = concat!(
        r#"{% assign owner_ = owner | strip %}"#,
        r#"Copyright {{ "now" | date: "%Y" }}{% if owner_ != "" %} {{ owner_ }}{% endif %}."#
    );
    let header = format!(
        "{{% if license == \"apache2\" %}}{}{{% endif %}}",
        apache2_header(copyright)
    );
    let mut escaped = escaped;
    for c in OUR_CRATES {
        let source = format!(
            r#"{{% if runtime contains "://" %}}{{ git = "{{{{ runtime }}}}" }}{{% else %}}{{ path = "{{{{ runtime }}}}/{dir}" }}{{% endif %}}"#,
            dir = c.dir
        );
        escaped = escaped.replace(&source_sentinel(c.dir), &source);
    }
    escaped
        .replace(HEADER, &header)
        .replace(PROJECT_NAME, "{{ project-name }}")
        .replace(CRATE_NAME, "{{ crate_name }}")
        .replace(DOMAIN, "{{ domain }}")
        .replace(K8S_FEATURE, r#"v{{ k8s_version | replace: ".", "_" }}"#)
        .replace(K8S_VERSION, "{{ k8s_version }}")
}

/// A regex for a DNS-1123 subdomain made of labels of at most 63 characters (the 253-character
/// total is checked by the hook).
const DOMAIN_REGEX: &str =
    r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$";

/// `cargo-generate.toml`: the template's placeholders, with init's defaults and checks.
fn config(engine: &Engine) -> Result<String> {
    let minors: Vec<String> = versions::K8S_MINORS
        .iter()
        .map(|m| format!("\"1.{m}\""))
        .collect();
    let ctx = serde_json::json!({
        "repository": env!("CARGO_PKG_REPOSITORY"),
        "hook": HOOK_FILE,
        "cargo_generate": CARGO_GENERATE_VERSION,
        "domain_regex": DOMAIN_REGEX,
        "minors": minors.join(", "),
        "k8s_default": versions::K8S_DEFAULT,
    });
    engine.render("export/cargo-generate.toml.tera", &ctx)
}

fn rhai_list(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    quoted.join(", ")
}

/// The pre hook: the checks of `init` the placeholders' regexes cannot express.
fn hook(engine: &Engine) -> Result<String> {
    let ctx = serde_json::json!({
        "keywords": rhai_list(RUST_KEYWORDS),
        "reserved": rhai_list(RESERVED_CRATES),
        "yaml": rhai_list(YAML_WORDS),
    });
    engine.render("export/validate.rhai.tera", &ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_liquid_delimiters() {
        assert_eq!(
            to_liquid("key: ${{ runner.os }} {%x"),
            "key: ${% raw %}{{{% endraw %} runner.os }} {% raw %}{%{% endraw %}x"
        );
    }

    #[test]
    fn replaces_sentinels() {
        assert_eq!(
            to_liquid("name = \"sentinel-project-name\"\nlib = \"sentinel_project_name\""),
            "name = \"{{ project-name }}\"\nlib = \"{{ crate_name }}\""
        );
        assert_eq!(
            to_liquid("features = [\"v1_9999\"] # 1.9999"),
            "features = [\"v{{ k8s_version | replace: \".\", \"_\" }}\"] # {{ k8s_version }}"
        );
    }
}
