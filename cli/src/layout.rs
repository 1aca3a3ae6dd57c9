//! Declarative scaffolds: a command is a list of files (a template whose path under its command's
//! directory is the output path, an if-exists rule, a condition) and lists of insertions (file,
//! marker, fragment), rendered against the command's context into a [`Scaffold`].

use serde::Serialize;

use crate::error::{Error, Result};
use crate::scaffold::{IfExists, Scaffold};
use crate::templates::{Engine, SUFFIX};

/// What to do when a file of the list already exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Leave it as it is (shared files such as a group's `mod.rs`).
    Keep,
    /// The user owns it: an error, unless the command was told to overwrite (`--force`).
    Owned,
}

/// One generated file: `template` is `<command>/<output path>.tera`, its path segments Tera
/// expressions of the context (`api/src/api/{{api_dir}}/{{kind_module}}.rs.tera`).
pub struct File<C> {
    pub template: &'static str,
    pub existing: Existing,
    pub when: fn(&C) -> bool,
}

/// One insertion: `fragment` goes before `marker` in `file`; both `file` and `fragment` are
/// Tera expressions of the context.
pub struct Insertion<C> {
    pub file: &'static str,
    pub marker: &'static str,
    pub fragment: &'static str,
    pub when: fn(&C) -> bool,
}

/// A commented-out line of `file` to enable.
pub struct Uncomment<C> {
    pub file: &'static str,
    pub line: &'static str,
    pub when: fn(&C) -> bool,
}

/// Always.
pub fn always<C>(_: &C) -> bool {
    true
}

/// How the lists are applied.
pub struct Apply<'a> {
    pub engine: &'a Engine,
    /// Overwrite files the user owns (`--force`).
    pub force: bool,
}

impl Apply<'_> {
    /// Renders every file of `files` whose condition holds into `s`.
    pub fn files<C: Serialize>(&self, s: &mut Scaffold, files: &[File<C>], ctx: &C) -> Result<()> {
        for f in files.iter().filter(|f| (f.when)(ctx)) {
            let path = output_path(f.template, ctx)?;
            let text = self.engine.render(f.template, ctx)?;
            let policy = match (f.existing, self.force) {
                (Existing::Keep, _) => IfExists::Skip,
                (Existing::Owned, true) => IfExists::Overwrite,
                (Existing::Owned, false) => IfExists::Error,
            };
            s.file(&path, text, policy)?;
        }
        Ok(())
    }

    /// Applies every insertion of `list` whose condition holds, in order.
    pub fn insertions<C: Serialize>(
        &self,
        s: &mut Scaffold,
        list: &[Insertion<C>],
        ctx: &C,
    ) -> Result<()> {
        for i in list.iter().filter(|i| (i.when)(ctx)) {
            let file = render_str(i.file, ctx)?;
            let fragment = render_str(i.fragment, ctx)?;
            s.insert(&file, i.marker, &fragment)?;
        }
        Ok(())
    }

    /// Enables every line of `list` whose condition holds.
    pub fn uncomments<C: Serialize>(
        &self,
        s: &mut Scaffold,
        list: &[Uncomment<C>],
        ctx: &C,
    ) -> Result<()> {
        for u in list.iter().filter(|u| (u.when)(ctx)) {
            s.uncomment(&render_str(u.file, ctx)?, u.line)?;
        }
        Ok(())
    }
}

/// The output path of `template`: its name without the command directory and the suffix,
/// rendered against `ctx`.
pub fn output_path<C: Serialize>(template: &str, ctx: &C) -> Result<String> {
    let rel = template
        .split_once('/')
        .map(|(_, rest)| rest)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
        .ok_or_else(|| Error::Template {
            name: template.into(),
            message: format!("a layout template is named <command>/<path>{SUFFIX}"),
        })?;
    render_str(rel, ctx)
}

/// `text` with its Tera expressions filled from `ctx`.
fn render_str<C: Serialize>(text: &str, ctx: &C) -> Result<String> {
    let context = tera::Context::from_serialize(ctx).map_err(|e| Error::Template {
        name: text.into(),
        message: e.to_string(),
    })?;
    tera::Tera::one_off(text, &context, false).map_err(|e| Error::Template {
        name: text.into(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Ctx {
        api_dir: &'static str,
        kind_module: &'static str,
    }

    #[test]
    fn a_template_path_renders_to_its_output_path() {
        let ctx = Ctx {
            api_dir: "crew/v1",
            kind_module: "frigate_ship",
        };
        assert_eq!(
            output_path("api/src/api/{{api_dir}}/{{kind_module}}.rs.tera", &ctx).ok(),
            Some("src/api/crew/v1/frigate_ship.rs".to_owned())
        );
        assert!(output_path("no-suffix", &ctx).is_err());
    }
}
