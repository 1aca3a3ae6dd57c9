//! Fields, field types and named types of the Go to Rust translation.

use super::*;

/// Go's predeclared types and their Rust types.
const PREDECLARED: &[(&str, &str)] = &[
    ("string", "String"),
    ("bool", "bool"),
    ("int8", "i8"),
    ("int16", "i16"),
    ("int32", "i32"),
    ("int64", "i64"),
    ("int", "isize"),
    ("uint8", "u8"),
    ("byte", "u8"),
    ("uint16", "u16"),
    ("uint32", "u32"),
    ("uint64", "u64"),
    ("uint", "usize"),
    ("float32", "f32"),
    ("float64", "f64"),
    ("rune", "i32"),
];

/// Named string types of Kubernetes packages, which the table of Kubernetes types (of structs)
/// does not hold: by Go package, the type names.
const KUBERNETES_STRINGS: &[(&str, &[&str])] = &[
    (
        "k8s.io/api/core/v1",
        &[
            "Capability",
            "ConditionStatus",
            "DNSPolicy",
            "IPFamily",
            "IPFamilyPolicy",
            "MountPropagationMode",
            "NamespacePhase",
            "NodeInclusionPolicy",
            "NodeSelectorOperator",
            "OSName",
            "PersistentVolumeAccessMode",
            "PersistentVolumeMode",
            "PersistentVolumeReclaimPolicy",
            "PodPhase",
            "PreemptionPolicy",
            "Protocol",
            "PullPolicy",
            "ResourceName",
            "RestartPolicy",
            "SecretType",
            "ServiceAffinity",
            "ServiceExternalTrafficPolicy",
            "ServiceInternalTrafficPolicy",
            "ServiceType",
            "TaintEffect",
            "TerminationMessagePolicy",
            "TolerationOperator",
            "URIScheme",
            "UnsatisfiableConstraintAction",
        ],
    ),
    (
        "k8s.io/apimachinery/pkg/apis/meta/v1",
        &[
            "ConditionStatus",
            "DeletionPropagation",
            "LabelSelectorOperator",
            "StatusReason",
        ],
    ),
];

/// The Rust type standing for a value Go's type cannot be translated to.
const ANY: &str = "operator_gen_runtime::serde_json::Value";

impl Tr<'_> {
    /// A field of struct `owner`; `None` for `json:"-"`.
    pub(super) fn field(&mut self, owner: &str, f: &Field) -> Option<rustgen::Field> {
        let tag = tag_value(&f.tag, "json");
        if tag
            .as_deref()
            .is_some_and(|t| t.split(',').next() == Some("-"))
        {
            self.report.add(
                "types",
                self.at(f.line),
                format!("{owner}.{} has json:\"-\": left out", f.name),
            );
            return None;
        }
        let mut doc = self.docs(f.line, &f.doc, &[]);
        let Some(json) = json_name(f) else {
            // embedded and inlined: serde's flatten
            let inner = match &f.ty {
                GoType::Pointer(t) => t.as_ref(),
                t => t,
            };
            let type_name = match inner {
                GoType::Named { name, .. } => name.clone(),
                _ => "inline".into(),
            };
            return Some(rustgen::Field {
                ident: ident::snake_ident(&type_name),
                ty: self.rust_type(owner, &type_name, inner, f.line),
                doc,
                attrs: Vec::new(),
                serde: vec!["flatten".into()],
            });
        };
        let name = ident::field_name(&json, true);
        let mut serde = Vec::new();
        if let Some(r) = &name.rename {
            serde.push(format!("rename = {}", rustgen::str_lit(r)));
        }
        let marks: Vec<&str> = doc.markers.iter().map(String::as_str).collect();
        let required = marks.iter().any(|m| is_required_marker(m));
        let optional =
            marks.iter().any(|m| is_optional_marker(m)) || (self.optional_package && !required);
        let (ty, extra) = match &f.ty {
            GoType::Pointer(inner) => {
                let inner = self.rust_type(owner, &f.name, inner, f.line);
                if omits(f) {
                    serde.push("default".into());
                    serde.push("skip_serializing_if = \"Option::is_none\"".into());
                } else if !optional && !required {
                    // a pointer without omitempty is required in Go's schema
                    doc.markers.push("+required".into());
                }
                (format!("Option<{inner}>"), None)
            }
            other => {
                let ty = self.rust_type(owner, &f.name, other, f.line);
                let skip = if ty.starts_with("Vec<") {
                    Some("Vec::is_empty")
                } else if ty.starts_with("BTreeMap<") {
                    Some("BTreeMap::is_empty")
                } else if ty == "String" {
                    Some("String::is_empty")
                } else {
                    None
                };
                (ty, (omits(f) || optional).then_some(skip))
            }
        };
        if let Some(skip) = extra {
            serde.push("default".into());
            if let Some(skip) = skip.filter(|_| omits(f)) {
                serde.push(format!("skip_serializing_if = \"{skip}\""));
            }
        }
        Some(rustgen::Field {
            ident: name.ident,
            ty,
            doc,
            attrs: Vec::new(),
            serde,
        })
    }

    /// The Rust type of a Go type expression (a pointer is its pointee: the caller decides
    /// about `Option`).
    pub(super) fn rust_type(
        &mut self,
        owner: &str,
        field: &str,
        ty: &GoType,
        line: usize,
    ) -> String {
        match ty {
            GoType::Named { pkg, name } if pkg.is_empty() => {
                if let Some((_, r)) = PREDECLARED.iter().find(|(g, _)| g == name) {
                    return (*r).to_owned();
                }
                if self.types.contains_key(name) {
                    return name.clone();
                }
                self.untranslated(
                    line,
                    format!("{owner}.{field}: type {name} is not declared in this package"),
                )
            }
            GoType::Named { pkg, name } => {
                let path = self
                    .files
                    .get(self.file)
                    .and_then(|(_, f)| f.imports.iter().find(|(n, _)| n == pkg))
                    .map(|(_, p)| p.clone());
                match path {
                    Some(path) => self.imported(owner, field, &path, name, line),
                    None => self.untranslated(
                        line,
                        format!("{owner}.{field}: package {pkg} is not imported"),
                    ),
                }
            }
            GoType::Pointer(inner) => self.rust_type(owner, field, inner, line),
            GoType::Slice(inner) if matches!(inner.as_ref(), GoType::Named { pkg, name } if pkg.is_empty() && (name == "byte" || name == "uint8")) =>
            {
                format!("{K8S}::ByteString")
            }
            GoType::Slice(inner) => format!("Vec<{}>", self.rust_type(owner, field, inner, line)),
            GoType::Array(len, inner) => {
                self.report.add(
                    "types",
                    self.at(line),
                    format!("{owner}.{field}: the array [{len}] became a Vec; add +kubebuilder:validation:MaxItems if its length matters"),
                );
                format!("Vec<{}>", self.rust_type(owner, field, inner, line))
            }
            GoType::Map(k, v) => {
                let key = self.rust_type(owner, field, k, line);
                if key != "String" && !self.is_string_type(k) {
                    self.report.add(
                        "types",
                        self.at(line),
                        format!("{owner}.{field}: map key {key} written as String"),
                    );
                }
                format!(
                    "BTreeMap<String, {}>",
                    self.rust_type(owner, field, v, line)
                )
            }
            GoType::Struct(fields) => {
                let name = format!("{owner}{}", ident::type_ident(field));
                self.report.add(
                    "types",
                    self.at(line),
                    format!("{owner}.{field}: its anonymous struct became the type {name}"),
                );
                let decl = TypeDecl {
                    name: name.clone(),
                    ty: GoType::Struct(fields.clone()),
                    alias: false,
                    comments: Comments::default(),
                    line,
                };
                let st = self.struct_item(&decl, None);
                self.extra.push(Item::Struct(st));
                name
            }
            GoType::Interface => self.untranslated(
                line,
                format!("{owner}.{field}: an interface holds any value"),
            ),
            GoType::Other(text) => {
                self.untranslated(line, format!("{owner}.{field}: {text} has no JSON form"))
            }
        }
    }

    fn is_string_type(&self, ty: &GoType) -> bool {
        match ty {
            GoType::Named { pkg, name } if pkg.is_empty() => {
                name == "string"
                    || self
                        .types
                        .get(name)
                        .is_some_and(|(_, t)| self.is_string_type(&t.ty))
            }
            _ => false,
        }
    }

    /// A type that has no translation: reported, written as any JSON value.
    fn untranslated(&mut self, line: usize, what: String) -> String {
        self.report.add(
            "types",
            self.at(line),
            format!("{what}: written as serde_json::Value; give it a type"),
        );
        ANY.to_owned()
    }

    /// A type of another package.
    fn imported(
        &mut self,
        owner: &str,
        field: &str,
        path: &str,
        name: &str,
        line: usize,
    ) -> String {
        match (path, name) {
            ("k8s.io/apimachinery/pkg/apis/meta/v1", "Duration") => {
                self.helpers.insert(DURATION);
                return DURATION.to_owned();
            }
            ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "JSON") => {
                return ANY.to_owned();
            }
            ("time", "Duration") => {
                self.report.add(
                    "types",
                    self.at(line),
                    format!(
                        "{owner}.{field}: time.Duration became i64 (nanoseconds), as Go writes it"
                    ),
                );
                return "i64".to_owned();
            }
            _ => {}
        }
        if KUBERNETES_STRINGS
            .iter()
            .any(|(p, names)| *p == path && names.contains(&name))
        {
            self.report.add(
                "types",
                self.at(line),
                format!("{owner}.{field}: {path}.{name} is a string type: written String (a field without a doc of its own does not take the type's doc as its description)"),
            );
            return "String".to_owned();
        }
        if let Some(module) = self.ctx.packages.get(path) {
            return format!("{module}::{name}");
        }
        if let Some(rest) = path.strip_prefix("k8s.io/") {
            let module = rest.replace('-', "_").replace('/', "::");
            let full = format!("k8s_openapi::{module}::{name}");
            if matches!(known::external(&full), known::External::Known(_)) {
                return format!("{K8S}::{module}::{name}");
            }
        }
        self.untranslated(line, format!("{owner}.{field}: {path}.{name} is not a Kubernetes type operator-gen knows nor a migrated API package"))
    }

    /// A named non-struct type: an enum of unit variants when it has enum values, else a
    /// newtype carrying its markers.
    pub(super) fn named_item(&mut self, t: &TypeDecl) -> Item {
        let mut doc = self.docs(t.line, &t.comments.doc, &t.comments.above);
        if t.alias {
            self.report.add(
                "types",
                self.at(t.line),
                format!("type alias {} became a newtype", t.name),
            );
        }
        if let Some(values) = self.enum_values(t, &doc) {
            doc.markers
                .retain(|m| !m.starts_with("+kubebuilder:validation:Enum"));
            return Item::Enum(self.enum_item(t, doc, &values));
        }
        let inner = self.rust_type(&t.name, "", &t.ty, t.line);
        Item::Struct(Struct {
            name: t.name.clone(),
            doc,
            derives: strings(TYPE_DERIVES),
            attrs: Vec::new(),
            serde: Vec::new(),
            body: Body::Tuple(vec![inner]),
        })
    }

    /// The string values of an enum type: those of its `Enum` marker, or its string constants
    /// with `+k8s:enum`.
    fn enum_values(&self, t: &TypeDecl, doc: &Docs) -> Option<Vec<String>> {
        if !self.is_string_type(&t.ty) {
            return None;
        }
        for m in &doc.markers {
            if !m.starts_with("+kubebuilder:validation:Enum") {
                continue;
            }
            let marker = markers::parse_line(m).ok().flatten()?;
            let values = marker.value.as_array()?;
            return values
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .filter(|v| !v.is_empty());
        }
        if doc.markers.iter().any(|m| m == "+k8s:enum") {
            let values: Vec<String> = self
                .consts
                .get(&t.name)?
                .iter()
                .filter_map(|c| c.value.clone())
                .collect();
            return (!values.is_empty()).then_some(values);
        }
        None
    }

    fn enum_item(&mut self, t: &TypeDecl, doc: Docs, values: &[String]) -> Enum {
        let consts = self.consts.get(&t.name).cloned().unwrap_or_default();
        let mut seen = BTreeSet::new();
        let mut variants = Vec::new();
        for (i, value) in values.iter().enumerate() {
            let c = consts
                .iter()
                .find(|c| c.value.as_deref() == Some(value.as_str()));
            let base = c
                .map(|c| {
                    let n = c.name.strip_prefix(&t.name).unwrap_or(&c.name);
                    let n = n.strip_suffix(&t.name).unwrap_or(n);
                    if n.starts_with(|ch: char| ch.is_ascii_uppercase()) {
                        n.to_owned()
                    } else {
                        c.name.clone()
                    }
                })
                .unwrap_or_else(|| ident::type_ident(value));
            let mut name = if base.is_empty() {
                format!("V{i}")
            } else {
                base
            };
            while !seen.insert(name.clone()) {
                name.push('_');
            }
            let vdoc = c
                .map(|c| self.docs(c.line, &c.doc, &[]))
                .unwrap_or_default();
            variants.push(Variant {
                serde: if &name == value {
                    Vec::new()
                } else {
                    vec![format!("rename = {}", rustgen::str_lit(value))]
                },
                name,
                doc: Docs {
                    prose: vdoc.prose,
                    markers: Vec::new(),
                },
                attrs: if i == 0 {
                    vec!["default".into()]
                } else {
                    Vec::new()
                },
                body: Body::Unit,
            });
        }
        if !consts.is_empty() {
            self.report.add(
                "types",
                self.at(t.line),
                format!(
                    "the constants of {} became the variants of enum {}",
                    t.name, t.name
                ),
            );
        }
        Enum {
            name: t.name.clone(),
            doc,
            derives: strings(&[
                "Schema",
                "Serialize",
                "Deserialize",
                "Clone",
                "Copy",
                "Debug",
                "Default",
                "PartialEq",
                "Eq",
            ]),
            attrs: Vec::new(),
            serde: Vec::new(),
            variants,
        }
    }
}
