//! The source scan behind `operator-gen manifests`: parses a crate's files with `syn` (no
//! compile), follows its module tree and `use` declarations, and lowers every item that derives
//! `CustomResource` or `Schema` into the IR the derives also build.

use operator_gen_codegen::ir::{Marker, TypeDef};
use operator_gen_codegen::known;
use operator_gen_codegen::schema::{Definition, Scope};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::crates::Crates;
use crate::sources::{self, FileId, Files};
use crate::summary::{self, ModSummary, Step};

/// A module: its path from the crate root, its items and its `use` aliases.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Module {
    pub file: PathBuf,
    /// The scan cache's key of its file's bytes, when the scan has a cache: two runs that see
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

/// Every module of a crate and every package-level marker found in it.
#[derive(Debug, Default)]
pub struct Universe {
    pub modules: BTreeMap<Vec<String>, Module>,
    pub package_markers: Vec<(PathBuf, Marker)>,
    /// Module-level markers the scan reads (`+groupName`, `+versionName`,
    /// `+kubebuilder:skip`) per module.
    pub module_markers: BTreeMap<Vec<String>, Vec<Marker>>,
    /// Other crates by the name they are used by, with the path of their root module: the
    /// project's own crate at `[]`, every other one at `["::name"]`.
    pub externs: BTreeMap<String, Vec<String>>,
    /// Names a crate gives other crates in its `Cargo.toml` (renamed dependencies), by the path
    /// of that crate's root module: name → the root module of the crate it means.
    pub aliases: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    /// The root modules of crates read only for their types (from a registry or git): their
    /// kinds are not the project's, and their package-level markers are not read.
    pub foreign: BTreeSet<Vec<String>>,
}

/// The path of the root module of the crate that module `module` belongs to.
fn crate_root(module: &[String]) -> &[String] {
    match module.first() {
        Some(first) if first.starts_with("::") => &module[..1],
        _ => &[],
    }
}

/// A located problem in a source file: codegen's diagnostic, printed `file:line:column: message`.
pub use operator_gen_codegen::diag::Diagnostic;

struct Scanner<'a> {
    root: &'a Path,
    universe: Universe,
    diagnostics: Vec<Diagnostic>,
    files: Files,
    /// The files of the modules being assembled, outermost first: a module that includes one
    /// of them again is a cycle.
    open: Vec<FileId>,
}

/// input would overflow the stack instead of getting a diagnostic.
pub const MAX_NESTING: usize = 128;

/// Stack of the thread the scan parses on: room for [`MAX_NESTING`] levels of syn's recursion
/// in a debug build, whatever stack the caller's thread has.
pub(crate) const SCAN_STACK: usize = 64 << 20;

/// Runs `work` on a thread with [`SCAN_STACK`] bytes of stack (inline when no thread can be
/// started): the scan and the emitters recurse once per nesting level of the source.
pub(crate) fn on_scan_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    // the scan's pool threads have that stack: one of them runs it, and no thread is started
    if let Some(pool) = sources::pool() {
        return pool.install(work);
    }
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

/// How the scan reads files.
#[derive(Clone, Debug, Default)]
pub struct ScanSettings {
    /// Directory of the content-addressed cache of file summaries (`None`: no cache). Entries
    /// are read when they check out and written only after a scan without errors.
    pub cache_dir: Option<PathBuf>,
}

/// Scans the crate whose entry files are `entries` (e.g. `src/main.rs`); paths are reported
/// relative to `root`.
pub fn scan(root: &Path, entries: &[PathBuf]) -> Result<Universe, Vec<Diagnostic>> {
    scan_with(root, entries, &ScanSettings::default())
}

/// [`scan`] with settings: files are parsed in parallel, one wave of the module tree at a
/// time, and summaries come from the cache when it holds them.
pub fn scan_with(
    root: &Path,
    entries: &[PathBuf],
    settings: &ScanSettings,
) -> Result<Universe, Vec<Diagnostic>> {
    let (universe, mut pending) = scan_crates(root, entries, &Crates::default(), settings)?;
    pending.store();
    Ok(universe)
}

/// [`scan_with`] for the project's crate (`entries`, its library and binary roots) and the
/// other crates it brings in, each under its own root module (`["::name"]`). The new cache
/// entries are returned, not written: the caller stores them once everything succeeded.
pub fn scan_crates(
    root: &Path,
    entries: &[PathBuf],
    crates: &Crates,
    settings: &ScanSettings,
) -> Result<(Universe, PendingCache), Vec<Diagnostic>> {
    let dir_of = |e: &Path| e.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut roots: Vec<(PathBuf, Vec<String>)> =
        entries.iter().map(|e| (e.clone(), Vec::new())).collect();
    for c in &crates.others {
        roots.push((c.entry.clone(), vec![format!("::{}", c.name)]));
    }
    on_scan_stack(|| {
        let mut files = Files::new(settings.cache_dir.clone());
        // the project's own source directory holds most of its module files
        let likely = entries
            .first()
            .map(|e| sources::rust_files_under(&dir_of(e), MAX_LIKELY_FILES))
            .unwrap_or_default();
        files.prefetch(
            roots.iter().map(|(e, _)| (e.clone(), dir_of(e))).collect(),
            likely,
        );
        let mut s = Scanner {
            root,
            universe: Universe::default(),
            diagnostics: Vec::new(),
            files,
            open: Vec::new(),
        };
        if let Some(own) = &crates.own {
            s.universe.externs.insert(own.clone(), Vec::new());
        }
        for c in crates.others.iter().filter(|c| !c.local) {
            s.universe.foreign.insert(vec![format!("::{}", c.name)]);
        }
        for c in &crates.others {
            s.universe
                .externs
                .entry(c.name.clone())
                .or_insert_with(|| vec![format!("::{}", c.name)]);
        }
        for a in &crates.aliases {
            let user = match &a.user {
                None => Vec::new(),
                Some(name) => vec![format!("::{name}")],
            };
            if let Some(target) = s.universe.externs.get(&a.target).cloned() {
                s.universe
                    .aliases
                    .entry(user)
                    .or_default()
                    .insert(a.name.clone(), target);
            }
        }
        for (entry, path) in &roots {
            s.file(entry, path.clone(), dir_of(entry), None);
        }
        let pending = PendingCache(std::mem::replace(&mut s.files, Files::new(None)));
        s.finish().map(|u| (u, pending))
    })
}

/// Cache entries a scan computed, to be written once the run has succeeded (a failing run
/// changes nothing on disk).
pub struct PendingCache(Files);

impl PendingCache {
    /// Writes the entries (best effort: a cache that cannot be written only costs time).
    pub fn store(&mut self) {
        self.0.store();
    }

    /// The new entries, to write with [`PendingCache::store_fresh`].
    pub fn take_fresh(&mut self) -> Vec<(u128, String)> {
        self.0.take_fresh()
    }

    /// Writes entries taken with [`PendingCache::take_fresh`].
    pub fn store_fresh(&self, fresh: Vec<(u128, String)>) {
        self.0.store_fresh(fresh);
    }

    /// The stat stamps of the files the scan read (with the cache only); the caller stamps
    /// what it writes and stores them.
    pub fn stamps(&self) -> Option<&sources::Stamps> {
        self.0.stamps()
    }

    /// What the scan read, for [`crate::rerun`] (see [`Files::read_record`]).
    pub(crate) fn read_record(&self) -> Option<(Vec<sources::ReadFile>, Vec<sources::Lookup>)> {
        self.0.read_record()
    }
}

/// Scans one source text as the crate root; used by tests and the fuzz target.
pub fn scan_source(name: &Path, source: &str) -> Result<Universe, Vec<Diagnostic>> {
    on_scan_stack(|| {
        let mut s = Scanner {
            root: Path::new(""),
            universe: Universe::default(),
            diagnostics: Vec::new(),
            files: Files::new(None),
            open: Vec::new(),
        };
        let summary = summary::summarize(source);
        s.summary(name, &summary, Vec::new(), None, None);
        s.finish()
    })
}

/// Where `source` first nests deeper than [`MAX_NESTING`] brackets, as a 1-based line and a
/// 0-based column. Comments, strings and char literals are skipped; `<` counts as an opener and
/// `>` (not in `->`, `=>`) as a closer, so comparisons can only make the count too high.
pub(crate) fn too_deep(source: &str) -> Option<(usize, usize)> {
    // bytes, not chars: every delimiter is ASCII, and no byte of a multi-byte character is
    let bytes = source.as_bytes();
    let (mut brackets, mut angles) = (0usize, 0usize);
    let mut i = 0;
    let rest_until = |from: usize, b: u8| {
        bytes[from..]
            .iter()
            .position(|&c| c == b)
            .unwrap_or(bytes.len() - from)
    };
    while i < bytes.len() {
        let c = bytes[i];
        let next = bytes.get(i + 1).copied();
        let skip = match (c, next) {
            (b'/', Some(b'/')) => rest_until(i, b'\n'),
            (b'/', Some(b'*')) => {
                let mut depth = 0usize;
                let mut j = i;
                while j < bytes.len() {
                    match (bytes[j], bytes.get(j + 1)) {
                        (b'/', Some(b'*')) => {
                            depth += 1;
                            j += 2;
                        }
                        (b'*', Some(b'/')) => {
                            depth -= 1;
                            j += 2;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => j += 1,
                    }
                }
                j.min(bytes.len()) - i
            }
            (b'"', _) => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                (j + 1).min(bytes.len()) - i
            }
            (b'\'', Some(b'\\')) => bytes
                .get(i + 3..)
                .unwrap_or_default()
                .iter()
                .position(|&c| c == b'\'')
                .map_or(bytes.len() - i, |p| p + 4),
            (b'\'', Some(_)) => {
                // a char literal of one character, which may take several bytes
                let width = source
                    .get(i + 1..)
                    .and_then(|r| r.chars().next())
                    .map_or(1, char::len_utf8);
                if bytes.get(i + 1 + width) == Some(&b'\'') {
                    width + 2
                } else {
                    0
                }
            }
            _ => 0,
        };
        if skip > 0 {
            i += skip;
            continue;
        }
        let prev = if i > 0 { bytes[i - 1] } else { b' ' };
        match c {
            b'(' | b'[' | b'{' => brackets += 1,
            b')' | b']' | b'}' => brackets = brackets.saturating_sub(1),
            b'<' => angles += 1,
            b'>' if prev != b'-' && prev != b'=' => angles = angles.saturating_sub(1),
            _ => {}
        }
        if brackets + angles > MAX_NESTING {
            let before = &source[..i];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
            return Some((line, column));
        }
        i += 1;
    }
    None
}

/// Most files [`scan_crates`] reads from the project's source directory before it walks the
/// module tree.
const MAX_LIKELY_FILES: usize = 4096;

/// Deepest chain of module files (`mod a;` in a file of `mod b;` ...) the scan follows.
pub const MAX_MODULE_FILES: usize = 64;

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

    fn diag_at(&mut self, file: &Path, line: usize, column: usize, message: impl Into<String>) {
        let file = self.rel(file);
        self.diagnostics
            .push(Diagnostic::in_file(file, line, column, message));
    }

    /// Assembles the module at `path` from `file`. `decl` is the `mod` declaration that named
    /// it (file, line, column, name), where a cycle is reported.
    fn file(
        &mut self,
        file: &Path,
        path: Vec<String>,
        dir: PathBuf,
        decl: Option<(&Path, usize, usize, &str)>,
    ) {
        let loaded = match self.files.load(file) {
            Ok(l) => l,
            Err(message) => {
                self.diag_at(file, 0, 0, message);
                return;
            }
        };
        if let Some(id) = &loaded.id
            && self.open.contains(id)
        {
            let shown = self.rel(file).display().to_string();
            let (at, line, column, name) = decl.unwrap_or((file, 0, 0, ""));
            self.diag_at(at, line, column, format!(
                "module `{name}` includes {shown}, a file of a module that encloses it (a #[path] or symlink cycle): point it at a file of its own"
            ));
            return;
        }
        if self.open.len() >= MAX_MODULE_FILES {
            let (at, line, column, name) = decl.unwrap_or((file, 0, 0, ""));
            self.diag_at(at, line, column, format!(
                "module `{name}` is more than {MAX_MODULE_FILES} module files deep: flatten the module tree"
            ));
            return;
        }
        if let Some(id) = loaded.id.clone() {
            self.open.push(id);
        }
        let summary = loaded.summary.clone();
        self.summary(file, &summary, path, Some(dir), loaded.key);
        if loaded.id.is_some() {
            self.open.pop();
        }
    }

    /// Applies one module's summary: its markers, errors and types, then its child modules.
    fn summary(
        &mut self,
        file: &Path,
        summary: &ModSummary,
        path: Vec<String>,
        dir: Option<PathBuf>,
        content: Option<u128>,
    ) {
        let mut module = summary.module.clone();
        module.file = self.rel(file);
        module.path = path.clone();
        module.content = content;
        for step in &summary.steps {
            match step {
                Step::PackageMarker(_) if self.universe.foreign.contains(crate_root(&path)) => {}
                Step::PackageMarker(m) => {
                    let rel = self.rel(file);
                    self.universe.package_markers.push((rel, m.clone()));
                }
                Step::ModuleMarker(m) => self
                    .universe
                    .module_markers
                    .entry(path.clone())
                    .or_default()
                    .push(m.clone()),
                Step::Error {
                    line,
                    column,
                    message,
                } => self.diag_at(file, *line, *column, message.clone()),
                Step::Inline { name, body } => {
                    let mut child = path.clone();
                    child.push(name.clone());
                    let child_dir = dir.as_ref().map(|d| d.join(name));
                    self.summary(file, body, child, child_dir, content);
                }
                Step::File {
                    name,
                    line,
                    column,
                    path: explicit,
                } => {
                    let Some(dir) = dir.as_ref() else { continue };
                    let mut child = path.clone();
                    child.push(name.clone());
                    match self.files.child_file(dir, name, explicit.as_deref()) {
                        Some((f, child_dir)) => {
                            self.file(&f, child, child_dir, Some((file, *line, *column, name)))
                        }
                        None => self.diag_at(
                            file,
                            *line,
                            *column,
                            format!(
                                "module `{name}` has no file: create {name}.rs or {name}/mod.rs"
                            ),
                        ),
                    }
                }
            }
        }
        self.universe.modules.insert(path, module);
    }
}

pub(crate) fn collect_use(tree: &syn::UseTree, prefix: Vec<String>, module: &mut Module) {
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

thread_local! {
    /// The module paths looked up on this thread while [`consulted`] records them.
    static CONSULTED: std::cell::RefCell<Option<BTreeSet<Vec<String>>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `work` and returns, beside its result, every module path it looked up in a universe on
/// this thread, found or not: what resolving its paths depended on.
pub fn consulted<T>(work: impl FnOnce() -> T) -> (T, BTreeSet<Vec<String>>) {
    CONSULTED.with(|c| *c.borrow_mut() = Some(BTreeSet::new()));
    let out = work();
    let seen = CONSULTED
        .with(|c| c.borrow_mut().take())
        .unwrap_or_default();
    (out, seen)
}

impl Universe {
    /// The module at `path`; every lookup goes through here, so [`consulted`] sees it.
    pub fn module(&self, path: &[String]) -> Option<&Module> {
        CONSULTED.with(|c| {
            if let Some(seen) = c.borrow_mut().as_mut() {
                seen.insert(path.to_vec());
            }
        });
        self.modules.get(path)
    }

    /// The root module of the crate that `name` means as the first segment of a path written
    /// in module `from`: a renamed dependency of `from`'s crate, else a scanned crate's name.
    fn extern_crate(&self, from: &[String], name: &str) -> Option<&Vec<String>> {
        self.aliases
            .get(crate_root(from))
            .and_then(|a| a.get(name))
            .or_else(|| self.externs.get(name))
    }

    /// The module an absolute or relative module path names, seen from module `from`.
    fn module_path(&self, from: &[String], segments: &[String]) -> Option<Vec<String>> {
        let mut cur: Vec<String> = from.to_vec();
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                cur = crate_root(from).to_vec();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    if cur.len() <= crate_root(from).len() {
                        return None;
                    }
                    cur.pop();
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let here = self.module(&cur)?;
                if !here.children.iter().any(|c| c == first) {
                    if let Some(target) = here.uses.get(first) {
                        // an alias of a module brought in by `use`
                        let target = target.clone();
                        let base = self.module_path(&cur, &target)?;
                        let mut tail = vec!["self".to_string()];
                        tail.extend(rest[1..].iter().cloned());
                        return self.module_path(&base, &tail);
                    }
                    // another crate of the workspace, or a path dependency
                    cur = self.extern_crate(from, first)?.clone();
                    rest = &rest[1..];
                }
            }
            None => {}
        }
        for seg in rest {
            let m = self.module(&cur)?;
            if !m.children.iter().any(|c| c == seg) {
                return None;
            }
            cur.push(seg.clone());
        }
        Some(cur)
    }

    /// What a type path written in module `from` names: a definition of this crate, or the
    /// full path of a type of another crate (through `use`, renames, `pub use` and globs).
    pub fn resolve(&self, from: &[String], path: &str) -> Option<Resolved<'_>> {
        self.resolve_depth(from, path, 0)
    }

    fn resolve_depth(&self, from: &[String], path: &str, depth: usize) -> Option<Resolved<'_>> {
        if depth > 16 {
            return None;
        }
        // generic arguments do not take part in resolution
        let bare = path.split('<').next().unwrap_or(path);
        let segments: Vec<String> = bare.split("::").map(str::to_string).collect();
        let (name, module_segments) = segments.split_last()?;
        let here = self.module(from)?;
        if module_segments.is_empty() {
            if let Some(d) = here.types.get(name) {
                return Some(Resolved::Local(from.to_vec(), d));
            }
            if let Some(target) = here.uses.get(name) {
                return self.resolve_target(from, target, depth);
            }
            for glob in &here.globs {
                if let Some(m) = self.module_path(from, glob) {
                    if let Some(found) = self.resolve_depth(&m, name, depth + 1) {
                        return Some(found);
                    }
                } else if self.is_external(from, glob) {
                    let mut full = glob.clone();
                    full.push(name.clone());
                    if let known::External::Known(_) = known::external(&full.join("::")) {
                        return Some(Resolved::External(full));
                    }
                }
            }
            return None;
        }
        if let Some(m) = self.module_path(from, module_segments) {
            return self.resolve_depth(&m, name, depth + 1);
        }
        // a path into another crate, directly or through an alias brought in by `use`
        let first = &module_segments[0];
        if let Some(target) = here.uses.get(first) {
            let mut full = target.clone();
            full.extend(segments[1..].iter().cloned());
            return self.resolve_target(from, &full, depth);
        }
        self.is_external(from, module_segments)
            .then(|| Resolved::External(segments.clone()))
    }

    /// Resolves the target of a `use`: a path in this crate or a path into another crate.
    fn resolve_target(
        &self,
        from: &[String],
        target: &[String],
        depth: usize,
    ) -> Option<Resolved<'_>> {
        let (last, mods) = target.split_last()?;
        if mods.is_empty() {
            return None;
        }
        if let Some(m) = self.module_path(from, mods) {
            return self.resolve_depth(&m, last, depth + 1);
        }
        if let Some(alias) = self.module(from).and_then(|h| h.uses.get(&mods[0]))
            && alias.first() != mods.first()
        {
            let mut full = alias.clone();
            full.extend(target[1..].iter().cloned());
            return self.resolve_target(from, &full, depth + 1);
        }
        self.is_external(from, mods)
            .then(|| Resolved::External(target.to_vec()))
    }

    /// Whether a module path leaves the scanned crates: its first segment is neither `crate`,
    /// `self`, `super`, a module visible from `from` nor a scanned crate of the workspace.
    fn is_external(&self, from: &[String], segments: &[String]) -> bool {
        let Some(first) = segments.first() else {
            return false;
        };
        if matches!(first.as_str(), "crate" | "self" | "super") {
            return false;
        }
        let here = self.module(from);
        !here.is_some_and(|h| h.children.iter().any(|c| c == first) || h.uses.contains_key(first))
            && self.extern_crate(from, first).is_none()
    }

    /// Every custom resource spec struct of the project's crates, with its module path.
    pub fn resources(&self) -> Vec<(&Vec<String>, &TypeDef)> {
        let mut out = Vec::new();
        for (path, m) in &self.modules {
            if self.foreign.contains(crate_root(path)) {
                continue;
            }
            for d in m.types.values() {
                if d.resource.is_some() {
                    out.push((path, d));
                }
            }
        }
        out
    }
}

/// What a type path names.
#[derive(Debug)]
pub enum Resolved<'u> {
    /// A definition of this crate, with its module path.
    Local(Vec<String>, &'u TypeDef),
    /// The full path of a type of another crate (`k8s_openapi::api::core::v1::Container`).
    External(Vec<String>),
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
    fn resolve(&self, path: &str) -> Result<Box<dyn Scope + '_>, Diagnostic> {
        match self.universe.resolve(&self.module, path) {
            Some(Resolved::Local(module, def)) => Ok(Box::new(ScanScope {
                universe: self.universe,
                module,
                def,
            })),
            Some(Resolved::External(full)) => match known::external(&full.join("::")) {
                known::External::Known(canonical) => Ok(Box::new(Definition::known(&canonical))),
                _ => Err(known::missing(&full.join("::")).into()),
            },
            None => Err(Diagnostic::new(format!(
                "`{path}` has no schema: add #[derive(Schema)] to it, or import it with `use`"
            ))),
        }
    }
    fn file(&self) -> Option<&Path> {
        self.universe
            .modules
            .get(&self.module)
            .map(|m| m.file.as_path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_deep_skips_comments_strings_and_char_literals_and_counts_columns_in_characters() {
        let prefix = "let s = \"é(\"; let c = 'é'; let d = '('; let e = '\\''; ";
        let deep = "(".repeat(MAX_NESTING + 1);
        let source = format!("// é (\n/* ( /* ( */ */\n{prefix}{deep}");
        let column = prefix.chars().count() + MAX_NESTING;
        assert_eq!(too_deep(&source), Some((3, column)));
        let shallow = format!("// é (\n{prefix}{}", "(".repeat(MAX_NESTING));
        assert_eq!(too_deep(&shallow), None);
    }
}
