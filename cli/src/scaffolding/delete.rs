//! What `delete api` takes out for one `PROJECT` resource: `create api`'s own lists run
//! backwards ([`api::undo`]), after checking that no other Rust source still names the kind.

use std::path::Path;

use proc_macro2::{Delimiter, TokenTree};

use crate::error::{Error, Result};
use crate::manifests::bounded;
use crate::project::validate::kind_names;
use crate::project::{Project, ResourceEntry, boilerplate, names};
use crate::scaffold::Scaffold;
use crate::scaffolding::api::{self, ApiContext};
use crate::scaffolding::lists::{Undo, Undone};
use crate::templates::Engine;

/// The directories whose Rust sources must not name a deleted kind, and the crate's build script.
const SOURCE_DIRS: &[&str] = &["src", "tests", "examples", "benches", "build.rs"];

/// The resource `delete api` takes out: its group, version and kind.
#[derive(Debug)]
pub struct Request {
    /// The group as given to `create api`.
    pub group: String,
    /// The version.
    pub version: String,
    /// The kind.
    pub kind: String,
}

/// What [`stage`] took out.
#[derive(Debug)]
pub struct Deletion {
    /// `<group>/<version> <kind>`, for messages.
    pub what: String,
    /// The resource had a type.
    pub resource: bool,
    /// What the undo did.
    pub undone: Undone,
}

/// What `create api` added for the resource `req` names, taken out of a scaffold of `root` and
/// out of `project` (not yet written): refused when it has webhooks, is a spoke, or another
/// Rust source still names the kind.
pub fn stage(req: &Request, project: &mut Project, root: &Path) -> Result<(Scaffold, Deletion)> {
    let index = find(req, project)?;
    let entry = project.resources.remove(index);
    refuse_webhooks(&entry, project)?;
    let engine = Engine::for_project(root)?;
    let header = boilerplate::read(root)?;
    let ctx = api::entry_context(&entry, project, header.clone())?;
    let others = project
        .resources
        .iter()
        .map(|r| api::entry_context(r, project, header.clone()))
        .collect::<Result<Vec<_>>>()?;
    crate::scaffolding::deploy_image::record(project, &entry, None);

    let mut s = Scaffold::new(root);
    let undo = Undo {
        engine: &engine,
        ctx: &ctx,
        others: &others,
        later_edits: crate::project::storage_version::without_marker,
    };
    api::unmark_after_delete(&mut s, project, &entry)?;
    let undone = api::undo(&undo, &mut s)?;
    let what = format!("{}/{} {}", entry.group, entry.version, entry.kind);
    check_unused(&mut s, &what, &needles(&ctx, &others, &undone))?;
    Ok((
        s,
        Deletion {
            what,
            resource: ctx.resource,
            undone,
        },
    ))
}

/// `delete api` takes out what `create api` added, not what `create webhook` did: a resource with
/// webhooks, or a spoke of another version's conversion, is refused with what to do by hand.
fn refuse_webhooks(entry: &ResourceEntry, rest: &Project) -> Result<()> {
    let what = format!("{}/{} {}", entry.group, entry.version, entry.kind);
    if let Some(w) = &entry.webhooks {
        let kinds: Vec<&str> = [
            (w.defaulting, "defaulting"),
            (w.validation, "validation"),
            (w.conversion, "conversion"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        return Err(Error::msg(format!(
            "{what} has {} webhooks, which delete api does not take out; remove its webhook module, its registration in src/main.rs and the `webhooks` entry in PROJECT by hand, then run delete api again",
            kinds.join(" and ")
        )));
    }
    if let Some(hub) = rest.resources.iter().find(|r| {
        r.group == entry.group
            && r.kind == entry.kind
            && r.webhooks
                .as_ref()
                .is_some_and(|w| w.spoke.contains(&entry.version))
    }) {
        return Err(Error::msg(format!(
            "{what} is a spoke of the conversion webhook of {}/{} {}, which delete api does not change; remove {} from that webhook's spokes (its `From` impls and `spoke` in PROJECT) by hand, then run delete api again",
            hub.group, hub.version, hub.kind, entry.version
        )));
    }
    Ok(())
}

/// The index of the resource `req` names in `project`, or an error suggesting the nearest one.
fn find(req: &Request, project: &Project) -> Result<usize> {
    let same =
        |r: &ResourceEntry| r.group == req.group && r.version == req.version && r.kind == req.kind;
    if let Some(i) = project.resources.iter().position(same) {
        return Ok(i);
    }
    let what = format!("{}/{} {}", req.group, req.version, req.kind);
    let listed = |r: &ResourceEntry| format!("{}/{} {}", r.group, r.version, r.kind);
    let hint = if let Some(r) = project.resources.iter().find(|r| r.kind == req.kind) {
        format!(
            "did you mean --group {} --version {} --kind {}?",
            r.group, r.version, r.kind
        )
    } else if let Some(kind) =
        names::did_you_mean(&req.kind, project.resources.iter().map(|r| r.kind.as_str()))
    {
        match project.resources.iter().find(|r| r.kind == kind) {
            Some(r) => format!(
                "did you mean --group {} --version {} --kind {}?",
                r.group, r.version, r.kind
            ),
            None => String::new(),
        }
    } else if project.resources.is_empty() {
        "PROJECT lists no resources; there is nothing to delete".to_owned()
    } else {
        format!(
            "pass one that PROJECT lists: {}",
            project
                .resources
                .iter()
                .map(listed)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Err(Error::msg(format!("{what} is not in PROJECT; {hint}")))
}

/// A path of identifiers that names the deleted kind's code (`CaptainSpec`, `v1::Captain`,
/// `controller::captain`).
type Needle = Vec<String>;

/// What other sources must not name once the kind is gone, most telling first: the type names
/// the derive and the scaffold define and the kind's module under its version's module path
/// (`v1::CaptainSpec`, `v1::captain`), those names alone where no remaining kind defines them
/// too, and every module whose declaration the undo took out (`controller::captain`).
fn needles(ctx: &ApiContext, others: &[ApiContext], undone: &Undone) -> Vec<Needle> {
    let mut bare: Vec<Needle> = Vec::new();
    let mut out: Vec<Needle> = Vec::new();
    if ctx.resource && !ctx.core {
        let taken: Vec<String> = others
            .iter()
            .filter(|o| o.resource && !o.core)
            .flat_map(|o| kind_names(&o.kind))
            .collect();
        let mut prefix = Vec::new();
        if ctx.multigroup {
            prefix.push(ctx.group_module.clone());
        }
        prefix.push(ctx.version_module.clone());
        for name in kind_names(&ctx.kind)
            .into_iter()
            .chain([ctx.kind_module.clone()])
        {
            if name != ctx.kind_module && !taken.contains(&name) {
                bare.push(vec![name.clone()]);
            }
            let mut path = prefix.clone();
            path.push(name);
            out.push(path);
        }
    }
    out.extend(bare);
    for (parent, module) in &undone.modules {
        out.push(vec![parent.clone(), module.clone()]);
    }
    out
}

/// Fails, naming the first file and line, when a Rust source that remains after `s` is
/// committed names one of `needles`.
fn check_unused(s: &mut Scaffold, what: &str, needles: &[Needle]) -> Result<()> {
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        rust_files(s.root(), dir, &mut files);
    }
    files.sort();
    for rel in files {
        if s.is_removed(&rel) {
            continue;
        }
        let Some(text) = s.read(&rel)? else {
            continue;
        };
        let found = find_use(&text, needles).map_err(|refused| {
            Error::msg(refused.in_file(&rel, |e| {
                format!("does not parse as rust ({e}), so delete api cannot tell whether it uses {what}; fix the file, then run again")
            }))
        })?;
        if let Some((line, needle)) = found {
            return Err(Error::msg(format!(
                "{rel}:{line} still uses {what} (it names `{}`); remove that use (or the file), then run delete api again",
                needle.join("::")
            )));
        }
    }
    Ok(())
}

/// The line where the Rust source `text` first names one of `needles`, and which; refused when
/// it nests too deep or does not lex. Public for the fuzz target only.
#[doc(hidden)]
pub fn find_use<'n>(
    text: &str,
    needles: &'n [Vec<String>],
) -> Result<Option<(usize, &'n Vec<String>)>, bounded::Unparsable> {
    bounded::with_tokens(text, |tokens| {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        find_needle(&trees, needles)
    })
}

/// Every `.rs` file at or under `rel` in `root`, relative to `root`; symbolic links are not
/// followed into directories.
fn rust_files(root: &Path, rel: &str, out: &mut Vec<String>) {
    let path = root.join(rel);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return;
    };
    if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(&path) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            rust_files(root, &format!("{rel}/{name}"), out);
        }
    } else if rel.ends_with(".rs") {
        out.push(rel.to_owned());
    }
}

/// The first of `needles` that `trees` (or the groups inside) name, with the line where they
/// first do: the needles come most telling first (`v1::Captain` before `api::v1`).
fn find_needle<'n>(trees: &[TokenTree], needles: &'n [Needle]) -> Option<(usize, &'n Needle)> {
    needles
        .iter()
        .find_map(|needle| find_one(trees, needle).map(|line| (line, needle)))
}

/// The line of the first token in `trees` (and the groups inside) that starts `needle`. Groups
/// are searched with a stack of their own, not by recursion, so no nesting exhausts the thread's.
fn find_one(trees: &[TokenTree], needle: &Needle) -> Option<usize> {
    let (first, rest) = needle.split_first()?;
    // the token lists being searched, innermost last, each with the index of its next token
    let mut stack: Vec<(Vec<TokenTree>, usize)> = vec![(trees.to_vec(), 0)];
    while let Some((list, next)) = stack.last_mut() {
        let Some(tree) = list.get(*next) else {
            stack.pop();
            continue;
        };
        let i = *next;
        *next += 1;
        let inner = match tree {
            TokenTree::Ident(ident)
                if ident == first.as_str() && path_follows(&list[i + 1..], rest) =>
            {
                return Some(ident.span().start().line);
            }
            TokenTree::Group(group) => group.stream().into_iter().collect(),
            _ => continue,
        };
        stack.push((inner, 0));
    }
    None
}

/// Whether `trees` go on with `::` and the segments `rest` (the last ones may sit in a `{...}`
/// group of a `use`: `v1::{Captain, ...}`).
fn path_follows(trees: &[TokenTree], rest: &[String]) -> bool {
    let Some((first, more)) = rest.split_first() else {
        return true;
    };
    let colons = matches!(
        (trees.first(), trees.get(1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':'
    );
    if !colons {
        return false;
    }
    match trees.get(2) {
        Some(TokenTree::Ident(ident)) if ident == first.as_str() => path_follows(&trees[3..], more),
        Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => {
            let inner: Vec<TokenTree> = group.stream().into_iter().collect();
            inner.iter().enumerate().any(|(i, t)| {
                matches!(t, TokenTree::Ident(ident) if ident == first.as_str())
                    && path_follows(&inner[i + 1..], more)
            })
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::TokenStream;
    use std::str::FromStr;

    fn line_of(text: &str, needles: &[&[&str]]) -> Option<usize> {
        let needles: Vec<Needle> = needles
            .iter()
            .map(|n| n.iter().map(|s| (*s).to_owned()).collect())
            .collect();
        let trees: Vec<TokenTree> = TokenStream::from_str(text)
            .expect("lex")
            .into_iter()
            .collect();
        find_needle(&trees, &needles).map(|(line, _)| line)
    }

    #[test]
    fn nesting_deeper_than_any_stack_is_searched_without_overflow() {
        let depth = 200_000;
        let deep = format!(
            "const X: i32 = {}1{};\n",
            "(".repeat(depth),
            ")".repeat(depth)
        );
        let bare: &[&[&str]] = &[&["CaptainSpec"]];
        assert_eq!(line_of(&deep, bare), None);
        let used = format!("{}CaptainSpec{}", "(".repeat(depth), ")".repeat(depth));
        assert_eq!(line_of(&format!("\n{used}"), bare), Some(2));
    }

    #[test]
    fn names_are_found_as_tokens_with_their_line() {
        let bare: &[&[&str]] = &[&["CaptainSpec"]];
        assert_eq!(
            line_of("fn f() {\n    let x: CaptainSpec;\n}\n", bare),
            Some(2)
        );
        assert_eq!(
            line_of("fn f() { g(vec![CaptainSpec::default()]) }", bare),
            Some(1)
        );
        // comments, doc comments, strings and longer names are not uses
        assert_eq!(
            line_of(
                "// CaptainSpec\n/// CaptainSpec\nconst A: &str = \"CaptainSpec\";\nstruct CaptainSpecial;\n",
                bare
            ),
            None
        );
        let path: &[&[&str]] = &[&["v1", "captain"]];
        assert_eq!(
            line_of("use crate::api::v1::captain::Thing;", path),
            Some(1)
        );
        assert_eq!(
            line_of("use crate::api::v1::{\n    captain,\n};", path),
            Some(1)
        );
        assert_eq!(
            line_of("use crate::api::v1::{other};\nlet captain = 1;", path),
            None
        );
        assert_eq!(line_of("use crate::api::v2::captain;", path), None);
        // the most telling needle wins, wherever it stands
        let both: &[&[&str]] = &[&["v1", "Captain"], &["api", "v1"]];
        let needles: Vec<Needle> = both
            .iter()
            .map(|n| n.iter().map(|s| (*s).to_owned()).collect())
            .collect();
        let trees: Vec<TokenTree> =
            TokenStream::from_str("use crate::api::v1;\nfn f(_: v1::Captain) {}")
                .expect("lex")
                .into_iter()
                .collect();
        assert_eq!(find_needle(&trees, &needles), Some((2, &needles[0])));
    }
}
