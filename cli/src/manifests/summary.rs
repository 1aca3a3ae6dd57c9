//! One source file's share of the scan, computed from its text alone: the types, `use`
//! declarations, module declarations, markers and located errors it holds, in source order.
//! Function bodies are blanked before `syn` parses the file (they hold no schema types or
//! markers the scan reads), and a summary depends on nothing but the text, so the scan can
//! compute summaries in parallel and keep them in a content-addressed cache.

use std::collections::BTreeMap;
use std::path::PathBuf;

use operator_gen_codegen::ir::{Marker, TypeDef};
use operator_gen_codegen::kube_rs;
use operator_gen_codegen::lower::{self, Errors};
use operator_gen_codegen::markers::{Effect, Kind, Target};
use serde::{Deserialize, Serialize};

use super::bounded;
use super::lexer::{Lexer, Token, is_ident_byte};

/// A module: its path from the crate root, its items and its `use` aliases.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Module {
    pub file: PathBuf,
    /// The incremental layer's key of its file's bytes, when there is one: two runs that see
    /// the same key saw the same module.
    #[serde(skip)]
    pub content: Option<u128>,
    /// `crate::a::b` as `["a", "b"]`.
    pub path: Vec<String>,
    pub types: BTreeMap<String, TypeDef>,
    pub children: Vec<String>,
    /// alias → absolute path (`["crate", "api", "v1", "Foo"]` or relative to this module).
    pub uses: BTreeMap<String, Vec<String>>,
    /// `use x::*` targets.
    pub globs: Vec<Vec<String>>,
}

/// What a file (or an inline module) contributes, in source order.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModSummary {
    /// The module's types, `use` aliases, globs and children; `file` and `path` are filled in
    /// by the scan, which knows where the file sits in the module tree.
    pub module: Module,
    pub steps: Vec<Step>,
}

/// One thing the scan does with a module's contents, in the order the source says it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Step {
    /// A package-level marker (`+kubebuilder:rbac`, webhook markers).
    PackageMarker(Marker),
    /// A module-level marker the scan reads (`+groupName`, `+versionName`, `+kubebuilder:skip`).
    ModuleMarker(Marker),
    /// A located problem in this file.
    Error {
        line: usize,
        column: usize,
        message: String,
    },
    /// `mod name { ... }`.
    Inline { name: String, body: ModSummary },
    /// `mod name;`, found in a file of its own.
    File {
        name: String,
        line: usize,
        column: usize,
        /// The `#[path = "..."]` attribute, as written.
        path: Option<String>,
    },
}

impl ModSummary {
    fn error(&mut self, span: proc_macro2::Span, message: impl Into<String>) {
        let start = span.start();
        self.steps.push(Step::Error {
            line: start.line,
            column: start.column,
            message: message.into(),
        });
    }

    fn errors(&mut self, errors: Errors) {
        for (e, span) in errors {
            self.error(span, e.message);
        }
    }
}

/// The summary of one file's text, parsed through [the bounded parser](super::bounded) with
/// what the scan never reads blanked ([`blank_unread`] keeps every line and column that is
/// left, so errors point into the file as it is).
pub fn summarize(source: &str) -> ModSummary {
    let blanked = blank_unread(source);
    let parsed = bounded::with_file(&blanked, |parsed| {
        let mut out = ModSummary::default();
        module_markers(&mut out, &parsed.attrs);
        items(&mut out, &parsed.items);
        out
    });
    parsed.unwrap_or_else(|refused| {
        let message = if refused.too_deep {
            refused.message
        } else {
            format!(
                "does not parse: {}; fix the syntax, then run again",
                refused.message
            )
        };
        ModSummary {
            steps: vec![Step::Error {
                line: refused.line,
                column: refused.column,
                message,
            }],
            ..ModSummary::default()
        }
    })
}

/// Inner doc markers of a file or an inline module.
fn module_markers(out: &mut ModSummary, attrs: &[syn::Attribute]) {
    let inner: Vec<syn::Attribute> = attrs
        .iter()
        .filter(|a| matches!(a.style, syn::AttrStyle::Inner(_)))
        .cloned()
        .collect();
    let mut errors = Errors::default();
    let (_, markers) = lower::docs_and_markers(&inner, Target::Package, &mut errors);
    out.errors(errors);
    for m in markers {
        if matches!(m.def().effect, Effect::Scan(_)) {
            out.steps.push(Step::ModuleMarker(m));
        } else if is_package_level(m.kind) {
            out.steps.push(Step::PackageMarker(m));
        }
    }
}

fn items(out: &mut ModSummary, items: &[syn::Item]) {
    // a derive's path is resolved through every `use` of its module, wherever it stands
    let mut scope = Module::default();
    for item in items {
        if let syn::Item::Use(u) = item {
            collect_use(&u.tree, Vec::new(), &mut scope);
        }
    }
    for item in items {
        match item {
            syn::Item::Struct(s) => type_item(out, syn::DeriveInput::from(s.clone()), &scope),
            syn::Item::Enum(e) => type_item(out, syn::DeriveInput::from(e.clone()), &scope),
            syn::Item::Union(u) => type_item(out, syn::DeriveInput::from(u.clone()), &scope),
            syn::Item::Use(u) => collect_use(&u.tree, Vec::new(), &mut out.module),
            syn::Item::Mod(m) => {
                if is_cfg_test(&m.attrs) {
                    continue;
                }
                let name = m.ident.to_string().trim_start_matches("r#").to_string();
                out.module.children.push(name.clone());
                package_docs(out, &m.attrs);
                match &m.content {
                    Some((_, inner)) => {
                        let mut body = ModSummary::default();
                        module_markers(&mut body, &m.attrs);
                        self::items(&mut body, inner);
                        out.steps.push(Step::Inline { name, body });
                    }
                    None => {
                        let start = m.ident.span().start();
                        out.steps.push(Step::File {
                            name,
                            line: start.line,
                            column: start.column,
                            path: path_attr(&m.attrs),
                        });
                    }
                }
            }
            syn::Item::Fn(f) => package_docs(out, &f.attrs),
            syn::Item::Const(c) => package_docs(out, &c.attrs),
            syn::Item::Static(s) => package_docs(out, &s.attrs),
            syn::Item::Impl(i) => package_docs(out, &i.attrs),
            syn::Item::Type(t) => package_docs(out, &t.attrs),
            _ => {}
        }
    }
}

/// Adds the aliases and globs of a `use` tree under `prefix` to `module`.
fn collect_use(tree: &syn::UseTree, prefix: Vec<String>, module: &mut Module) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut next = prefix;
            next.push(p.ident.to_string());
            collect_use(&p.tree, next, module);
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let mut full = prefix;
            if name == "self" {
                if let Some(last) = full.last().cloned() {
                    module.uses.insert(last, full);
                }
                return;
            }
            full.push(name.clone());
            module.uses.insert(name, full);
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix;
            full.push(r.ident.to_string());
            module.uses.insert(r.rename.to_string(), full);
        }
        syn::UseTree::Glob(_) => module.globs.push(prefix),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                collect_use(t, prefix.clone(), module);
            }
        }
    }
}

/// Outer docs of items that are not schema types may carry package-level markers only.
fn package_docs(out: &mut ModSummary, attrs: &[syn::Attribute]) {
    let outer: Vec<syn::Attribute> = attrs
        .iter()
        .filter(|a| matches!(a.style, syn::AttrStyle::Outer))
        .cloned()
        .collect();
    let mut errors = Errors::default();
    let (_, markers) = lower::docs_and_markers(&outer, Target::Package, &mut errors);
    out.errors(errors);
    for m in markers {
        if matches!(m.def().effect, Effect::Scan(_)) {
            let loc = m.loc.unwrap_or_default();
            out.steps.push(Step::Error {
                line: loc.line,
                column: loc.column,
                message: format!(
                    "marker `+{}` describes a module: move it to the module's `//!` docs",
                    m.name()
                ),
            });
            continue;
        }
        out.steps.push(Step::PackageMarker(m));
    }
}

/// The full path a name imported into `scope` stands for: by its `use`, else by a glob of a
/// kube crate (`use kube::*`) when no glob of operator-gen's runtime could bring it.
fn imported<'m>(scope: &'m Module) -> impl Fn(&str) -> Option<Vec<String>> + 'm {
    move |name| {
        if let Some(full) = scope.uses.get(name) {
            return Some(full.clone());
        }
        let crate_of = |g: &Vec<String>| g.first().cloned().unwrap_or_default();
        let ours = scope
            .globs
            .iter()
            .any(|g| crate_of(g).starts_with("operator_gen"));
        let kube = scope
            .globs
            .iter()
            .find(|g| matches!(crate_of(g).as_str(), "kube" | "kube_derive"));
        match kube {
            Some(glob) if !ours => {
                let mut full = glob.clone();
                full.push(name.to_string());
                Some(full)
            }
            _ => None,
        }
    }
}

fn type_item(out: &mut ModSummary, input: syn::DeriveInput, scope: &Module) {
    let derives = lower::derives(&input.attrs, &imported(scope));
    if derives.kube_custom_resource
        || (derives.json_schema && !derives.custom_resource && !derives.schema)
    {
        kube_type_item(out, &input, derives);
        return;
    }
    if !derives.custom_resource && !derives.schema {
        // plain types: only package-level markers may stand on them
        let mut errors = Errors::default();
        let (_, markers) = lower::docs_and_markers(&input.attrs, Target::Type, &mut errors);
        for m in &markers {
            if is_package_level(m.kind) {
                out.steps.push(Step::PackageMarker(m.clone()));
            } else {
                errors.push(input.ident.span(), format!(
                    "marker `+{}` on `{}` has no effect because the type does not derive Schema: add #[derive(Schema)] or drop the marker",
                    m.name(), input.ident
                ));
            }
        }
        out.errors(errors);
        return;
    }
    let mut errors = Errors::default();
    let def = lower::type_def(&input, &mut errors);
    lower::check_derives(&input, def.as_ref(), derives, &mut errors);
    keep(out, def, errors);
}

/// A lowered type and its errors into the summary: the type, and the rbac and webhook markers
/// that may also sit on its doc.
fn keep(out: &mut ModSummary, def: Option<TypeDef>, errors: Errors) {
    if let Some(d) = &def {
        for m in d.markers.iter().filter(|m| is_package_level(m.kind)) {
            out.steps.push(Step::PackageMarker(m.clone()));
        }
    }
    out.errors(errors);
    if let Some(d) = def {
        out.module.types.insert(d.name.clone(), d);
    }
}

/// A type of a kube-rs crate: kube's `CustomResource` (its `#[kube(...)]` read) or a type
/// deriving schemars' `JsonSchema` only. A `JsonSchema` type that cannot be read is left out
/// without an error (the crate may use schemars for other things): a kind naming it reports it
/// as a type without a schema.
fn kube_type_item(out: &mut ModSummary, input: &syn::DeriveInput, derives: lower::Derives) {
    let mut errors = Errors::default();
    let def = kube_rs::type_def(input, derives.kube_custom_resource, &mut errors);
    if !derives.kube_custom_resource && !errors.is_empty() {
        return;
    }
    keep(out, def, errors);
}

/// Markers that describe the whole project wherever they stand: rbac rules and webhooks.
fn is_package_level(kind: Kind) -> bool {
    matches!(kind.def().effect, Effect::Rbac | Effect::Webhook)
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().trim() == "test")
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs
        .iter()
        .find(|a| a.path().is_ident("path"))
        .and_then(attribute_string)
}

/// The string of a `name = "..."` attribute (`#[path = "..."]`, a doc comment's `doc = "..."`).
pub(crate) fn attribute_string(attr: &syn::Attribute) -> Option<String> {
    match &attr.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    }
}

/// `source` with what the scan never reads blanked, so that `syn` parses only the rest:
/// - the inside of every function body (`fn name ... { ... }`) and of every `#[cfg(test)]`
///   module (`#[cfg(test)] mod name { ... }`: built for tests only, so none of its types or
///   markers is the operator's, as controller-gen reads no `_test.go` file);
/// - a function's signature, between its name and its body, which becomes `()`;
/// - the inside of the braces of a struct or enum whose attributes do not name `Schema`,
///   `CustomResource`, `JsonSchema` or `KubeSchema`: such a type adds nothing to the scan but the markers of its own docs;
/// - the prose of the `///` docs of those functions and types, which can carry package-level
///   markers only, and of `//!` docs, which carry module markers only: their lines that are
///   not markers (`+...`) go, as do all other line comments.
///
/// Blanked text keeps its line breaks and, on its last line, its width in spaces, and a removed
/// line comment leaves nothing after it on its line, so every line and column that is left
/// stays where it was. Comments, string, raw string and char literals are skipped as Rust lexes
/// them; a `fn` not followed by a name (a function pointer type) has no body. Text that does not
/// lex as expected is left as it is, so syn reports it.
pub fn blank_unread(source: &str) -> String {
    let mut lexer = Lexer::new(source.as_bytes());
    let mut edits: Vec<Edit> = Vec::new();
    // where the next item starts: after the last `;`, `{` or `}` outside an attribute
    let mut item_start = 0;
    // whether an attribute since `item_start` names a derive the scan reads
    let mut names_derive = false;
    while let Some(token) = lexer.next() {
        let after = lexer.at;
        let item = match token {
            Token::Punct(b'#') => {
                if let Some((open, close)) = test_module_body(&mut lexer) {
                    edits.push(Edit::blank(open, close));
                    true
                } else {
                    // an attribute, read whole, so that nothing in its brackets ends an item
                    lexer.at = after;
                    match attribute_names_derive(&mut lexer) {
                        Some(named) => names_derive |= named,
                        None => lexer.at = after,
                    }
                    false
                }
            }
            Token::Punct(b';') | Token::Open(b'{') | Token::Close(b'}') => true,
            Token::Ident(b"fn") => function(&mut lexer, source, item_start, &mut edits),
            Token::Ident(b"struct" | b"enum") if !names_derive => {
                plain_type(&mut lexer, source, item_start, &mut edits)
            }
            _ => false,
        };
        if item {
            item_start = lexer.at;
            names_derive = false;
        }
    }
    // outside what is blanked, the prose of inner docs (a module's docs carry markers only)
    // and the other comments go
    let blanked = edits.len();
    let prose = lexer
        .inner_docs
        .iter()
        .filter(|&&at| !is_marker_line(&source[at + 3..]));
    for &at in prose.chain(&lexer.comments) {
        let inside = edits[..blanked]
            .partition_point(|e| e.start <= at)
            .checked_sub(1)
            .is_some_and(|e| at < edits[e].end);
        if !inside {
            edits.push(Edit::comment(source, at));
        }
    }
    if edits.is_empty() {
        return source.to_string();
    }
    if edits.len() > blanked {
        edits.sort_by_key(|e| e.start);
    }
    let mut out = String::with_capacity(source.len());
    let mut from = 0;
    for edit in edits {
        out.push_str(&source[from..edit.start]);
        edit.write(&source[edit.start..edit.end], &mut out);
        from = edit.end;
    }
    out.push_str(&source[from..]);
    out
}

/// After `fn`: when a function item follows, blanks its signature, its body and the prose of
/// its docs (those lexed since `item_start`), and returns whether an item ended (at its body or
/// at the `;` of a declaration); otherwise leaves the lexer after `fn`.
fn function(lexer: &mut Lexer, source: &str, item_start: usize, edits: &mut Vec<Edit>) -> bool {
    let (keyword, after) = (lexer.at - 2, lexer.at);
    // a function item has a name; `fn(` is a pointer type
    if !matches!(lexer.next(), Some(Token::Ident(_))) {
        lexer.at = after;
        return false;
    }
    let name_end = lexer.at;
    let mut depth = 0usize;
    let open = loop {
        match lexer.next() {
            Some(Token::Open(b'{')) if depth == 0 => break lexer.at,
            Some(Token::Open(_)) => depth += 1,
            Some(Token::Close(_)) if depth == 0 => return false,
            Some(Token::Close(_)) => depth -= 1,
            Some(Token::Punct(b';')) if depth == 0 => return true,
            Some(_) => {}
            None => return false,
        }
    };
    let Some(close) = skip_to_close(lexer).filter(|&c| source.as_bytes()[c] == b'}') else {
        return false;
    };
    prose_docs(lexer, source, item_start, keyword, edits);
    let signature = &source[name_end..open - 1];
    if signature.trim_start().starts_with(['(', '<']) {
        edits.push(Edit::signature(name_end, open - 1));
    }
    edits.push(Edit::blank(open, close));
    true
}

/// After `struct` or `enum` of a type whose attributes name neither derive: blanks the inside
/// of its braces and the prose of its docs, and returns true; a tuple or unit struct, or text
/// that is not a type, is left alone (false, the lexer after the keyword).
fn plain_type(lexer: &mut Lexer, source: &str, item_start: usize, edits: &mut Vec<Edit>) -> bool {
    let after = lexer.at;
    let keyword = source[..after].trim_end_matches(char::is_alphabetic).len();
    if !matches!(lexer.next(), Some(Token::Ident(_))) {
        lexer.at = after;
        return false;
    }
    // the braces, unless a `(` or `;` comes first
    let open = loop {
        match lexer.next() {
            Some(Token::Open(b'{')) => break lexer.at,
            Some(Token::Ident(_) | Token::Punct(b'<' | b'>') | Token::Other) => {}
            _ => {
                lexer.at = after;
                return false;
            }
        }
    };
    let Some(close) = skip_to_close(lexer).filter(|&c| source.as_bytes()[c] == b'}') else {
        lexer.at = after;
        return false;
    };
    prose_docs(lexer, source, item_start, keyword, edits);
    edits.push(Edit::blank(open, close));
    true
}

/// Removes the `///` lines lexed between `from` and `to` that are not markers.
fn prose_docs(lexer: &Lexer, source: &str, from: usize, to: usize, edits: &mut Vec<Edit>) {
    let first = lexer.docs.partition_point(|&d| d < from);
    for &at in lexer.docs[first..].iter().take_while(|&&d| d < to) {
        if !is_marker_line(&source[at + 3..]) {
            edits.push(Edit::comment(source, at));
        }
    }
}

/// After a `#`: reads an attribute (`[...]` or `![...]`) to its closing bracket and returns
/// whether it names `Schema`, `CustomResource`, `JsonSchema` or `KubeSchema`; `None` when no attribute follows.
fn attribute_names_derive(lexer: &mut Lexer) -> Option<bool> {
    let mut token = lexer.next()?;
    if token == Token::Other && lexer.bytes[lexer.at - 1] == b'!' {
        token = lexer.next()?;
    }
    if token != Token::Open(b'[') {
        return None;
    }
    let (mut depth, mut named) = (0usize, false);
    loop {
        match lexer.next()? {
            Token::Open(_) => depth += 1,
            Token::Close(_) if depth == 0 => return Some(named),
            Token::Close(_) => depth -= 1,
            Token::Ident(b"Schema" | b"CustomResource" | b"JsonSchema" | b"KubeSchema") => {
                named = true
            }
            _ => {}
        }
    }
}

/// Whether the `///` line whose text starts `rest` is a marker line, as
/// [`lower::docs_and_markers`] reads a doc line.
fn is_marker_line(rest: &str) -> bool {
    let line = rest.split('\n').next().unwrap_or_default();
    let line = line.strip_prefix(' ').unwrap_or(line);
    line.trim_start().starts_with('+')
}

/// A stretch of the source that [`blank_unread`] replaces.
struct Edit {
    start: usize,
    end: usize,
    kind: EditKind,
}

enum EditKind {
    /// Its line breaks and, on its last line, one space per character, so that what follows
    /// keeps its line and column.
    Blank,
    /// `()`, then blank.
    Signature,
    /// Nothing: a line comment, to the end of its line, after which nothing is left to move.
    Cut,
}

impl Edit {
    /// A body: all of it blanked.
    fn blank(start: usize, end: usize) -> Self {
        Edit {
            start,
            end,
            kind: EditKind::Blank,
        }
    }

    fn signature(start: usize, end: usize) -> Self {
        Edit {
            start,
            end,
            kind: EditKind::Signature,
        }
    }

    /// The line comment starting at `at`, to its line break (a `\r` before it included).
    fn comment(source: &str, at: usize) -> Self {
        let end = source.as_bytes()[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(source.len(), |n| at + n);
        let end = if end > at && source.as_bytes()[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        Edit {
            start: at,
            end,
            kind: EditKind::Cut,
        }
    }

    fn write(&self, stretch: &str, out: &mut String) {
        let head = match self.kind {
            EditKind::Cut => return,
            EditKind::Blank => "",
            EditKind::Signature => "()",
        };
        out.push_str(head);
        let last_line = stretch.rfind('\n').map_or(0, |n| n + 1);
        // a `\r` before a line break moves nothing that follows, so line breaks alone are kept
        let breaks = stretch.as_bytes()[..last_line]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        push_repeated(out, BREAKS, breaks);
        let width = stretch[last_line..].chars().count();
        let width = if last_line == 0 {
            width.saturating_sub(head.len())
        } else {
            width
        };
        push_repeated(out, SPACES, width);
    }
}

const SPACES: &str = "                                                                ";
const BREAKS: &str = "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n";

/// `n` times the character `run` (a run of one ASCII character) is made of.
fn push_repeated(out: &mut String, run: &str, n: usize) {
    let mut left = n;
    while left > 0 {
        let take = left.min(run.len());
        out.push_str(&run[..take]);
        left -= take;
    }
}

/// After a `#`: the body of the module when the attribute is `[cfg(test)]`, more attributes and
/// a visibility may follow, and then `mod name {`; the lexer is left after the body's `}`.
fn test_module_body(lexer: &mut Lexer) -> Option<(usize, usize)> {
    let cfg_test = [
        Token::Open(b'['),
        Token::Ident(b"cfg"),
        Token::Open(b'('),
        Token::Ident(b"test"),
        Token::Close(b')'),
        Token::Close(b']'),
    ];
    for expected in cfg_test {
        if lexer.next()? != expected {
            return None;
        }
    }
    let mut token = lexer.next()?;
    loop {
        match token {
            // another attribute: `#[...]`
            Token::Punct(b'#') => {
                if lexer.next()? != Token::Open(b'[') {
                    return None;
                }
                skip_to_close(lexer)?;
            }
            // `pub` or `pub(crate)`, `pub(in path)`
            Token::Ident(b"pub") => {
                let at = lexer.at;
                if lexer.next()? == Token::Open(b'(') {
                    skip_to_close(lexer)?;
                } else {
                    lexer.at = at;
                }
            }
            Token::Ident(b"mod") => break,
            _ => return None,
        }
        token = lexer.next()?;
    }
    if !matches!(lexer.next()?, Token::Ident(_)) || lexer.next()? != Token::Open(b'{') {
        return None;
    }
    let open = lexer.at;
    let close = skip_to_close(lexer)?;
    Some((open, close))
}

/// After an opening bracket: moves past its matching closing one and returns where that is.
fn skip_to_close(lexer: &mut Lexer) -> Option<usize> {
    // what `next` would do token by token, byte by byte where it can: bodies are most of a
    // file's text, and only their brackets, literals and comments matter
    let b = lexer.bytes;
    let mut depth = 0usize;
    let mut i = lexer.at;
    while let Some(&c) = b.get(i) {
        match c {
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' | b'}' => {
                if depth == 0 {
                    lexer.at = i + 1;
                    return Some(i);
                }
                depth -= 1;
                i += 1;
            }
            b'"' | b'\'' | b'/' => {
                lexer.at = i;
                i = if lexer.skip_trivia_or_literal() {
                    lexer.at
                } else {
                    i + 1
                };
            }
            // a raw, byte or C string or a raw identifier may start here
            b'r' | b'b' | b'c' => {
                lexer.at = i;
                lexer.next();
                i = lexer.at;
            }
            _ if is_ident_byte(c) => {
                i += 1;
                while b.get(i).is_some_and(|&c| is_ident_byte(c)) {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    lexer.at = b.len();
    None
}

#[cfg(test)]
mod tests {
    use super::blank_unread;

    /// `source` with each of `bodies` (text between a body's braces) replaced by its line
    /// breaks and as many spaces as its last line has chars.
    fn blanked(source: &str, bodies: &[&str]) -> String {
        let mut out = source.to_string();
        for body in bodies {
            let (lines, last) = body.rsplit_once('\n').map_or((0, *body), |(before, last)| {
                (before.matches('\n').count() + 1, last)
            });
            let kept = "\n".repeat(lines) + &" ".repeat(last.chars().count());
            out = out.replacen(body, &kept, 1);
        }
        out
    }

    #[test]
    fn test_modules_are_blanked_whole() {
        let body = "\n    //! +kubebuilder:rbac:groups=x,resources=y,verbs=get\n    pub struct Fixture { a: u8 }\n    fn f() { g() }\n";
        for head in [
            "#[cfg(test)]\nmod tests {",
            "#[cfg(test)]\n#[allow(clippy::unwrap_used)]\npub(crate) mod tests {",
            "#[cfg(test)] pub mod tests {",
        ] {
            let src = format!("struct Kept;\n{head}{body}}}\nfn after() {{ x() }}\n");
            assert_eq!(
                blank_unread(&src),
                blanked(&src, &[body, " x() "]),
                "{head}"
            );
        }
        // not a test module: only function bodies go
        for src in [
            "#[cfg(not(test))]\nmod live { struct S; fn f() { g() } }\n",
            "#[cfg(test)]\nfn helper() { g() }\n",
            "#![cfg(test)]\nmod m { struct S; }\n",
        ] {
            let kept = blank_unread(src);
            assert!(
                kept.contains("struct") || kept.contains("fn helper()"),
                "{src}"
            );
            assert!(!kept.contains("g()"), "{src}: function bodies are blanked");
        }
    }

    #[test]
    fn bodies_and_signatures_are_blanked_and_positions_kept() {
        let src = "fn a() -> u8 {\n    let s = \"}\"; 1\n}\n#[derive(Schema)]\nstruct B { f: fn(u8) -> u8 }\n";
        assert_eq!(
            blank_unread(src),
            "fn a()       {\n\n}\n#[derive(Schema)]\nstruct B { f: fn(u8) -> u8 }\n"
        );
        // a signature over several lines: `()` where it began, the body's `{` where it was
        let src =
            "pub async fn b<T: Into<u8>>(\n    x: T,\n) -> u8 where T: Copy {\n    x.into()\n}\n";
        assert_eq!(
            blank_unread(src),
            "pub async fn b()\n\n                      {\n\n}\n"
        );
    }

    #[test]
    fn declarations_without_bodies_and_literals_are_left_alone() {
        let src = "trait T { fn a(&self); fn b(&self) { x() } }\nconst C: &str = r#\"fn x() { }\"#;\n// fn y() { }\nfn z<'a>(c: char) { let _ = ('{', c, 'a', b'\\''); }\n";
        let expected = blanked(src, &[" x() ", " let _ = ('{', c, 'a', b'\\''); "])
            .replacen("// fn y() { }", "", 1)
            .replacen("b(&self) ", "b()      ", 1)
            .replacen("z<'a>(c: char) ", "z()            ", 1);
        assert_eq!(blank_unread(src), expected);
    }

    #[test]
    fn multi_byte_text_keeps_its_columns() {
        let src = "fn a(\u{e9}: u8) { \"h\u{e9}llo\" }\n";
        assert_eq!(blank_unread(src), "fn a()      {         }\n");
    }

    #[test]
    fn a_type_that_derives_neither_is_blanked_but_its_markers() {
        let src = concat!(
            "/// Shared.\n",
            "/// +kubebuilder:rbac:groups=a,resources=b,verbs=get\n",
            "#[derive(Debug, Clone)]\n",
            "#[doc = \"{ ; }\"]\n",
            "pub struct Context<T: Clone> where T: Copy {\n",
            "    /// A client.\n",
            "    pub client: T,\n",
            "}\n",
            "/// Why.\n",
            "enum Error { A(#[from] E), B { c: u8 } }\n",
        );
        let expected = src
            .replacen("/// Shared.", "", 1)
            .replacen("/// Why.", "", 1)
            .replacen("\n    /// A client.\n    pub client: T,\n", "\n\n\n", 1)
            .replacen(" A(#[from] E), B { c: u8 } ", &" ".repeat(27), 1);
        assert_eq!(blank_unread(src), expected);
        // kept whole: a type whose attributes name either derive, wherever they name it, and
        // tuple and unit structs
        for src in [
            "#[derive(CustomResource)]\n#[k8s(kind = \"A\")]\n/// Doc.\nstruct ASpec { a: u8 }\n",
            "#[derive(Clone, crate::Schema)]\nenum E { A }\n",
            "#[cfg_attr(feature = \"x\", derive(Schema))]\nstruct S { a: u8 }\n",
            "/// Doc.\nstruct T(u8);\nstruct U;\n",
            "#![allow(dead_code)]\n#[derive(Schema)] struct V { a: u8 }\n",
        ] {
            assert_eq!(blank_unread(src), src);
        }
        // the derive named before a type does not carry over past the end of an item
        let src = "#[derive(Schema)]\nstruct A { a: u8 }\nstruct B { b: u8 }\n";
        assert_eq!(
            blank_unread(src),
            "#[derive(Schema)]\nstruct A { a: u8 }\nstruct B {       }\n"
        );
    }

    #[test]
    fn comments_go_but_markers_and_the_docs_of_schema_types() {
        let src = concat!(
            "/// Spec doc.\n",
            "/// +kubebuilder:object:root=true\n",
            "#[derive(Clone, operator_gen_runtime::Schema)]\n",
            "pub struct Spec {\n",
            "    /// Field doc.\n",
            "    pub a: fn(u8),\n",
            "}\n",
            "/// Reconciles.\n",
            "///\n",
            "///  +kubebuilder:rbac:groups=a,resources=b,verbs=get\n",
            "//// not a doc\n",
            "#[cfg(test)]\n",
            "/// Also prose.\n",
            "pub(crate) async fn reconcile() {}\n",
            "//! Inner.\n",
            "//! +groupName=example.com\n",
            "fn g() {\n    //! In a body.\n}\n",
        );
        let expected = src
            .replacen("//! Inner.", "", 1)
            .replacen("    //! In a body.\n", "\n", 1)
            .replacen("/// Reconciles.", "", 1)
            .replacen("///\n", "\n", 1)
            .replacen("//// not a doc", "", 1)
            .replacen("/// Also prose.", "", 1);
        assert_eq!(blank_unread(src), expected);
        // docs left before an item that is not a function stay docs
        let src = "fn f() {}\n/// Kept.\nconst C: u8 = 1;\n/// Kept at the end.\n";
        assert_eq!(blank_unread(src), src);
    }
}
