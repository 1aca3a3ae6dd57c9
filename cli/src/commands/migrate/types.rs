//! Go API types to Rust: one kubebuilder API package (`api/<version>` or
//! `api/<group>/<version>`) read by the Go parser becomes the items of the kinds' Rust files,
//! through the one writer of Rust API types ([`operator_gen_codegen::rustgen`]).
//!
//! - A kind (`+kubebuilder:object:root=true` on a struct with `metav1.ObjectMeta`) becomes its
//!   spec struct deriving `CustomResource`, with `#[k8s(group, version, kind, status, doc)]`:
//!   the kind's doc and its schema markers go to `doc`, its other markers (resource,
//!   subresources, columns, storage version) to the spec struct's doc; the `spec` and `status`
//!   fields' docs become the spec and status types' descriptions, as controller-gen describes
//!   them. `+kubebuilder:object:root` list types are left to the derive.
//! - Fields: a pointer is an `Option` (required, by `+required`, without `omitempty`), a field
//!   with `omitempty` or `omitzero` a serde default, `json:",inline"` and embedded structs
//!   `#[serde(flatten)]`, `json:"-"` left out.
//! - Named string and integer types become newtypes with the type's markers, or, with
//!   `+kubebuilder:validation:Enum` or `+k8s:enum` and string constants, enums of unit variants.
//! - Kubernetes types by full path through the table of Kubernetes types
//!   ([`operator_gen_codegen::known`]); `metav1.Duration` a string newtype.
//! - Markers the registry does not take are dropped and reported.

use std::collections::{BTreeMap, BTreeSet};

use operator_gen_codegen::known;
use operator_gen_codegen::markers::{self, Effect};
use operator_gen_codegen::rustgen::{
    self, Body, Docs, Enum, Item, KIND_DERIVES, Struct, TYPE_DERIVES, Variant, ident,
};

use super::go::{Comments, ConstDecl, Field, GoFile, GoType, TypeDecl, tag_value};
use super::report::Report;

/// The runtime's path to k8s-openapi, which every generated project reaches.
const K8S: &str = "operator_gen_runtime::k8s_openapi";

/// The helper newtype standing for `metav1.Duration`.
const DURATION: &str = "MetaDuration";

/// One API package: its Go files by path relative to the project.
#[derive(Debug)]
pub struct Package {
    pub dir: String,
    pub files: Vec<(String, GoFile)>,
}

/// What the translation needs to know beyond the package.
pub struct Context<'a> {
    /// The API group of the package's kinds (`crew.my.domain`).
    pub group: String,
    pub version: String,
    /// Other migrated API packages: Go import path → Rust module path (`crate::api::v1`).
    pub packages: &'a BTreeMap<String, String>,
}

/// A kind found in the package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindFacts {
    pub kind: String,
    /// From `+kubebuilder:resource:scope`: `Some(false)` for `Cluster`.
    pub namespaced: Option<bool>,
    /// The Go file it is declared in.
    pub file: String,
}

/// The package translated: the items of each kind's file, by kind.
#[derive(Debug, Default)]
pub struct Translated {
    pub kinds: Vec<KindFacts>,
    pub items: BTreeMap<String, Vec<Item>>,
}

fn strings(s: &[&str]) -> Vec<String> {
    s.iter().map(|s| (*s).to_owned()).collect()
}

/// The per-package state of a translation.
struct Tr<'a> {
    ctx: &'a Context<'a>,
    report: &'a mut Report,
    types: BTreeMap<String, (usize, &'a TypeDecl)>,
    consts: BTreeMap<String, Vec<&'a ConstDecl>>,
    files: &'a [(String, GoFile)],
    /// Fields are optional unless marked required (`+kubebuilder:validation:Optional` on the
    /// package).
    optional_package: bool,
    /// Items made while translating a field (anonymous structs, helpers), emitted after the
    /// current type.
    extra: Vec<Item>,
    helpers: BTreeSet<&'static str>,
    /// The file being read (for imports).
    file: usize,
}

/// Translate `pkg`; `kinds` are the kinds PROJECT records for it (a kind file is made for
/// each, and types of files without a kind go to the first).
pub fn translate(pkg: &Package, ctx: &Context, report: &mut Report) -> Translated {
    let mut tr = Tr {
        ctx,
        report,
        types: BTreeMap::new(),
        consts: BTreeMap::new(),
        files: &pkg.files,
        optional_package: false,
        extra: Vec::new(),
        helpers: BTreeSet::new(),
        file: 0,
    };
    for (i, (_, f)) in pkg.files.iter().enumerate() {
        for t in &f.types {
            tr.types.insert(t.name.clone(), (i, t));
        }
        for c in &f.consts {
            if let Some(GoType::Named { pkg, name }) = &c.ty
                && pkg.is_empty()
            {
                tr.consts.entry(name.clone()).or_default().push(c);
            }
        }
    }
    tr.package_markers(pkg);
    tr.run()
}

impl Tr<'_> {
    fn at(&self, line: usize) -> String {
        let file = self.files.get(self.file).map_or("", |(p, _)| p.as_str());
        format!("{file}:{line}")
    }

    fn package_markers(&mut self, pkg: &Package) {
        for (path, f) in &pkg.files {
            for line in f.package_doc.doc.iter().chain(&f.package_doc.above) {
                let m = line.trim();
                if !m.starts_with('+') {
                    continue;
                }
                if m == "+kubebuilder:validation:Optional" {
                    self.optional_package = true;
                    self.report.add(
                        "markers",
                        format!("{path}: {m}"),
                        "on the package: each field without a required marker or omitempty is translated optional (a serde default)",
                    );
                } else if m.starts_with("+groupName=")
                    || m.starts_with("+versionName=")
                    || m == "+kubebuilder:validation:Required"
                {
                    // the group and version are in #[k8s(...)]; Required is the default
                } else {
                    self.report.add(
                        "markers",
                        format!("{path}: {m}"),
                        "package marker dropped: operator-gen has no package-level form of it",
                    );
                }
            }
        }
    }

    fn is_root(t: &TypeDecl) -> bool {
        t.comments.doc.iter().chain(&t.comments.above).any(|l| {
            matches!(
                l.trim(),
                "+kubebuilder:object:root=true" | "+kubebuilder:object:root"
            )
        })
    }

    fn is_list(t: &TypeDecl) -> bool {
        matches!(&t.ty, GoType::Struct(fields) if fields.iter().any(|f| json_name(f).as_deref() == Some("items")))
    }

    fn run(mut self) -> Translated {
        let mut out = Translated::default();
        // the kinds, and the spec and status types each kind's fields name
        let mut specs = BTreeMap::new();
        let mut statuses = BTreeMap::new();
        for (i, (path, f)) in self.files.iter().enumerate() {
            for t in &f.types {
                if !Self::is_root(t) || Self::is_list(t) {
                    continue;
                }
                let GoType::Struct(fields) = &t.ty else {
                    continue;
                };
                out.kinds.push(KindFacts {
                    kind: t.name.clone(),
                    namespaced: scope(&t.comments),
                    file: path.clone(),
                });
                let _ = i;
                for f in fields {
                    let target = match json_name(f).as_deref() {
                        Some("spec") => &mut specs,
                        Some("status") => &mut statuses,
                        _ => continue,
                    };
                    if let Some(name) = local_name(&f.ty) {
                        target.insert(name, (t.name.clone(), f.doc.clone()));
                    }
                }
            }
        }
        let Some(first) = out.kinds.first().map(|k| k.kind.clone()) else {
            return out;
        };
        for (i, (path, f)) in self.files.iter().enumerate() {
            self.file = i;
            let home = out
                .kinds
                .iter()
                .find(|k| &k.file == path)
                .map_or(first.clone(), |k| k.kind.clone());
            for t in &f.types {
                let items = if Self::is_root(t) && Self::is_list(t) {
                    Vec::new()
                } else if Self::is_root(t) {
                    self.kind(t)
                } else if specs.contains_key(&t.name) {
                    Vec::new() // emitted with its kind
                } else {
                    let described = statuses.get(&t.name).map(|(_, doc)| doc.as_slice());
                    self.type_decl(t, described)
                };
                let list = out.items.entry(home.clone()).or_default();
                list.extend(items);
                list.append(&mut self.extra);
            }
        }
        let helpers = std::mem::take(&mut self.helpers);
        let list = out.items.entry(first).or_default();
        for h in helpers {
            if h == DURATION {
                list.push(Item::Struct(Struct {
                    name: DURATION.into(),
                    doc: Docs::prose("metav1.Duration: a duration as Go writes it (`1h2m3s`)."),
                    derives: strings(TYPE_DERIVES),
                    body: Body::Tuple(vec!["String".into()]),
                    ..Default::default()
                }));
            }
        }
        out
    }

    /// The docs of a declaration or field: prose lines and the marker lines the registry
    /// takes; others dropped and reported. `above` lines only give markers.
    fn docs(&mut self, line: usize, doc: &[String], above: &[String]) -> Docs {
        let mut out = Docs::default();
        for (l, is_doc) in above
            .iter()
            .map(|l| (l, false))
            .chain(doc.iter().map(|l| (l, true)))
        {
            let text = l.strip_prefix(' ').unwrap_or(l);
            let trimmed = text.trim();
            if !trimmed.starts_with('+') {
                if is_doc {
                    out.prose.push(text.to_owned());
                }
                continue;
            }
            match markers::parse_line(trimmed) {
                Ok(Some(_)) => out.markers.push(trimmed.to_owned()),
                Ok(None) => {}
                Err(e) => {
                    let known = matches!(
                        trimmed,
                        "+kubebuilder:object:root=true" | "+kubebuilder:object:root"
                    );
                    if !known {
                        let at = self.at(line);
                        self.report
                            .add("markers", format!("{at}: {trimmed}"), e.message);
                    }
                }
            }
        }
        while out.prose.last().is_some_and(|l| l.trim().is_empty()) {
            out.prose.pop();
        }
        out
    }

    fn kind(&mut self, t: &TypeDecl) -> Vec<Item> {
        let GoType::Struct(fields) = &t.ty else {
            return Vec::new();
        };
        let kind_docs = self.docs(t.line, &t.comments.doc, &t.comments.above);
        // the root's doc: prose and schema markers; the kind's other markers on the spec
        let (mut root_markers, mut spec_markers) = (Vec::new(), Vec::new());
        for m in kind_docs.markers {
            let schema = markers::parse_line(&m)
                .ok()
                .flatten()
                .is_some_and(|mk| matches!(mk.def().effect, Effect::Schema(_)));
            if schema {
                root_markers.push(m);
            } else {
                spec_markers.push(m);
            }
        }
        let mut root_doc = kind_docs.prose.join("\n");
        if !root_markers.is_empty() {
            root_doc = format!("{root_doc}\n{}", root_markers.join("\n"));
        }
        let mut attrs = vec![
            format!("group = {}", rustgen::str_lit(&self.ctx.group)),
            format!("version = {}", rustgen::str_lit(&self.ctx.version)),
            format!("kind = {}", rustgen::str_lit(&t.name)),
        ];
        let spec = fields
            .iter()
            .find(|f| json_name(f).as_deref() == Some("spec"));
        let status = fields
            .iter()
            .find(|f| json_name(f).as_deref() == Some("status"));
        if let Some(status) = status {
            match local_name(&status.ty) {
                Some(name) => attrs.push(format!("status = {}", rustgen::str_lit(&name))),
                None => self.report.add(
                    "types",
                    self.at(status.line),
                    format!(
                        "{}'s status is not a type of this package: left out",
                        t.name
                    ),
                ),
            }
        }
        attrs.push(format!("doc = {}", rustgen::str_lit(&root_doc)));
        for f in fields {
            self.kind_field_markers(t, f, &mut attrs);
        }
        let mut items = Vec::new();
        let spec_struct = match spec.and_then(|s| local_name(&s.ty).map(|n| (s, n))) {
            Some((field, name)) => {
                let Some((i, decl)) = self.types.get(&name).copied() else {
                    self.report.add(
                        "types",
                        self.at(field.line),
                        format!("{name} is not declared in this package"),
                    );
                    return Vec::new();
                };
                let outer = self.file;
                self.file = i;
                let mut st = self.struct_item(decl, Some(&field.doc));
                self.file = outer;
                st.doc.markers.extend(spec_markers);
                st
            }
            None => {
                attrs.push("no_spec".into());
                let own: Vec<Field> = fields
                    .iter()
                    .filter(|f| {
                        !matches!(json_name(f).as_deref(), Some("status" | "metadata"))
                            && !is_type_meta(f)
                    })
                    .cloned()
                    .collect();
                let decl = TypeDecl {
                    name: format!("{}Spec", t.name),
                    ty: GoType::Struct(own),
                    alias: false,
                    comments: Comments::default(),
                    line: t.line,
                };
                let mut st = self.struct_item(&decl, None);
                st.doc.markers.extend(spec_markers);
                st
            }
        };
        let mut st = spec_struct;
        st.derives = strings(KIND_DERIVES);
        st.attrs = vec![format!("k8s(\n    {}\n)", attrs.join(",\n    "))];
        items.push(Item::Struct(st));
        items
    }

    /// The `#[k8s(...)]` keys the kind's own fields ask for: an optional spec, a required
    /// metadata; other markers on them are reported.
    fn kind_field_markers(&mut self, t: &TypeDecl, f: &Field, attrs: &mut Vec<String>) {
        let name = json_name(f);
        let marks: Vec<&str> = f
            .doc
            .iter()
            .map(|l| l.trim())
            .filter(|l| l.starts_with('+'))
            .collect();
        let required = marks.iter().any(|m| is_required_marker(m));
        let optional =
            marks.iter().any(|m| is_optional_marker(m)) || (self.optional_package && !required);
        // as controller-gen decides: a marker, else omitempty or the package's default
        let is_required = required || (!optional && !omits(f));
        match name.as_deref() {
            Some("spec") if !is_required => attrs.push("optional_spec".into()),
            Some("metadata") if is_required => attrs.push("required_metadata".into()),
            _ => {}
        }
        for m in marks {
            // the spec's and status's markers go to their types (see `struct_item`)
            if is_required_marker(m)
                || is_optional_marker(m)
                || matches!(name.as_deref(), Some("spec" | "status"))
            {
                continue;
            }
            let at = self.at(f.line);
            self.report.add(
                "markers",
                format!("{at}: {m}"),
                format!(
                    "on {}'s {} field: operator-gen has no place for it on the root object",
                    t.name,
                    name.as_deref().unwrap_or("embedded")
                ),
            );
        }
    }

    /// A declared type (not a kind) as its items.
    fn type_decl(&mut self, t: &TypeDecl, described: Option<&[String]>) -> Vec<Item> {
        let item = match &t.ty {
            GoType::Struct(_) => Some(Item::Struct(self.struct_item(t, described))),
            GoType::Interface | GoType::Other(_) => {
                self.report.add(
                    "types",
                    self.at(t.line),
                    format!(
                        "type {} is an interface or function type: not translated",
                        t.name
                    ),
                );
                None
            }
            _ => Some(self.named_item(t)),
        };
        item.into_iter().collect()
    }

    /// A struct; `described` replaces its description (a kind's spec or status field's doc,
    /// which controller-gen describes the field with) when it has prose.
    fn struct_item(&mut self, t: &TypeDecl, described: Option<&[String]>) -> Struct {
        let GoType::Struct(fields) = &t.ty else {
            return Struct::default();
        };
        let mut doc = self.docs(t.line, &t.comments.doc, &t.comments.above);
        if let Some(field_doc) = described {
            let field_docs = self.docs(t.line, field_doc, &[]);
            if !field_docs.prose.is_empty() {
                if doc.prose != field_docs.prose && !doc.prose.is_empty() {
                    self.report.add(
                        "types",
                        self.at(t.line),
                        format!("{}'s doc is replaced by the kind's field doc, which controller-gen describes the field with", t.name),
                    );
                }
                doc.prose = field_docs.prose;
            }
            // the kind's field's markers (a default of the whole status, say) stand on the
            // type, which only that field uses
            doc.markers.extend(
                field_docs
                    .markers
                    .into_iter()
                    .filter(|m| !is_required_marker(m) && !is_optional_marker(m)),
            );
        }
        let mut body = Vec::new();
        for f in fields {
            if let Some(field) = self.field(&t.name, f) {
                body.push(field);
            }
        }
        Struct {
            name: t.name.clone(),
            doc,
            derives: strings(TYPE_DERIVES),
            attrs: Vec::new(),
            serde: vec!["rename_all = \"camelCase\"".into()],
            body: Body::Named(body),
        }
    }
}

/// The JSON name of a field: its tag's name, the Go name without one, `None` for an inlined
/// embedded field or `json:"-"`.
pub fn json_name(f: &Field) -> Option<String> {
    let tag = tag_value(&f.tag, "json");
    let name = tag
        .as_deref()
        .map(|t| t.split(',').next().unwrap_or_default());
    match name {
        Some("-") => None,
        Some("") | None if f.name.is_empty() => None,
        Some("") | None => Some(f.name.clone()),
        Some(n) => Some(n.to_owned()),
    }
}

/// The field's tag says `omitempty` or `omitzero`.
fn omits(f: &Field) -> bool {
    tag_value(&f.tag, "json").is_some_and(|t| {
        t.split(',')
            .skip(1)
            .any(|o| o == "omitempty" || o == "omitzero")
    })
}

fn is_required_marker(m: &str) -> bool {
    matches!(
        m,
        "+required" | "+kubebuilder:validation:Required" | "+k8s:required"
    )
}

fn is_optional_marker(m: &str) -> bool {
    matches!(
        m,
        "+optional" | "+kubebuilder:validation:Optional" | "+k8s:optional"
    )
}

fn is_type_meta(f: &Field) -> bool {
    f.name.is_empty() && matches!(&f.ty, GoType::Named { name, .. } if name == "TypeMeta")
}

/// The name of a type of this package the expression names (through a pointer).
fn local_name(ty: &GoType) -> Option<String> {
    match ty {
        GoType::Named { pkg, name } if pkg.is_empty() => Some(name.clone()),
        GoType::Pointer(inner) => local_name(inner),
        _ => None,
    }
}

/// `+kubebuilder:resource:scope=...` on a kind.
fn scope(c: &Comments) -> Option<bool> {
    c.doc.iter().chain(&c.above).find_map(|l| {
        let m = markers::parse_line(l.trim()).ok().flatten()?;
        if m.name() != "kubebuilder:resource" {
            return None;
        }
        m.arg_str("scope").map(|s| s != "Cluster")
    })
}

mod fields;
