//! The source scan behind `operator-gen manifests`: parses a crate's files with `syn` (no
//! compile), follows its module tree and `use` declarations, and lowers every item that derives
//! `CustomResource` or `Schema` into the IR the derives also build.

use operator_gen_codegen::ir::{Marker, TypeDef};
use operator_gen_codegen::lower::{self, Errors};
use operator_gen_codegen::markers::Target;
use operator_gen_codegen::schema::Scope;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A module: its path from the crate root, its items and its `use` aliases.
#[derive(Debug, Default)]
pub struct Module {
    pub file: PathBuf,
    /// `crate::a::b` as `["a", "b"]`.
    pub path: Vec<String>,
    pub types: BTreeMap<String, TypeDef>,
    pub children: Vec<String>,
    /// alias → absolute path (`["crate", "api", "v1", "Foo"]` or relative to this module).
    pub uses: BTreeMap<String, Vec<String>>,
    /// `use x::*` targets.
    pub globs: Vec<Vec<String>>,
}

/// Every module of a crate and every package-level marker found in it.
#[derive(Debug, Default)]
pub struct Universe {
    pub modules: BTreeMap<Vec<String>, Module>,
    pub package_markers: Vec<(PathBuf, Marker)>,
    /// Module-level `+groupName`/`+versionName` per module.
    pub module_markers: BTreeMap<Vec<String>, Vec<Marker>>,
}

/// A located problem in a source file.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file.display(),
            self.line,
            self.column + 1,
            self.message
        )
    }
}

struct Scanner<'a> {
    root: &'a Path,
    universe: Universe,
    diagnostics: Vec<Diagnostic>,
}

/// Deepest nesting of brackets (`()[]{}<>`) the scan accepts. syn parses recursively, so deeper
/// input would overflow the stack instead of getting a diagnostic.
pub const MAX_NESTING: usize = 128;

/// Stack of the thread the scan parses on: room for [`MAX_NESTING`] levels of syn's recursion
/// in a debug build, whatever stack the caller's thread has.
const SCAN_STACK: usize = 64 << 20;

/// Runs `work` on a thread with [`SCAN_STACK`] bytes of stack (inline when no thread can be
/// started): the scan and the emitters recurse once per nesting level of the source.
pub(crate) fn on_scan_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    let mut work = Some(work);
    let done = std::thread::scope(|scope| {
        let slot = &mut work;
        let spawned = std::thread::Builder::new()
            .name("operator-gen-scan".into())
            .stack_size(SCAN_STACK)
            .spawn_scoped(scope, move || slot.take().map(|w| w()));
        match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Err(_) => None,
        }
    });
    match (done, work.take()) {
        (Some(value), _) => value,
        (None, Some(w)) => w(),
        (None, None) => unreachable!("the scan thread took its work and returned nothing"),
    }
}

/// Scans the crate whose entry file is `entry` (e.g. `src/main.rs`); paths are reported relative
/// to `root`.
pub fn scan(root: &Path, entries: &[PathBuf]) -> Result<Universe, Vec<Diagnostic>> {
    on_scan_stack(|| {
        let mut s = Scanner {
            root,
            universe: Universe::default(),
            diagnostics: Vec::new(),
        };
        for entry in entries {
            s.file(
                entry,
                Vec::new(),
                entry.parent().map(Path::to_path_buf).unwrap_or_default(),
            );
        }
        s.finish()
    })
}

/// Scans one source text as the crate root; used by tests and the fuzz target.
pub fn scan_source(name: &Path, source: &str) -> Result<Universe, Vec<Diagnostic>> {
    on_scan_stack(|| {
        let mut s = Scanner {
            root: Path::new(""),
            universe: Universe::default(),
            diagnostics: Vec::new(),
        };
        s.parsed(name, source, Vec::new(), None);
        s.finish()
    })
}

/// Where `source` first nests deeper than [`MAX_NESTING`] brackets, as a 1-based line and a
/// 0-based column. Comments, strings and char literals are skipped; `<` counts as an opener and
/// `>` (not in `->`, `=>`) as a closer, so comparisons can only make the count too high.
fn too_deep(source: &str) -> Option<(usize, usize)> {
    let chars: Vec<char> = source.chars().collect();
    let (mut brackets, mut angles) = (0usize, 0usize);
    let (mut line, mut column) = (1usize, 0usize);
    let mut i = 0;
    let advance = |i: &mut usize, line: &mut usize, column: &mut usize, n: usize| {
        for _ in 0..n {
            if chars.get(*i) == Some(&'\n') {
                *line += 1;
                *column = 0;
            } else {
                *column += 1;
            }
            *i += 1;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let skip = match (c, next) {
            ('/', Some('/')) => chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .unwrap_or(chars.len() - i),
            ('/', Some('*')) => {
                let mut depth = 0usize;
                let mut j = i;
                while j < chars.len() {
                    match (chars[j], chars.get(j + 1)) {
                        ('/', Some('*')) => {
                            depth += 1;
                            j += 2;
                        }
                        ('*', Some('/')) => {
                            depth -= 1;
                            j += 2;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => j += 1,
                    }
                }
                j - i
            }
            ('"', _) => {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '"' {
                    j += if chars[j] == '\\' { 2 } else { 1 };
                }
                (j + 1).min(chars.len()) - i
            }
            ('\'', Some('\\')) => chars
                .get(i + 3..)
                .unwrap_or_default()
                .iter()
                .position(|&c| c == '\'')
                .map_or(chars.len() - i, |p| p + 4),
            ('\'', Some(_)) if chars.get(i + 2) == Some(&'\'') => 3,
            _ => 0,
        };
        if skip > 0 {
            advance(&mut i, &mut line, &mut column, skip);
            continue;
        }
        let prev = if i > 0 { chars[i - 1] } else { ' ' };
        match c {
            '(' | '[' | '{' => brackets += 1,
            ')' | ']' | '}' => brackets = brackets.saturating_sub(1),
            '<' => angles += 1,
            '>' if prev != '-' && prev != '=' => angles = angles.saturating_sub(1),
            _ => {}
        }
        if brackets + angles > MAX_NESTING {
            return Some((line, column));
        }
        advance(&mut i, &mut line, &mut column, 1);
    }
    None
}

impl Scanner<'_> {
    fn finish(self) -> Result<Universe, Vec<Diagnostic>> {
        if self.diagnostics.is_empty() {
            Ok(self.universe)
        } else {
            Err(self.diagnostics)
        }
    }

    fn rel(&self, file: &Path) -> PathBuf {
        file.strip_prefix(self.root)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| file.to_path_buf())
    }

    fn diag(&mut self, file: &Path, span: proc_macro2::Span, message: impl Into<String>) {
        let start = span.start();
        let file = self.rel(file);
        self.diagnostics.push(Diagnostic {
            file,
            line: start.line,
            column: start.column,
            message: message.into(),
        });
    }

    fn file(&mut self, file: &Path, path: Vec<String>, dir: PathBuf) {
        let source = match std::fs::read_to_string(file) {
            Ok(s) => s,
            Err(e) => {
                let rel = self.rel(file);
                self.diagnostics.push(Diagnostic {
                    file: rel,
                    line: 0,
                    column: 0,
                    message: format!("cannot read: {e}"),
                });
                return;
            }
        };
        self.parsed(file, &source, path, Some(dir));
    }

    fn parsed(&mut self, file: &Path, source: &str, path: Vec<String>, dir: Option<PathBuf>) {
        if let Some((line, column)) = too_deep(source) {
            let file = self.rel(file);
            self.diagnostics.push(Diagnostic {
                file,
                line,
                column,
                message: format!(
                    "brackets nest more than {MAX_NESTING} levels deep: name the inner types or expressions"
                ),
            });
            return;
        }
        let parsed = match syn::parse_file(source) {
            Ok(f) => f,
            Err(e) => {
                self.diag(
                    file,
                    e.span(),
                    format!("does not parse: {e}; fix the syntax, then run again"),
                );
                return;
            }
        };
        self.module_markers(file, &parsed.attrs, &path);
        self.items(file, &parsed.items, path, dir);
    }

    fn module_markers(&mut self, file: &Path, attrs: &[syn::Attribute], path: &[String]) {
        let inner: Vec<syn::Attribute> = attrs
            .iter()
            .filter(|a| matches!(a.style, syn::AttrStyle::Inner(_)))
            .cloned()
            .collect();
        let mut errors = Errors::default();
        let (_, markers) = lower::docs_and_markers(&inner, Target::Package, &mut errors);
        self.errors(file, errors);
        for m in markers {
            if m.name == "groupName" || m.name == "versionName" {
                self.universe
                    .module_markers
                    .entry(path.to_vec())
                    .or_default()
                    .push(m);
            } else if is_package_level(&m.name) {
                let rel = self.rel(file);
                self.universe.package_markers.push((rel, m));
            }
        }
    }

    fn errors(&mut self, file: &Path, errors: Errors) {
        for e in errors.0 {
            self.diag(file, e.span, e.message);
        }
    }

    fn items(&mut self, file: &Path, items: &[syn::Item], path: Vec<String>, dir: Option<PathBuf>) {
        let mut module = Module {
            file: self.rel(file),
            path: path.clone(),
            ..Default::default()
        };
        for item in items {
            match item {
                syn::Item::Struct(s) => {
                    self.type_item(file, &mut module, syn::DeriveInput::from(s.clone()))
                }
                syn::Item::Enum(e) => {
                    self.type_item(file, &mut module, syn::DeriveInput::from(e.clone()))
                }
                syn::Item::Union(u) => {
                    self.type_item(file, &mut module, syn::DeriveInput::from(u.clone()))
                }
                syn::Item::Use(u) => collect_use(&u.tree, Vec::new(), &mut module),
                syn::Item::Mod(m) => {
                    if is_cfg_test(&m.attrs) {
                        continue;
                    }
                    let name = m.ident.to_string().trim_start_matches("r#").to_string();
                    let mut child = path.clone();
                    child.push(name.clone());
                    module.children.push(name.clone());
                    self.package_docs(file, &m.attrs);
                    match &m.content {
                        Some((_, inner)) => {
                            let child_dir = dir.as_ref().map(|d| d.join(&name));
                            self.module_markers(file, &m.attrs, &child);
                            self.items(file, inner, child, child_dir);
                        }
                        None => {
                            let Some(dir) = dir.clone() else { continue };
                            let explicit = path_attr(&m.attrs).map(|p| dir.join(p));
                            let candidates = [
                                dir.join(format!("{name}.rs")),
                                dir.join(&name).join("mod.rs"),
                            ];
                            let found = explicit
                                .or_else(|| candidates.iter().find(|c| c.is_file()).cloned());
                            match found {
                                Some(f) => {
                                    let child_dir = if f.file_name().is_some_and(|n| n == "mod.rs") || path_attr(&m.attrs).is_some() {
                                        f.parent().map(Path::to_path_buf).unwrap_or_default()
                                    } else {
                                        dir.join(&name)
                                    };
                                    self.file(&f, child, child_dir);
                                }
                                None => self.diag(file, m.ident.span(), format!("module `{name}` has no file: create {name}.rs or {name}/mod.rs")),
                            }
                        }
                    }
                }
                syn::Item::Fn(f) => self.package_docs(file, &f.attrs),
                syn::Item::Const(c) => self.package_docs(file, &c.attrs),
                syn::Item::Static(s) => self.package_docs(file, &s.attrs),
                syn::Item::Impl(i) => self.package_docs(file, &i.attrs),
                syn::Item::Type(t) => self.package_docs(file, &t.attrs),
                _ => {}
            }
        }
        self.universe.modules.insert(path, module);
    }

    /// Outer docs of items that are not schema types may carry package-level markers only.
    fn package_docs(&mut self, file: &Path, attrs: &[syn::Attribute]) {
        let outer: Vec<syn::Attribute> = attrs
            .iter()
            .filter(|a| matches!(a.style, syn::AttrStyle::Outer))
            .cloned()
            .collect();
        let mut errors = Errors::default();
        let (_, markers) = lower::docs_and_markers(&outer, Target::Package, &mut errors);
        self.errors(file, errors);
        for m in markers {
            if m.name == "groupName" || m.name == "versionName" {
                continue;
            }
            let rel = self.rel(file);
            self.universe.package_markers.push((rel, m));
        }
    }

    fn type_item(&mut self, file: &Path, module: &mut Module, input: syn::DeriveInput) {
        let derives = lower::derives(&input.attrs);
        if !derives.custom_resource && !derives.schema {
            // plain types: only package-level markers may stand on them
            let mut errors = Errors::default();
            let (_, markers) = lower::docs_and_markers(&input.attrs, Target::Type, &mut errors);
            for m in &markers {
                if is_package_level(&m.name) {
                    let rel = self.rel(file);
                    self.universe.package_markers.push((rel, m.clone()));
                } else {
                    errors.push(input.ident.span(), format!(
                        "marker `+{}` on `{}` has no effect because the type does not derive Schema: add #[derive(Schema)] or drop the marker",
                        m.name, input.ident
                    ));
                }
            }
            self.errors(file, errors);
            return;
        }
        let mut errors = Errors::default();
        let def = lower::type_def(&input, &mut errors);
        lower::check_derives(&input, def.as_ref(), derives, &mut errors);
        // rbac and webhook markers may also sit on a type's doc
        if let Some(d) = &def {
            for m in d.markers.iter().filter(|m| is_package_level(&m.name)) {
                let rel = self.rel(file);
                self.universe.package_markers.push((rel, m.clone()));
            }
        }
        self.errors(file, errors);
        if let Some(d) = def {
            module.types.insert(d.name.clone(), d);
        }
    }
}

fn is_package_level(name: &str) -> bool {
    matches!(
        name,
        "kubebuilder:rbac" | "kubebuilder:webhook" | "kubebuilder:webhookconfiguration"
    )
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
        .and_then(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
}

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

impl Universe {
    /// The module an absolute or relative module path names, seen from module `from`.
    fn module_path(&self, from: &[String], segments: &[String]) -> Option<Vec<String>> {
        let mut cur: Vec<String> = from.to_vec();
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                cur.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    cur.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let here = self.modules.get(&cur)?;
                if !here.children.iter().any(|c| c == first) {
                    // an alias of a module brought in by `use`
                    let target = here.uses.get(first)?.clone();
                    let base = self.module_path(&cur, &target)?;
                    let mut tail = vec!["self".to_string()];
                    tail.extend(rest[1..].iter().cloned());
                    return self.module_path(&base, &tail);
                }
            }
            None => {}
        }
        for seg in rest {
            let m = self.modules.get(&cur)?;
            if !m.children.iter().any(|c| c == seg) {
                return None;
            }
            cur.push(seg.clone());
        }
        Some(cur)
    }

    /// The definition a type path written in module `from` names.
    pub fn resolve(&self, from: &[String], path: &str) -> Option<(Vec<String>, &TypeDef)> {
        self.resolve_depth(from, path, 0)
    }

    fn resolve_depth(
        &self,
        from: &[String],
        path: &str,
        depth: usize,
    ) -> Option<(Vec<String>, &TypeDef)> {
        if depth > 16 {
            return None;
        }
        let segments: Vec<String> = path.split("::").map(str::to_string).collect();
        let (name, module_segments) = segments.split_last()?;
        let here = self.modules.get(from)?;
        if module_segments.is_empty() {
            if let Some(d) = here.types.get(name) {
                return Some((from.to_vec(), d));
            }
            if let Some(target) = here.uses.get(name)
                && let Some((last, mods)) = target.split_last()
            {
                let m = self.module_path(from, mods)?;
                return self.resolve_depth(&m, last, depth + 1);
            }
            for glob in &here.globs {
                if let Some(m) = self.module_path(from, glob)
                    && let Some(found) = self.modules.get(&m).and_then(|mm| mm.types.get(name))
                {
                    return Some((m, found));
                }
            }
            return None;
        }
        let m = self.module_path(from, module_segments)?;
        self.resolve_depth(&m, name, depth + 1)
    }

    /// Every custom resource spec struct, with its module path.
    pub fn resources(&self) -> Vec<(&Vec<String>, &TypeDef)> {
        let mut out = Vec::new();
        for (path, m) in &self.modules {
            for d in m.types.values() {
                if d.resource.is_some() {
                    out.push((path, d));
                }
            }
        }
        out
    }
}

/// A definition in the module tree, for the schema emitter.
pub struct ScanScope<'u> {
    pub universe: &'u Universe,
    pub module: Vec<String>,
    pub def: &'u TypeDef,
}

impl Scope for ScanScope<'_> {
    fn def(&self) -> &TypeDef {
        self.def
    }
    fn resolve(&self, path: &str) -> Result<Box<dyn Scope + '_>, String> {
        match self.universe.resolve(&self.module, path) {
            Some((module, def)) => Ok(Box::new(ScanScope {
                universe: self.universe,
                module,
                def,
            })),
            None => Err(format!(
                "`{path}` has no schema: add #[derive(Schema)] to it, or import it with `use`"
            )),
        }
    }
}
