//! Declarative scaffolds: a command is a list of files (a template whose path under its command's
//! directory is the output path, an if-exists rule, a condition) and lists of insertions (file,
//! marker, fragment), rendered against the command's context into a [`Scaffold`]; [`Undo`] runs
//! the same lists backwards to take one context's output out again (`delete api`).

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

/// One insertion: `fragment` goes before `marker` in `file`; `file` is a Tera expression of the
/// context, `fragment` one or a template.
pub struct Insertion<C> {
    pub file: &'static str,
    pub marker: &'static str,
    pub fragment: Fragment,
    pub when: fn(&C) -> bool,
}

/// What an insertion inserts, rendered against the context.
#[derive(Clone, Copy, Debug)]
pub enum Fragment {
    /// A line of Tera text (`pub mod {{kind_module}};`).
    Text(&'static str),
    /// A template under `templates/fragments/`, for what spans several lines.
    Template(&'static str),
}

impl Fragment {
    /// The fragment rendered against `ctx`.
    fn render<C: Serialize>(self, engine: &Engine, ctx: &C) -> Result<String> {
        match self {
            Fragment::Text(text) => render_str(text, ctx),
            Fragment::Template(name) => engine.render(name, ctx),
        }
    }
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

    /// Renders every template a template directory adds under `prefix` (the command's
    /// directory, `api/`) into `s`, at the path its name gives, unless that file exists.
    pub fn added<C: Serialize>(&self, s: &mut Scaffold, prefix: &str, ctx: &C) -> Result<()> {
        for name in self.engine.added_under(prefix) {
            let path = output_path(&name, ctx)?;
            let text = self.engine.render(&name, ctx)?;
            s.file(&path, text, IfExists::Skip)?;
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
            let fragment = i.fragment.render(self.engine, ctx)?;
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

/// How the lists are undone for one context, `ctx` (`delete api`): every item `ctx` renders is
/// taken out again, except what one of `others` (the contexts that remain) renders too, so an
/// item several contexts share stays while one of them does.
///
/// - A file of the list goes when it exists; an [`Existing::Keep`] file (a shared `mod.rs`)
///   only when, its insertions undone, it is exactly its template's fresh rendering, so nothing
///   but the scaffold remains in it. An [`Existing::Owned`] Rust file whose text differs from
///   its fresh rendering was edited since: it goes too, and is listed in [`Undone::edited`].
/// - An insertion is taken out at its marker, except a `pub mod <name>;` line whose module's
///   file remains. A `- <path>` line taken out of a `kustomization.yaml` takes the file it names
///   with it (the CRD that `manifests` wrote, say).
/// - An enabled line is commented out again.
///
/// Directories the removals leave empty go too.
pub struct Undo<'a, C> {
    pub engine: &'a Engine,
    /// The context to take out.
    pub ctx: &'a C,
    /// The contexts that remain.
    pub others: &'a [C],
    /// Takes out of an owned file's text what later commands write into it as part of the
    /// scaffold (the storage marker `create api` moves between versions), before it is compared
    /// with its fresh rendering.
    pub later_edits: fn(&str) -> String,
}

/// What [`Undo`] did.
#[derive(Debug, Default)]
pub struct Undone {
    /// The files removed, in the order removed.
    pub removed: Vec<String>,
    /// Shared files of the list kept because they hold more than their scaffold.
    pub kept: Vec<String>,
    /// Removed Rust files that differ from their template's fresh rendering.
    pub edited: Vec<String>,
    /// Modules no longer declared, each as (its parent module's name, its name): `("v1",
    /// "captain")` for `pub mod captain;` taken out of `src/api/v1/mod.rs`, `("crate", m)` for
    /// `src/main.rs` or `src/lib.rs`; not those a remaining context declares under the same
    /// names (the `v1::captain` of another group), which would be ambiguous.
    pub modules: Vec<(String, String)>,
}

impl<C: Serialize> Undo<'_, C> {
    /// Undoes every line of `list` enabled for `ctx`.
    pub fn uncomments(&self, s: &mut Scaffold, list: &[Uncomment<C>]) -> Result<()> {
        for u in list.iter().rev().filter(|u| (u.when)(self.ctx)) {
            let file = render_str(u.file, self.ctx)?;
            if self.shared(|o| Ok((u.when)(o) && render_str(u.file, o)? == file))? {
                continue;
            }
            s.comment(&file, u.line)?;
        }
        Ok(())
    }

    /// Undoes every insertion of `list` made for `ctx`, last first; `files` is the command's
    /// file list, which says whether a declared module's file remains.
    pub fn insertions(
        &self,
        s: &mut Scaffold,
        list: &[Insertion<C>],
        files: &[File<C>],
        undone: &mut Undone,
    ) -> Result<()> {
        for i in list.iter().rev().filter(|i| (i.when)(self.ctx)) {
            let file = render_str(i.file, self.ctx)?;
            let fragment = i.fragment.render(self.engine, self.ctx)?;
            let shared = self.shared(|o| {
                Ok((i.when)(o)
                    && render_str(i.file, o)? == file
                    && i.fragment.render(self.engine, o)? == fragment)
            })?;
            if shared {
                continue;
            }
            let module = declared_module(&file, &fragment);
            if let Some((_, _, candidates)) = &module {
                let mut remains = false;
                for path in candidates {
                    remains |= self.remains(s, files, path)?;
                }
                if remains {
                    continue;
                }
            }
            s.remove_inserted(&file, i.marker, &fragment)?;
            if let Some((parent, name, _)) = module
                && !self.declared_by_others(list, &parent, &name)?
            {
                undone.modules.push((parent, name));
            }
            if let Some(listed) = kustomization_entry(&file, &fragment)
                && s.exists(&listed)
                && !s.is_removed(&listed)
            {
                s.remove_pruning(&listed);
                undone.removed.push(listed);
            }
        }
        Ok(())
    }

    /// Undoes every file of `files` written for `ctx`, last first.
    pub fn files(&self, s: &mut Scaffold, files: &[File<C>], undone: &mut Undone) -> Result<()> {
        for f in files.iter().rev() {
            let path = output_path(f.template, self.ctx)?;
            if self.goes(s, f)? {
                if f.existing == Existing::Owned && path.ends_with(".rs") {
                    let fresh = (self.later_edits)(&self.engine.render(f.template, self.ctx)?);
                    if s.read(&path)?.map(|text| (self.later_edits)(&text)) != Some(fresh) {
                        undone.edited.push(path.clone());
                    }
                }
                s.remove_pruning(&path);
                undone.removed.push(path);
            } else if (f.when)(self.ctx)
                && f.existing == Existing::Keep
                && s.exists(&path)
                && !s.is_removed(&path)
                && !self.rendered_by_others(f, &path)?
            {
                undone.kept.push(path);
            }
        }
        Ok(())
    }

    /// Whether one of the remaining contexts satisfies `test`.
    fn shared(&self, test: impl Fn(&C) -> Result<bool>) -> Result<bool> {
        for o in self.others {
            if test(o)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a remaining context's insertions of `list` declare a module `name` in a module
    /// named `parent` too (`v1::captain` of another group).
    fn declared_by_others(&self, list: &[Insertion<C>], parent: &str, name: &str) -> Result<bool> {
        self.shared(|o| {
            for i in list.iter().filter(|i| (i.when)(o)) {
                let declared =
                    declared_module(&render_str(i.file, o)?, &i.fragment.render(self.engine, o)?);
                if declared.is_some_and(|(p, n, _)| p == parent && n == name) {
                    return Ok(true);
                }
            }
            Ok(false)
        })
    }

    fn rendered_by_others(&self, f: &File<C>, path: &str) -> Result<bool> {
        self.shared(|o| Ok((f.when)(o) && output_path(f.template, o)? == path))
    }

    /// Whether the file `f` renders for `ctx` goes (see [`Undo`]).
    fn goes(&self, s: &mut Scaffold, f: &File<C>) -> Result<bool> {
        if !(f.when)(self.ctx) {
            return Ok(false);
        }
        let path = output_path(f.template, self.ctx)?;
        if !s.exists(&path) || s.is_removed(&path) || self.rendered_by_others(f, &path)? {
            return Ok(false);
        }
        Ok(match f.existing {
            Existing::Owned => true,
            Existing::Keep => s.read(&path)? == Some(self.engine.render(f.template, self.ctx)?),
        })
    }

    /// Whether `path` is there once the undo is done: a file of `files` unless it goes, any
    /// other file if it exists and is not removed.
    fn remains(&self, s: &mut Scaffold, files: &[File<C>], path: &str) -> Result<bool> {
        for f in files.iter().filter(|f| (f.when)(self.ctx)) {
            if output_path(f.template, self.ctx)? == path {
                return Ok(s.exists(path) && !s.is_removed(path) && !self.goes(s, f)?);
            }
        }
        Ok(s.exists(path) && !s.is_removed(path))
    }
}

/// The module a `pub mod <name>;` fragment declares in `file`: its parent module's name, its
/// name and the two files it may live in (`<dir>/<name>.rs`, `<dir>/<name>/mod.rs`).
fn declared_module(file: &str, fragment: &str) -> Option<(String, String, [String; 2])> {
    let name = fragment
        .trim()
        .strip_prefix("pub mod ")?
        .strip_suffix(';')?
        .trim();
    let (dir, stem) = match file.rsplit_once('/') {
        Some((dir, base)) => (dir, base.strip_suffix(".rs")?),
        None => ("", file.strip_suffix(".rs")?),
    };
    let (dir, parent) = match stem {
        "mod" => (
            dir.to_owned(),
            dir.rsplit('/').next().unwrap_or(dir).to_owned(),
        ),
        "main" | "lib" => (dir.to_owned(), "crate".to_owned()),
        other => (format!("{dir}/{other}"), other.to_owned()),
    };
    Some((
        parent,
        name.to_owned(),
        [format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")],
    ))
}

/// The file a `- <path>` line of `<dir>/kustomization.yaml` lists: `<dir>/<path>`.
fn kustomization_entry(file: &str, fragment: &str) -> Option<String> {
    let dir = file.strip_suffix("kustomization.yaml")?;
    let listed = fragment.trim().strip_prefix("- ")?.trim();
    let plain = !listed.is_empty()
        && !listed.starts_with('/')
        && listed
            .split('/')
            .all(|seg| !seg.is_empty() && seg != ".." && seg != ".");
    plain.then(|| format!("{dir}{listed}"))
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

/// `text` with its Tera expressions filled from `ctx` (and the markers, as templates see them).
fn render_str<C: Serialize>(text: &str, ctx: &C) -> Result<String> {
    let context = crate::templates::context(text, ctx)?;
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
    fn module_and_kustomization_lines_name_their_files() {
        assert_eq!(
            declared_module("src/api/v1/mod.rs", "pub mod captain;"),
            Some((
                "v1".to_owned(),
                "captain".to_owned(),
                [
                    "src/api/v1/captain.rs".to_owned(),
                    "src/api/v1/captain/mod.rs".to_owned()
                ]
            ))
        );
        assert_eq!(
            declared_module("src/main.rs", "pub mod x;").map(|m| m.0),
            Some("crate".to_owned())
        );
        assert_eq!(
            declared_module("src/api/v1/mod.rs", "pub use captain::*;"),
            None
        );
        assert_eq!(
            kustomization_entry("config/crd/kustomization.yaml", "- bases/a_b.yaml").as_deref(),
            Some("config/crd/bases/a_b.yaml")
        );
        assert_eq!(
            kustomization_entry("config/default/kustomization.yaml", "- ../crd"),
            None
        );
        assert_eq!(kustomization_entry("src/main.rs", "- x"), None);
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
