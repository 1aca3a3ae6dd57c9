//! `operator-gen edit --multigroup`: move a single-group project into the multigroup layout
//! `init --multigroup` and `create api` give: `src/api/<version>/` to `src/api/<group>/<version>/`,
//! `src/controller/<kind>.rs` to `src/controller/<group>/<kind>.rs`, the `mod.rs` files and their
//! `pub mod` lines, the paths to both in every Rust file of the crate, the per-kind role files and
//! role names under `config/rbac/` with the group prefix, the generated README's `operator-gen
//! init` line, and `PROJECT` (`multigroup: true`, each resource's path) — in one transaction, or not at all when a file cannot be rewritten safely.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::printer::Printer;
use crate::project::markers::MODULES;
use crate::project::paths::{config_prefix, role_prefix};
use crate::project::validate::find_core;
use crate::project::{self, Project, boilerplate, names};
use crate::scaffold::{IfExists, Scaffold};
use crate::templates::Engine;

/// What the group `mod.rs` templates see.
#[derive(Serialize)]
struct GroupContext {
    header: String,
    api_group: String,
}

/// The doc lines `init` writes in the single-group layout, and their multigroup wording.
const DOC_LINES: &[(&str, &str, &str)] = &[
    (
        "src/api/mod.rs",
        "//! API types: one module per version, one file per kind.",
        "//! API types: one module per group, then one module per version, one file per kind.",
    ),
    (
        "src/controller/mod.rs",
        "//! Controllers: one module per kind.",
        "//! Controllers: one module per group, then one module per kind.",
    ),
];

/// The generated README, whose `operator-gen init` line names the layout.
const README: &str = "README.md";
/// How that line starts.
const README_INIT: &str = "operator-gen init --project-name ";

/// `text` with `--multigroup` on its `operator-gen init` line, where `init --multigroup` puts it
/// (before `--namespaced`); unchanged when the line is not there or already has it.
fn readme_multigroup(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|l| {
            if !l.starts_with(README_INIT) || l.contains(" --multigroup") {
                return l.to_owned();
            }
            let body = l.trim_end_matches('\n');
            let end = &l[body.len()..];
            match body.find(" --namespaced") {
                Some(at) => format!("{} --multigroup{}{end}", &body[..at], &body[at..]),
                None => format!("{body} --multigroup{end}"),
            }
        })
        .collect()
}

/// The directories whose Rust files may name the moved modules.
const RUST_DIRS: &[&str] = &["src", "tests", "benches", "examples"];

/// A module that moves: its path under the crate root before and after.
struct Moved {
    /// `api::v1` or `controller::captain`.
    from: String,
    /// `api::crew::v1` or `controller::crew::captain`.
    to: String,
}

/// The modules of one group that move: the group's API group and the children its module
/// declares (versions, or controllers' kind modules).
type GroupModules = BTreeMap<String, (String, BTreeSet<String>)>;

/// What moves: the files (old path → new path) and the module paths that change.
struct Moves {
    /// The versions under `src/api/`, by group module.
    versions: GroupModules,
    /// The controllers under `src/controller/`, by group module.
    controllers: GroupModules,
    /// Every file that moves, old path → new path.
    files: BTreeMap<String, String>,
    /// Every module path that changes.
    modules: Vec<Moved>,
}

/// Run `edit --multigroup` in `root`.
pub fn run(root: &Path, printer: &Printer) -> Result<()> {
    let mut project = Project::load(root)?;
    check_movable(&project)?;
    let crate_name = names::module_name(&project.project_name);
    let mut s = Scaffold::new(root);
    let moves = plan_moves(root, &project)?;
    rewrite_rust_files(&mut s, root, &moves, &crate_name)?;
    move_other_files(&mut s, root, &moves)?;
    declare_group_modules(&mut s, root, &moves)?;
    move_roles(&mut s, root, &project)?;
    edit_readme(&mut s)?;

    project.multigroup = true;
    for r in project
        .resources
        .iter_mut()
        .filter(|r| r.api.is_some() && !r.core)
    {
        r.path = format!(
            "{crate_name}::api::{}::{}",
            names::module_name(&r.group),
            names::module_name(&r.version)
        );
    }
    s.file(project::FILE_NAME, project.render()?, IfExists::Overwrite)?;
    s.check()?;
    s.commit(printer)?;
    printer.hint(
        "The project is multigroup: `create api` now takes any --group. Run `make manifests` to regenerate the manifests.",
    );
    Ok(())
}

/// A project already multigroup, or with webhooks (whose modules this does not move), is refused.
fn check_movable(project: &Project) -> Result<()> {
    if project.multigroup {
        return Err(Error::msg(
            "the project is already multigroup (PROJECT has multigroup: true), so there is nothing to move; drop --multigroup",
        ));
    }
    if let Some(r) = project.resources.iter().find(|r| r.webhooks.is_some()) {
        return Err(Error::msg(format!(
            "{}/{} {} has webhooks, and edit --multigroup does not move src/webhook/ yet; move the project before `create webhook`, or move the webhook modules by hand",
            r.group, r.version, r.kind
        )));
    }
    Ok(())
}

/// The versions and controllers of `project` that move, by group module.
fn group_modules(project: &Project) -> Result<(GroupModules, GroupModules)> {
    let mut versions = GroupModules::new();
    let mut controllers = GroupModules::new();
    for r in &project.resources {
        let group_mod = names::module_name(&r.group);
        if r.controller || (r.api.is_some() && !r.core) {
            check_group_module(&r.group, &group_mod)?;
        }
        let api_group = if r.core {
            find_core(&r.group, &r.version, &r.kind)?
                .map(|c| c.group.to_owned())
                .unwrap_or_default()
        } else {
            project.qualified_group(&r.group)
        };
        if r.api.is_some() && !r.core {
            versions
                .entry(group_mod.clone())
                .or_insert_with(|| (api_group.clone(), BTreeSet::new()))
                .1
                .insert(names::module_name(&r.version));
        }
        if r.controller {
            controllers
                .entry(group_mod)
                .or_insert_with(|| (api_group, BTreeSet::new()))
                .1
                .insert(names::kind_module(&r.kind));
        }
    }
    Ok((versions, controllers))
}

/// The files and modules that move; a missing source or a taken destination is an error.
fn plan_moves(root: &Path, project: &Project) -> Result<Moves> {
    let (versions, controllers) = group_modules(project)?;
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut modules: Vec<Moved> = Vec::new();
    for (group_mod, (_, vs)) in &versions {
        for v in vs {
            let dir = format!("src/api/{v}");
            let under = files_under(root, &dir)?;
            if under.is_empty() {
                return Err(Error::msg(format!(
                    "{dir}/ is missing, so the {v} API cannot be moved to src/api/{group_mod}/{v}/; restore it, then run the command again"
                )));
            }
            for f in under {
                let rest = &f[dir.len()..];
                files.insert(f.clone(), format!("src/api/{group_mod}/{v}{rest}"));
            }
            modules.push(Moved {
                from: format!("api::{v}"),
                to: format!("api::{group_mod}::{v}"),
            });
        }
    }
    for (group_mod, (_, ks)) in &controllers {
        for k in ks {
            let file = format!("src/controller/{k}.rs");
            if !root.join(&file).is_file() {
                return Err(Error::msg(format!(
                    "{file} is missing, so the {k} controller cannot be moved to src/controller/{group_mod}/{k}.rs; restore it, then run the command again"
                )));
            }
            files.insert(file, format!("src/controller/{group_mod}/{k}.rs"));
            let sub = format!("src/controller/{k}");
            for f in files_under(root, &sub)? {
                let rest = &f[sub.len()..];
                files.insert(f.clone(), format!("src/controller/{group_mod}/{k}{rest}"));
            }
            modules.push(Moved {
                from: format!("controller::{k}"),
                to: format!("controller::{group_mod}::{k}"),
            });
        }
    }
    for to in files.values() {
        if root.join(to).exists() {
            return Err(Error::msg(format!(
                "{to} already exists, so the multigroup layout cannot take its place; move it out of the way, then run the command again"
            )));
        }
    }
    Ok(Moves {
        versions,
        controllers,
        files,
        modules,
    })
}

/// Every Rust file's paths to the moved modules rewritten; the moved files moved.
fn rewrite_rust_files(
    s: &mut Scaffold,
    root: &Path,
    moves: &Moves,
    crate_name: &str,
) -> Result<()> {
    let moved_versions: BTreeSet<&str> = moves
        .versions
        .values()
        .flat_map(|(_, vs)| vs.iter().map(String::as_str))
        .collect();
    for rel in rust_files(root)? {
        let text = read(root, &rel)?;
        let mut out = text.clone();
        for m in &moves.modules {
            for prefix in ["crate", crate_name] {
                out = replace_path(
                    &out,
                    &format!("{prefix}::{}", m.from),
                    &format!("{prefix}::{}", m.to),
                );
            }
        }
        check_no_old_paths(&rel, &out, &moves.modules, crate_name)?;
        if let Some(to) = moves.files.get(&rel) {
            check_super(&rel, &out, &moved_versions)?;
            s.remove_pruning(&rel);
            s.file(to, out, IfExists::Error)?;
        } else if out != text {
            s.file(&rel, out, IfExists::Overwrite)?;
        }
    }
    Ok(())
}

/// The files that move but are not Rust, moved as they are.
fn move_other_files(s: &mut Scaffold, root: &Path, moves: &Moves) -> Result<()> {
    for (from, to) in &moves.files {
        if !from.ends_with(".rs") {
            let text = read(root, from)?;
            s.remove_pruning(from);
            s.file(to, text, IfExists::Error)?;
        }
    }
    Ok(())
}

/// The module declarations: each group's `mod.rs` under `src/api/` and `src/controller/`
/// declaring its children, the parent declaring the groups instead, its doc line reworded.
fn declare_group_modules(s: &mut Scaffold, root: &Path, moves: &Moves) -> Result<()> {
    let header = boilerplate::read(root)?;
    let engine = Engine::for_project(root)?;
    for (parent, groups, template) in [
        (
            "src/api/mod.rs",
            &moves.versions,
            "api/src/api/{{group_module}}/mod.rs.tera",
        ),
        (
            "src/controller/mod.rs",
            &moves.controllers,
            "api/src/controller/{{group_module}}/mod.rs.tera",
        ),
    ] {
        let mut text = match s.read(parent)? {
            Some(text) => text,
            None if groups.is_empty() => continue,
            None => {
                return Err(Error::msg(format!(
                    "{parent} is missing, so its modules cannot be moved; restore it from a fresh `operator-gen init`"
                )));
            }
        };
        for (group_mod, (api_group, children)) in groups {
            for child in children {
                text = remove_mod_line(parent, &text, child)?;
            }
            let dir = parent.trim_end_matches("mod.rs");
            let group_file = format!("{dir}{group_mod}/mod.rs");
            let ctx = GroupContext {
                header: header.clone(),
                api_group: api_group.clone(),
            };
            s.file(&group_file, engine.render(template, &ctx)?, IfExists::Error)?;
            for child in children {
                s.insert(&group_file, MODULES, &format!("pub mod {child};"))?;
            }
        }
        if let Some((_, old, new)) = DOC_LINES.iter().find(|(f, _, _)| *f == parent) {
            text = text
                .lines()
                .map(|l| if l == *old { *new } else { l })
                .collect::<Vec<_>>()
                .join("\n")
                + if text.ends_with('\n') { "\n" } else { "" };
        }
        s.file(parent, text, IfExists::Overwrite)?;
        for group_mod in groups.keys() {
            s.insert(parent, MODULES, &format!("pub mod {group_mod};"))?;
        }
    }
    Ok(())
}

/// The per-kind files named after the kind: the controller's test and the roles, with
/// group-prefixed file names and role names, as `create api` gives them in a multigroup project.
fn move_roles(s: &mut Scaffold, root: &Path, project: &Project) -> Result<()> {
    let mut kinds = BTreeSet::new();
    for r in project
        .resources
        .iter()
        .filter(|r| r.api.is_some() && !r.core)
    {
        kinds.insert((r.group.clone(), r.kind.clone()));
    }
    let kustomization = "config/rbac/kustomization.yaml";
    let mut roles_kustomization = s.read(kustomization)?;
    for (group, kind) in &kinds {
        let (old_config, new_config) = (
            config_prefix(false, group, kind),
            config_prefix(true, group, kind),
        );
        move_kind_file(
            s,
            root,
            &format!("tests/{old_config}_controller.rs"),
            &format!("tests/{new_config}_controller.rs"),
        )?;
        for role in ["admin", "editor", "viewer"] {
            if let Some(k) = roles_kustomization.as_mut() {
                *k = replace_line(
                    k,
                    &format!("- {old_config}_{role}_role.yaml"),
                    &format!("- {new_config}_{role}_role.yaml"),
                );
            }
            move_role(s, root, group, kind, role)?;
        }
    }
    if let Some(k) = roles_kustomization {
        s.file(kustomization, k, IfExists::Overwrite)?;
    }
    Ok(())
}

/// `from` moved to `to` as it is, when it exists.
fn move_kind_file(s: &mut Scaffold, root: &Path, from: &str, to: &str) -> Result<()> {
    if let Some(text) = s.read(from)? {
        if root.join(to).exists() {
            return Err(Error::msg(format!(
                "{to} already exists, so {from} cannot be moved there; move it out of the way, then run the command again"
            )));
        }
        s.remove_pruning(from);
        s.file(to, text, IfExists::Error)?;
    }
    Ok(())
}

/// A kind's `role` file moved to its group-prefixed name, the role renamed in it.
fn move_role(s: &mut Scaffold, root: &Path, group: &str, kind: &str, role: &str) -> Result<()> {
    let (old_config, new_config) = (
        config_prefix(false, group, kind),
        config_prefix(true, group, kind),
    );
    let (old_role_prefix, role_prefix) = (
        role_prefix(false, group, kind),
        role_prefix(true, group, kind),
    );
    let from = format!("config/rbac/{old_config}_{role}_role.yaml");
    let to = format!("config/rbac/{new_config}_{role}_role.yaml");
    let Some(text) = s.read(&from)? else {
        return Ok(());
    };
    let old_name = format!("  name: {old_role_prefix}-{role}-role");
    if !text.lines().any(|l| l == old_name) {
        return Err(Error::msg(format!(
            "{from} has no line `{old_name}` to rename to `  name: {role_prefix}-{role}-role`; rename the role by hand and move the file to {to}, then run the command again"
        )));
    }
    if root.join(&to).exists() {
        return Err(Error::msg(format!(
            "{to} already exists, so {from} cannot be moved there; move it out of the way, then run the command again"
        )));
    }
    let renamed = replace_line(
        &text,
        &old_name,
        &format!("  name: {role_prefix}-{role}-role"),
    );
    s.remove_pruning(&from);
    s.file(&to, renamed, IfExists::Error)
}

/// The generated README's command that starts a project like this one, with `--multigroup`.
fn edit_readme(s: &mut Scaffold) -> Result<()> {
    if let Some(readme) = s.read(README)? {
        let edited = readme_multigroup(&readme);
        if edited != readme {
            s.file(README, edited, IfExists::Overwrite)?;
        }
    }
    Ok(())
}

fn check_group_module(group: &str, module: &str) -> Result<()> {
    if !group.starts_with(|c: char| c.is_ascii_lowercase()) || names::is_rust_keyword(module) {
        return Err(Error::msg(format!(
            "group {group:?} cannot name a rust module (it must start with a letter and not be a keyword), so it cannot have one in the multigroup layout; rename the group, then run the command again"
        )));
    }
    Ok(())
}

fn read(root: &Path, rel: &str) -> Result<String> {
    crate::gate::read_existing(&root.join(rel))
}

/// The files under `rel` (recursively), as paths relative to `root`, sorted; none when it is
/// not a directory.
fn files_under(root: &Path, rel: &str) -> Result<Vec<String>> {
    let dir = root.join(rel);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    Ok(crate::scaffold::files_under(root, &dir, &[])?
        .into_keys()
        .collect())
}

/// The `.rs` files of the crate's source, test, bench and example directories.
fn rust_files(root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for dir in RUST_DIRS {
        out.extend(
            files_under(root, dir)?
                .into_iter()
                .filter(|f| f.ends_with(".rs")),
        );
    }
    Ok(out)
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `text` with every `from` that is a whole path prefix (no identifier character right before
/// or after it) replaced by `to`.
fn replace_path(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut before: Option<char> = None;
    while let Some(at) = rest.find(from) {
        let prev = rest[..at].chars().next_back().or(before);
        let next = rest[at + from.len()..].chars().next();
        let whole =
            !prev.is_some_and(|c| is_ident_char(c) || c == ':') && !next.is_some_and(is_ident_char);
        out.push_str(&rest[..at]);
        out.push_str(if whole { to } else { from });
        before = from.chars().next_back();
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

/// Whether `needle` stands in `text` as a path of its own, not the tail of a longer one.
fn mentions(text: &str, needle: &str) -> bool {
    text.match_indices(needle).any(|(at, _)| {
        let prev = text[..at].chars().next_back();
        let next = text[at + needle.len()..].chars().next();
        let open_end = !needle.ends_with(is_ident_char);
        !prev.is_some_and(|c| is_ident_char(c) || c == ':')
            && (open_end || !next.is_some_and(is_ident_char))
    })
}

/// After the rewrite no path may still name a moved module the old way: not `api::v1` alone
/// (after `use crate::api;`), not a grouped `crate::api::{...}` import.
fn check_no_old_paths(rel: &str, text: &str, modules: &[Moved], crate_name: &str) -> Result<()> {
    let code = strip_comments(text);
    for m in modules {
        let (parent, _) = m.from.split_once("::").unwrap_or((&m.from, ""));
        if mentions(&code, &m.from) {
            return Err(Error::msg(format!(
                "{rel} names `{}` in a form edit --multigroup does not rewrite; write it as `crate::{}::…` or `crate::{}::…` by hand, then run the command again",
                m.from, m.from, m.to
            )));
        }
        for prefix in ["crate", crate_name] {
            let grouped = format!("{prefix}::{parent}::{{");
            if mentions(&code, &grouped) {
                return Err(Error::msg(format!(
                    "{rel} imports `{grouped}...}}`, a grouped path edit --multigroup does not rewrite; write each path out (`crate::{}::…`), then run the command again",
                    m.from
                )));
            }
        }
    }
    Ok(())
}

/// `text` without `//` comments, so doc text does not count as a path.
fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A moved file must not reach out of what moves with it through `super::` in its top-level
/// items (inline modules such as `mod tests` are left alone): a version module's `super` is
/// the group module after the move, a controller's the controller group. Public for the fuzz
/// target only.
#[doc(hidden)]
pub fn check_super(rel: &str, text: &str, moved_versions: &BTreeSet<&str>) -> Result<()> {
    let tokens = crate::manifests::bounded::with_tokens(text, |stream| flatten(stream, true))
        .map_err(|refused| {
            Error::msg(refused.in_file(rel, |_| {
                "does not parse as rust, so edit --multigroup cannot tell whether it may move; fix it, then run the command again".to_owned()
            }))
        })?;
    let in_api = rel.starts_with("src/api/");
    let is_mod = rel.ends_with("/mod.rs");
    // how many leading `super`s reach the parent of what moves, and whether a moved version
    // may follow them
    let (depth, allowed) = match (in_api, is_mod) {
        (true, true) => (1, true),
        (true, false) => (2, true),
        (false, _) => (1, false),
    };
    let mut i = 0;
    while i < tokens.len() {
        let mut supers = 0;
        let mut j = i;
        while tokens.get(j).map(String::as_str) == Some("super")
            && tokens.get(j + 1).map(String::as_str) == Some(":")
            && tokens.get(j + 2).map(String::as_str) == Some(":")
        {
            supers += 1;
            j += 3;
        }
        if supers >= depth {
            let next = tokens.get(j).map(String::as_str).unwrap_or("");
            let ok = allowed && supers == depth && moved_versions.contains(next);
            if !ok {
                return Err(Error::msg(format!(
                    "{rel} reaches out of its module with `{}{next}`, which would name another module once it moves; write the path from `crate::` instead, then run the command again",
                    "super::".repeat(supers)
                )));
            }
        }
        i = j.max(i + 1);
    }
    Ok(())
}

/// The identifiers and punctuation of `tokens` in order (groups opened, literals blank); at the
/// top level, inline modules (`mod name { ... }`) are left out.
fn flatten(tokens: proc_macro2::TokenStream, top: bool) -> Vec<String> {
    use proc_macro2::TokenTree;
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < trees.len() {
        if top
            && matches!(&trees[i], TokenTree::Ident(m) if m == "mod")
            && matches!(trees.get(i + 1), Some(TokenTree::Ident(_)))
            && matches!(trees.get(i + 2), Some(TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::Brace)
        {
            i += 3;
            continue;
        }
        match &trees[i] {
            TokenTree::Group(g) => {
                out.push(String::new());
                out.extend(flatten(g.stream(), false));
                out.push(String::new());
            }
            TokenTree::Ident(id) => out.push(id.to_string()),
            TokenTree::Punct(p) => out.push(p.as_char().to_string()),
            TokenTree::Literal(_) => out.push(String::new()),
        }
        i += 1;
    }
    out
}

/// `text` without its line `pub mod <child>;`, which must be there.
fn remove_mod_line(rel: &str, text: &str, child: &str) -> Result<String> {
    let line = format!("pub mod {child};");
    if !text.lines().any(|l| l.trim() == line) {
        return Err(Error::msg(format!(
            "{rel} has no line `{line}`, so edit --multigroup cannot move that module; put the line back, then run the command again"
        )));
    }
    Ok(text
        .split_inclusive('\n')
        .filter(|l| l.trim() != line)
        .collect())
}

/// `text` with each line equal to `from` replaced by `to`.
fn replace_line(text: &str, from: &str, to: &str) -> String {
    text.split_inclusive('\n')
        .map(|l| {
            if l.trim_end_matches('\n') == from {
                format!("{to}{}", if l.ends_with('\n') { "\n" } else { "" })
            } else {
                l.to_owned()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readme_init_line_gets_multigroup_before_namespaced() {
        let text = "# demo\noperator-gen init --project-name demo --domain d --k8s-version 1.37 --namespaced\nrest\n";
        assert_eq!(
            readme_multigroup(text),
            "# demo\noperator-gen init --project-name demo --domain d --k8s-version 1.37 --multigroup --namespaced\nrest\n"
        );
        let plain = "operator-gen init --project-name demo --domain d --k8s-version 1.37\n";
        let once = readme_multigroup(plain);
        assert_eq!(
            once,
            "operator-gen init --project-name demo --domain d --k8s-version 1.37 --multigroup\n"
        );
        assert_eq!(readme_multigroup(&once), once);
    }

    #[test]
    fn paths_are_replaced_only_as_whole_prefixes() {
        let text = "use crate::api::v1::Captain;\nuse crate::api::v10::X;\nmycrate::api::v1::Y;\ndemo::api::v1::Z;\n";
        let out = replace_path(text, "crate::api::v1", "crate::api::crew::v1");
        assert_eq!(
            out,
            "use crate::api::crew::v1::Captain;\nuse crate::api::v10::X;\nmycrate::api::v1::Y;\ndemo::api::v1::Z;\n"
        );
    }

    #[test]
    fn reaching_out_of_a_moved_module_is_refused() {
        let versions: BTreeSet<&str> = ["v1", "v2"].into_iter().collect();
        let ok =
            "use super::super::v2::Captain as Next;\nmod tests { use super::super::super::x; }\n";
        assert!(check_super("src/api/v1/captain.rs", ok, &versions).is_ok());
        let out = "use super::super::common::Shared;\n";
        let err = check_super("src/api/v1/captain.rs", out, &versions).expect_err("refused");
        assert!(err.to_string().contains("`super::super::common`"), "{err}");
        let controller = "use super::helpers::retry;\n";
        assert!(check_super("src/controller/captain.rs", controller, &versions).is_err());
    }
}
