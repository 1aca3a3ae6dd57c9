//! The embedded Tera templates: every file under `templates/` is compiled into the binary and
//! loaded into one Tera instance; `x.rs.tera` renders to `x.rs`. A project's own templates
//! (`.operator-gen/templates/` in it) and the user's (`$XDG_CONFIG_HOME/operator-gen/templates/`)
//! override them, or add to them, by path: the project's over the user's over the embedded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};
use serde::Serialize;
use tera::{Context, Tera};

use crate::error::{Error, Result};
use crate::project::markers;

/// The `templates/` tree, embedded at build time.
pub static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../templates");

/// The suffix every template file carries.
pub const SUFFIX: &str = ".tera";

/// Where a project keeps its own templates, relative to its root.
pub const PROJECT_DIR: &str = ".operator-gen/templates";

/// The key under which `PROJECT`'s `plugins` lists the project's own templates.
pub const PLUGIN_KEY: &str = "templates.operator-gen.io/v1-alpha";

/// The loaded templates.
pub struct Engine {
    tera: Tera,
    /// The templates read from a template directory: name → the file, as errors name it.
    own: BTreeMap<String, Own>,
}

/// A template read from a template directory.
#[derive(Clone, Debug)]
struct Own {
    /// The file, relative to the project for a project's own, absolute for the user's.
    shown: String,
    /// From the project's directory (else the user's).
    project: bool,
}

/// The user's template directory: `$XDG_CONFIG_HOME/operator-gen/templates`, else
/// `$HOME/.config/operator-gen/templates`.
pub fn user_dir() -> Option<PathBuf> {
    let set = |v: &str| {
        std::env::var_os(v)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    };
    let config = set("XDG_CONFIG_HOME").or_else(|| set("HOME").map(|h| h.join(".config")))?;
    Some(config.join("operator-gen").join("templates"))
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
        Ok(Engine {
            tera,
            own: BTreeMap::new(),
        })
    }

    /// The embedded templates with the user's and then the project's at `root` over them: each
    /// file `<dir>/<name>` replaces the embedded `<name>`, or adds it. A file that is not UTF-8,
    /// lacks the `.tera` suffix or does not parse is an error naming it (and the line).
    pub fn for_project(root: &Path) -> Result<Engine> {
        let mut engine = Engine::new()?;
        let mut sources: BTreeMap<String, String> = BTreeMap::new();
        if let Some(dir) = user_dir() {
            let shown = |rel: &str| dir.join(rel).display().to_string();
            read_dir_templates(&dir, "", &shown, false, &mut sources, &mut engine.own)?;
        }
        let dir = root.join(PROJECT_DIR);
        let shown = |rel: &str| format!("{PROJECT_DIR}/{rel}");
        read_dir_templates(&dir, "", &shown, true, &mut sources, &mut engine.own)?;
        if sources.is_empty() {
            return Ok(engine);
        }
        let own = engine.own.clone();
        engine
            .tera
            .add_raw_templates(sources)
            .map_err(|e| own_error(&own, &e, "(loading)"))?;
        Ok(engine)
    }

    /// The project's own templates (from [`PROJECT_DIR`]), sorted.
    pub fn project_templates(&self) -> Vec<String> {
        let own = self.own.iter().filter(|(_, o)| o.project);
        own.map(|(name, _)| name.clone()).collect()
    }

    /// The templates under `prefix` that a template directory adds (no embedded one has their
    /// name), sorted.
    pub fn added_under(&self, prefix: &str) -> Vec<String> {
        let embedded: Vec<String> = embedded_files().into_iter().map(|(n, _)| n).collect();
        let own = self.own.keys().filter(|n| n.starts_with(prefix));
        own.filter(|n| !embedded.contains(n)).cloned().collect()
    }

    /// Render `name` (a path under `templates/`, with its `.tera` suffix) with `context` and
    /// the markers.
    pub fn render(&self, name: &str, context: &impl Serialize) -> Result<String> {
        let ctx = self::context(name, context)?;
        self.tera
            .render(name, &ctx)
            .map_err(|e| own_error(&self.own, &e, name))
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

/// Reads every file under `dir/prefix` into `sources` by its name (its path under `dir`),
/// recording it in `own`; a missing directory adds nothing.
fn read_dir_templates(
    dir: &Path,
    prefix: &str,
    shown: &dyn Fn(&str) -> String,
    project: bool,
    sources: &mut BTreeMap<String, String>,
    own: &mut BTreeMap<String, Own>,
) -> Result<()> {
    let here = dir.join(prefix);
    let Ok(entries) = std::fs::read_dir(&here) else {
        return Ok(());
    };
    let mut names: Vec<(String, bool)> = entries
        .flatten()
        .map(|e| {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            (e.file_name().to_string_lossy().into_owned(), is_dir)
        })
        .collect();
    names.sort();
    for (file, is_dir) in names {
        let rel = format!("{prefix}{file}");
        if is_dir {
            read_dir_templates(dir, &format!("{rel}/"), shown, project, sources, own)?;
            continue;
        }
        let at = shown(&rel);
        if !rel.ends_with(SUFFIX) {
            return Err(Error::msg(format!(
                "{at}: a template's name ends in {SUFFIX}; rename it or move it out of the template directory"
            )));
        }
        let text = crate::gate::read_text(&dir.join(&rel))?
            .ok_or_else(|| Error::msg(format!("{at}: cannot be read as a template; remove it")))?;
        sources.insert(rel.clone(), text);
        own.insert(rel, Own { shown: at, project });
    }
    Ok(())
}

/// A Tera error as one line: `<file>:<line>: <message>` for a template of a template directory,
/// with how to fix it; else as [`report`] gives it.
fn own_error(own: &BTreeMap<String, Own>, e: &tera::Error, name: &str) -> Error {
    let located = match e.kind() {
        tera::ErrorKind::SyntaxError(r) | tera::ErrorKind::RenderingError(r) => Some((
            r.filename().to_owned(),
            r.span().start_line,
            r.message().to_owned(),
        )),
        _ => None,
    };
    match located {
        Some((file, line, message)) if own.contains_key(&file) => {
            let at = &own[&file].shown;
            Error::msg(format!(
                "{at}:{line}: {}; fix the template, or remove it to use operator-gen's own",
                message.replace('\n', " ")
            ))
        }
        _ => Error::Template {
            name: name.into(),
            message: report(e),
        },
    }
}

/// Records the project's own templates in `project`'s `plugins` ([`PLUGIN_KEY`]: the directory
/// and its files), so `alpha generate` and `alpha update` copy them before they replay; none
/// takes the entry out.
pub fn record(project: &mut crate::project::Project, engine: &Engine) {
    let files = engine.project_templates();
    if files.is_empty() {
        project.plugins.remove(PLUGIN_KEY);
        return;
    }
    let value = serde_json::json!({ "directory": PROJECT_DIR, "files": files });
    project.plugins.insert(PLUGIN_KEY.to_owned(), value);
}

/// The files [`record`] listed in `project`, as paths relative to the project.
pub fn recorded(project: &crate::project::Project) -> Vec<String> {
    let Some(entry) = project.plugins.get(PLUGIN_KEY) else {
        return Vec::new();
    };
    let files = entry["files"].as_array().cloned().unwrap_or_default();
    let names = files.iter().filter_map(|f| f.as_str());
    // only names inside the directory: no `..`, no absolute path
    let safe =
        names.filter(|n| !n.starts_with('/') && !n.split('/').any(|p| p == ".." || p.is_empty()));
    safe.map(|n| format!("{PROJECT_DIR}/{n}")).collect()
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
