//! The pipeline's third stage: the universe, every module of the crates read, assembled from
//! their files' summaries by following the module tree, and the resolution of the paths written
//! in it (through `use`, renames, `pub use` and globs) for the emitters.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use operator_gen_codegen::ir::{Marker, TypeDef};
use operator_gen_codegen::known;
use operator_gen_codegen::schema::{Definition, Scope};

use super::diag::Diagnostic;
use super::incremental::NoCache;
use super::read::{FileId, Files, Given, MAX_MODULE_FILES, dir_of};
use super::summary::{self, ModSummary, Module, Step};
use super::threads::on_scan_stack;

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

/// The universe being assembled.
struct Assembly<'a, 'l> {
    root: &'a Path,
    universe: Universe,
    diagnostics: Vec<Diagnostic>,
    files: &'a mut Files<'l>,
    /// The files of the modules being assembled, outermost first: a module that includes one
    /// of them again is a cycle.
    open: Vec<FileId>,
}

/// Assembles the universe of the crates `given` names from the files `files` has read (and
/// those it reads now); paths are reported relative to `root`.
pub(crate) fn assemble(
    root: &Path,
    given: &Given,
    files: &mut Files,
) -> Result<Universe, Vec<Diagnostic>> {
    let mut s = Assembly {
        root,
        universe: Universe::of_crates(given),
        diagnostics: Vec::new(),
        files,
        open: Vec::new(),
    };
    for (entry, path) in given.roots() {
        s.file(&entry, path, dir_of(&entry), None);
    }
    s.finish()
}

/// Assembles one source text as the crate root; used by tests and the fuzz target.
pub fn scan_source(name: &Path, source: &str) -> Result<Universe, Vec<Diagnostic>> {
    on_scan_stack(|| {
        let mut files = Files::new(&NoCache);
        let mut s = Assembly {
            root: Path::new(""),
            universe: Universe::default(),
            diagnostics: Vec::new(),
            files: &mut files,
            open: Vec::new(),
        };
        let summary = summary::summarize(source);
        s.summary(name, &summary, Vec::new(), None, None);
        s.finish()
    })
}

impl Universe {
    /// No module yet; the names the crates of `given` are known by.
    fn of_crates(given: &Given) -> Universe {
        let crates = &given.crates;
        let mut universe = Universe::default();
        if let Some(own) = &crates.own {
            universe.externs.insert(own.clone(), Vec::new());
        }
        for c in crates.others.iter().filter(|c| !c.local) {
            universe.foreign.insert(vec![format!("::{}", c.name)]);
        }
        for c in &crates.others {
            universe
                .externs
                .entry(c.name.clone())
                .or_insert_with(|| vec![format!("::{}", c.name)]);
        }
        for a in &crates.aliases {
            let user = match &a.user {
                None => Vec::new(),
                Some(name) => vec![format!("::{name}")],
            };
            if let Some(target) = universe.externs.get(&a.target).cloned() {
                universe
                    .aliases
                    .entry(user)
                    .or_default()
                    .insert(a.name.clone(), target);
            }
        }
        universe
    }
}

impl Assembly<'_, '_> {
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
            Err(unreadable) => {
                self.diag_at(file, 0, 0, unreadable.to_string());
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

/// What the emission of one kind looked up: every module path, found or not, when asked to
/// keep them (what resolving its paths depended on), and whether a type path named nothing the
/// scanned crates define or operator-gen knows.
#[derive(Default)]
pub(crate) struct Lookups {
    modules: Option<RefCell<BTreeSet<Vec<String>>>>,
    type_not_found: Cell<bool>,
}

impl Lookups {
    /// Lookups that keep the module paths looked up.
    pub(crate) fn keeping_modules() -> Lookups {
        Lookups {
            modules: Some(RefCell::new(BTreeSet::new())),
            type_not_found: Cell::new(false),
        }
    }

    /// The module paths looked up (none unless kept).
    pub(crate) fn modules(self) -> BTreeSet<Vec<String>> {
        self.modules.map(RefCell::into_inner).unwrap_or_default()
    }

    /// Whether a type path named nothing known.
    pub(crate) fn type_not_found(&self) -> bool {
        self.type_not_found.get()
    }
}

/// Path resolution in a universe, with its lookups told to a [`Lookups`].
#[derive(Clone, Copy)]
pub(crate) struct Resolver<'u> {
    universe: &'u Universe,
    lookups: &'u Lookups,
}

impl<'u> Resolver<'u> {
    pub(crate) fn new(universe: &'u Universe, lookups: &'u Lookups) -> Resolver<'u> {
        Resolver { universe, lookups }
    }

    /// The module at `path`; every lookup goes through here, so the lookups see it.
    fn module(&self, path: &[String]) -> Option<&'u Module> {
        if let Some(seen) = &self.lookups.modules {
            seen.borrow_mut().insert(path.to_vec());
        }
        self.universe.modules.get(path)
    }

    /// The root module of the crate that `name` means as the first segment of a path written
    /// in module `from`: a renamed dependency of `from`'s crate, else a scanned crate's name.
    fn extern_crate(&self, from: &[String], name: &str) -> Option<&'u Vec<String>> {
        let u = self.universe;
        u.aliases
            .get(crate_root(from))
            .and_then(|a| a.get(name))
            .or_else(|| u.externs.get(name))
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
    pub(crate) fn resolve(&self, from: &[String], path: &str) -> Option<Resolved<'u>> {
        self.resolve_depth(from, path, 0)
    }

    fn resolve_depth(&self, from: &[String], path: &str, depth: usize) -> Option<Resolved<'u>> {
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
    ) -> Option<Resolved<'u>> {
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
}

impl Universe {
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

/// A definition in the module tree, for the schema emitter; the paths it resolves are told to
/// its resolver's lookups.
pub(crate) struct ScanScope<'u> {
    pub resolver: Resolver<'u>,
    pub module: Vec<String>,
    pub def: &'u TypeDef,
}

impl Scope for ScanScope<'_> {
    fn def(&self) -> &TypeDef {
        self.def
    }
    fn resolve(&self, path: &str) -> Result<Box<dyn Scope + '_>, Diagnostic> {
        let not_found = || self.resolver.lookups.type_not_found.set(true);
        match self.resolver.resolve(&self.module, path) {
            Some(Resolved::Local(module, def)) => Ok(Box::new(ScanScope {
                resolver: self.resolver,
                module,
                def,
            })),
            Some(Resolved::External(full)) => match known::external(&full.join("::")) {
                known::External::Known(canonical) => Ok(Box::new(Definition::known(&canonical))),
                known::External::MissingKubernetes(_) => {
                    Err(known::missing(&full.join("::")).into())
                }
                known::External::Unknown(_) => {
                    not_found();
                    Err(known::missing(&full.join("::")).into())
                }
            },
            None => {
                not_found();
                Err(Diagnostic::new(format!(
                    "`{path}` has no schema: add #[derive(Schema)] to it, or import it with `use`"
                )))
            }
        }
    }
    fn file(&self) -> Option<&Path> {
        self.resolver
            .universe
            .modules
            .get(&self.module)
            .map(|m| m.file.as_path())
    }
}
