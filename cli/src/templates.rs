//! The embedded Tera templates: every file under `templates/` is compiled into the binary and
//! loaded into one Tera instance; `x.rs.tera` renders to `x.rs`.

use include_dir::{Dir, include_dir};
use serde::Serialize;
use tera::{Context, Tera};

use crate::error::{Error, Result};
use crate::project::markers;

/// The `templates/` tree, embedded at build time.
pub static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../templates");

/// The suffix every template file carries.
pub const SUFFIX: &str = ".tera";

/// The loaded templates.
pub struct Engine {
    tera: Tera,
}

/// Every embedded file, as (path relative to `templates/`, contents).
pub fn embedded_files() -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    collect(&TEMPLATES, &mut out);
    out.sort();
    out
}

fn collect(dir: &'static Dir<'static>, out: &mut Vec<(String, &'static str)>) {
    for file in dir.files() {
        let name = file.path().to_string_lossy().replace('\\', "/");
        out.push((name, file.contents_utf8().unwrap_or("")));
    }
    for sub in dir.dirs() {
        collect(sub, out);
    }
}

impl Engine {
    /// Load every embedded template; a file that is not UTF-8, lacks the `.tera` suffix or
    /// does not parse is an error.
    pub fn new() -> Result<Engine> {
        let mut tera = Tera::new();
        // Code generation: never HTML-escape anything.
        tera.autoescape_on(Vec::<&str>::new());
        let mut sources = Vec::new();
        collect_checked(&TEMPLATES, &mut sources)?;
        tera.add_raw_templates(sources)
            .map_err(|e| Error::Template {
                name: "(loading)".into(),
                message: report(&e),
            })?;
        Ok(Engine { tera })
    }

    /// Render `name` (a path under `templates/`, with its `.tera` suffix) with `context` and
    /// the markers.
    pub fn render(&self, name: &str, context: &impl Serialize) -> Result<String> {
        let ctx = self::context(name, context)?;
        self.tera.render(name, &ctx).map_err(|e| Error::Template {
            name: name.into(),
            message: report(&e),
        })
    }

    /// The template names under `prefix` (e.g. `init/`), sorted.
    pub fn names_under(&self, prefix: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .tera
            .get_template_names()
            .filter(|n| n.starts_with(prefix))
            .map(str::to_owned)
            .collect();
        names.sort();
        names
    }

    /// Whether a template is loaded.
    pub fn contains(&self, name: &str) -> bool {
        self.tera.contains_template(name)
    }
}

/// The Tera context of template `name`: `value`'s fields, and `markers`, the scaffold markers by
/// key ([`markers::table`]), which templates write as `{{ markers.modules }}`.
pub fn context(name: &str, value: &impl Serialize) -> Result<Context> {
    let mut ctx = Context::from_serialize(value).map_err(|e| Error::Template {
        name: name.into(),
        message: report(&e),
    })?;
    ctx.insert("markers", &markers::table());
    Ok(ctx)
}

fn collect_checked(
    dir: &'static Dir<'static>,
    out: &mut Vec<(String, &'static str)>,
) -> Result<()> {
    for file in dir.files() {
        let name = file.path().to_string_lossy().replace('\\', "/");
        if !name.ends_with(SUFFIX) {
            return Err(Error::Template {
                name,
                message: format!("every file under templates/ must end in {SUFFIX}"),
            });
        }
        let Some(text) = file.contents_utf8() else {
            return Err(Error::Template {
                name,
                message: "not UTF-8".into(),
            });
        };
        out.push((name, text));
    }
    for sub in dir.dirs() {
        collect_checked(sub, out)?;
    }
    Ok(())
}

fn report(e: &tera::Error) -> String {
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    message.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn on_disk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir)
            .expect("read templates dir")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                on_disk(&path, root, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }

    #[test]
    fn every_template_on_disk_is_embedded_and_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates");
        let mut disk = Vec::new();
        on_disk(&root, &root, &mut disk);
        disk.sort();
        let embedded: Vec<String> = embedded_files().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            disk, embedded,
            "templates/ and the embedded tree differ; rebuild the CLI"
        );
        let engine = match Engine::new() {
            Ok(e) => e,
            Err(e) => panic!("{e}"),
        };
        for name in &disk {
            assert!(name.ends_with(SUFFIX), "{name} lacks the {SUFFIX} suffix");
            assert!(engine.contains(name), "{name} is not loaded");
        }
        assert!(!engine.names_under("init/").is_empty());
        assert!(!engine.names_under("api/").is_empty());
    }
}
