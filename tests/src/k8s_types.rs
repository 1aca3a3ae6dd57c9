//! The table of Kubernetes types (`codegen/src/known/k8s.json`): built from the OpenAPI v3
//! documents a real kube-apiserver serves at `/openapi/v3` (structure: properties, required,
//! formats, list and map types, references, kinds) and the Go sources of the same release in the
//! Go module cache (doc comments and the markers controller-gen reads), transformed the way
//! controller-gen turns those Go types into CRD schemas.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The Go modules whose packages the OpenAPI definitions name, by definition-name prefix.
const MODULES: &[(&str, &str, &str)] = &[
    // (definition prefix, Go import path prefix, module)
    ("io.k8s.api.", "k8s.io/api/", "k8s.io/api"),
    (
        "io.k8s.apimachinery.pkg.",
        "k8s.io/apimachinery/pkg/",
        "k8s.io/apimachinery",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.",
        "k8s.io/apiextensions-apiserver/pkg/",
        "k8s.io/apiextensions-apiserver",
    ),
    (
        "io.k8s.kube-aggregator.pkg.",
        "k8s.io/kube-aggregator/pkg/",
        "k8s.io/kube-aggregator",
    ),
];

/// controller-gen's fixed schemas for types whose JSON form is not their Go shape; they carry no
/// description (controller-gen's overrides have none).
fn override_schema(definition: &str) -> Option<Value> {
    let int_or_string = json!({
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": true,
    });
    Some(match definition {
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" => json!({"type": "object"}),
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
        | "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => {
            json!({"type": "string", "format": "date-time"})
        }
        "io.k8s.apimachinery.pkg.apis.meta.v1.Duration" => json!({"type": "string"}),
        "io.k8s.apimachinery.pkg.apis.meta.v1.Fields" => {
            json!({"type": "object", "additionalProperties": true})
        }
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => {
            let mut q = int_or_string;
            q["pattern"] = Value::String(QUANTITY_PATTERN.into());
            q
        }
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => int_or_string,
        "io.k8s.apimachinery.pkg.runtime.RawExtension" => {
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
        }
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON" => {
            json!({"x-kubernetes-preserve-unknown-fields": true})
        }
        _ => return None,
    })
}

const QUANTITY_PATTERN: &str = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

/// The Rust path of a definition under `k8s_openapi::` (`api::core::v1::Container`), as
/// k8s-openapi names its modules.
pub fn rust_path(definition: &str) -> Option<String> {
    let (prefix, rest) = [
        ("io.k8s.api.", "api"),
        ("io.k8s.apimachinery.", "apimachinery"),
        ("io.k8s.apiextensions-apiserver.", "apiextensions_apiserver"),
        ("io.k8s.kube-aggregator.", "kube_aggregator"),
    ]
    .iter()
    .find_map(|(p, r)| definition.strip_prefix(p).map(|rest| (*r, rest)))?;
    let parts: Vec<String> = rest.split('.').map(|s| s.replace('-', "_")).collect();
    Some(format!("{prefix}::{}", parts.join("::")))
}

// ---------------------------------------------------------------------------------------------
// Go sources

/// One Go struct field: its JSON name, doc lines, markers and type as written.
#[derive(Debug, Clone)]
struct GoField {
    json: Option<String>,
    inline: bool,
    omitempty: bool,
    doc: Vec<String>,
    markers: Vec<String>,
    ty: String,
}

#[derive(Debug, Clone, Default)]
struct GoType {
    doc: Vec<String>,
    markers: Vec<String>,
    /// `None` for a non-struct type; then `underlying` is its type expression.
    fields: Option<Vec<GoField>>,
    underlying: String,
}

#[derive(Debug, Default)]
struct GoPackage {
    types: BTreeMap<String, GoType>,
    /// import alias → import path.
    imports: BTreeMap<String, String>,
    /// string constants: (type name, value), in declaration order.
    consts: Vec<(String, String)>,
}

/// The Go packages of one Kubernetes release in a Go module cache.
pub struct GoSources {
    mod_cache: PathBuf,
    /// Go module version, e.g. `v0.37.2`.
    version: String,
    packages: std::cell::RefCell<BTreeMap<String, std::rc::Rc<GoPackage>>>,
}

impl GoSources {
    /// `mod_cache` is a `GOMODCACHE`; `kubernetes` the release (`1.37.2`), whose staging modules
    /// are versioned `v0.37.2`.
    pub fn new(mod_cache: &Path, kubernetes: &str) -> GoSources {
        let version = format!("v0.{}", kubernetes.split_once('.').map_or("", |(_, r)| r));
        GoSources {
            mod_cache: mod_cache.to_path_buf(),
            version,
            packages: Default::default(),
        }
    }

    fn package(&self, import: &str) -> Result<std::rc::Rc<GoPackage>, String> {
        if let Some(p) = self.packages.borrow().get(import) {
            return Ok(p.clone());
        }
        let (_, _, module) = MODULES
            .iter()
            .find(|(_, p, _)| import.starts_with(p))
            .ok_or_else(|| format!("no module holds Go package {import}"))?;
        let dir = self
            .mod_cache
            .join(format!("{module}@{}", self.version))
            .join(&import[module.len() + 1..]);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("cannot read Go package {}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                name.ends_with(".go")
                    && !name.ends_with("_test.go")
                    && !name.starts_with("zz_generated")
                    && !name.starts_with("generated.")
            })
            .collect();
        files.sort();
        let mut package = GoPackage::default();
        for file in files {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            parse_go_file(&text, &mut package);
        }
        let package = std::rc::Rc::new(package);
        self.packages
            .borrow_mut()
            .insert(import.to_string(), package.clone());
        Ok(package)
    }

    /// The fields of a struct type, following `type X pkg.Y` and `type X = pkg.Y` to the struct;
    /// with the package the fields are declared in.
    #[allow(clippy::type_complexity)]
    fn struct_fields(
        &self,
        import: &str,
        name: &str,
    ) -> Result<Option<(String, std::rc::Rc<GoPackage>, Vec<GoField>)>, String> {
        let (mut import, mut name) = (import.to_string(), name.to_string());
        for _ in 0..8 {
            let package = self.package(&import)?;
            let Some(t) = package.types.get(&name) else {
                return Ok(None);
            };
            if let Some(f) = &t.fields {
                return Ok(Some((import, package.clone(), f.clone())));
            }
            let under = t.underlying.trim_start_matches('*');
            match under.split_once('.') {
                Some((alias, n)) => match package.imports.get(alias) {
                    Some(p) if MODULES.iter().any(|(_, m, _)| p.starts_with(m)) => {
                        import = p.clone();
                        name = n.to_string();
                    }
                    _ => return Ok(None),
                },
                None if package.types.contains_key(under) => name = under.to_string(),
                None => return Ok(None),
            }
        }
        Ok(None)
    }

    /// The `+structType`/`+mapType` markers of the types a struct embeds inline, recursively.
    fn embedded_markers(
        &self,
        import: &str,
        name: &str,
        depth: usize,
    ) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        if depth > 8 {
            return Ok(out);
        }
        let Some((import, package, fields)) = self.struct_fields(import, name)? else {
            return Ok(out);
        };
        for f in fields.iter().filter(|f| f.inline) {
            let ty = f.ty.trim_start_matches('*');
            let (imp, n) = match ty.split_once('.') {
                Some((alias, n)) => match package.imports.get(alias) {
                    Some(p) => (p.clone(), n.to_string()),
                    None => continue,
                },
                None => (import.clone(), ty.to_string()),
            };
            if !MODULES.iter().any(|(_, p, _)| imp.starts_with(p)) {
                continue;
            }
            if let Some(t) = self.package(&imp)?.types.get(&n) {
                out.extend(
                    t.markers
                        .iter()
                        .filter(|m| m.starts_with("structType=") || m.starts_with("mapType="))
                        .cloned(),
                );
            }
            out.extend(self.embedded_markers(&imp, &n, depth + 1)?);
        }
        Ok(out)
    }

    /// The Go package and type name of an OpenAPI definition.
    fn go_name(definition: &str) -> Option<(String, String)> {
        let (def_prefix, import_prefix, _) =
            MODULES.iter().find(|(p, _, _)| definition.starts_with(p))?;
        let rest = &definition[def_prefix.len()..];
        let (pkg, name) = rest.rsplit_once('.')?;
        Some((
            format!("{import_prefix}{}", pkg.replace('.', "/")),
            name.to_string(),
        ))
    }
}

/// Parses the declarations of a gofmt'ed Go file that matter here: imports, type declarations
/// with their doc comments, struct fields with doc comments and json tags.
fn parse_go_file(text: &str, package: &mut GoPackage) {
    let lines: Vec<&str> = text.lines().collect();
    let mut comments: Vec<&str> = Vec::new();
    let mut i = 0;
    let mut in_import_block = false;
    let mut in_type_block = false;
    let mut in_const_block = false;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        i += 1;
        if in_import_block {
            if trimmed == ")" {
                in_import_block = false;
            } else {
                add_import(trimmed, package);
            }
            continue;
        }
        if let Some(c) = comment_text(line) {
            comments.push(c);
            continue;
        }
        let doc = std::mem::take(&mut comments);
        if trimmed.is_empty() {
            continue;
        }
        if trimmed == "import (" {
            in_import_block = true;
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("import ") {
            add_import(rest, package);
            continue;
        }
        if trimmed == "const (" {
            in_const_block = true;
            continue;
        }
        if in_const_block {
            if trimmed == ")" {
                in_const_block = false;
            } else {
                add_const(trimmed, package);
            }
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("const ") {
            add_const(rest, package);
            continue;
        }
        if trimmed == "type (" {
            in_type_block = true;
            continue;
        }
        if in_type_block && trimmed == ")" {
            in_type_block = false;
            continue;
        }
        let decl = if let Some(rest) = line.strip_prefix("type ") {
            rest
        } else if in_type_block && line.starts_with('\t') && !line.starts_with("\t\t") {
            &line[1..]
        } else {
            continue;
        };
        let mut words = decl.splitn(2, ' ');
        let (Some(name), Some(rest)) = (words.next(), words.next()) else {
            continue;
        };
        if name.contains('[') {
            continue; // generic type
        }
        let rest = rest.trim().trim_start_matches("= ");
        let (doc, markers) = split_doc(&doc);
        if rest == "struct {" {
            let mut fields = Vec::new();
            let mut field_comments: Vec<&str> = Vec::new();
            let mut depth = 0usize;
            while i < lines.len() {
                let l = lines[i];
                i += 1;
                let t = l.trim();
                if depth == 0 && t == "}" {
                    break;
                }
                if let Some(c) = comment_text(l) {
                    if depth == 0 {
                        field_comments.push(c);
                    }
                    continue;
                }
                let fdoc = std::mem::take(&mut field_comments);
                if t.ends_with('{') {
                    depth += 1;
                }
                if t.starts_with('}') && depth > 0 {
                    depth -= 1;
                    continue;
                }
                if depth > 0 || t.is_empty() {
                    continue;
                }
                if let Some(f) = parse_field(t, &fdoc) {
                    fields.push(f);
                }
            }
            package.types.insert(
                name.to_string(),
                GoType {
                    doc,
                    markers,
                    fields: Some(fields),
                    underlying: String::new(),
                },
            );
        } else {
            let underlying = rest.split("//").next().unwrap_or_default().trim();
            package.types.insert(
                name.to_string(),
                GoType {
                    doc,
                    markers,
                    fields: None,
                    underlying: underlying.to_string(),
                },
            );
        }
    }
}

/// A typed string constant, `Name Type = "value"`; other constants are not enum values.
fn add_const(spec: &str, package: &mut GoPackage) {
    let spec = spec.split("//").next().unwrap_or_default().trim();
    let Some((names, value)) = spec.split_once('=') else {
        return;
    };
    let mut words = names.split_whitespace();
    let (Some(_), Some(ty), None) = (words.next(), words.next(), words.next()) else {
        return;
    };
    let value = value.trim();
    let text = if let Some(v) = value.strip_prefix('`').and_then(|v| v.strip_suffix('`')) {
        v.to_string()
    } else if value.starts_with('"') {
        match serde_json::from_str::<String>(value) {
            Ok(v) => v,
            Err(_) => return,
        }
    } else {
        return;
    };
    package.consts.push((ty.to_string(), text));
}

fn add_import(spec: &str, package: &mut GoPackage) {
    let spec = spec.split("//").next().unwrap_or_default().trim();
    if spec.is_empty() {
        return;
    }
    let (alias, path) = match spec.split_once(' ') {
        Some((a, p)) => (Some(a.trim()), p.trim()),
        None => (None, spec),
    };
    let path = path.trim_matches('"');
    let alias = alias
        .map(str::to_string)
        .unwrap_or_else(|| path.rsplit('/').next().unwrap_or(path).to_string());
    package.imports.insert(alias, path.to_string());
}

/// The text of a `//` comment line as Go's `CommentGroup.Text` keeps it (one leading space
/// dropped), or `None` for other lines.
fn comment_text(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let c = t.strip_prefix("//")?;
    Some(c)
}

/// Splits a comment group into doc lines and marker lines, as controller-gen does: a marker is a
/// comment whose text starts with `+`; Go directives (`//go:x`, `//nolint:x`) are not docs.
fn split_doc(group: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut doc = Vec::new();
    let mut markers = Vec::new();
    for c in group {
        if c.trim().starts_with('+') {
            markers.push(c.trim()[1..].to_string());
            continue;
        }
        if is_directive(c) {
            continue;
        }
        let c = c.strip_prefix(' ').unwrap_or(c);
        doc.push(c.trim_end().to_string());
    }
    (doc, markers)
}

/// `//go:generate`, `//nolint:x`: a lower-case word and a colon right after the slashes.
fn is_directive(c: &str) -> bool {
    let Some((word, _)) = c.split_once(':') else {
        return false;
    };
    !word.is_empty()
        && word
            .chars()
            .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit())
}

fn parse_field(line: &str, comments: &[&str]) -> Option<GoField> {
    let (decl, tag) = match line.find('`') {
        Some(p) => (&line[..p], &line[p..]),
        None => (line, ""),
    };
    let decl = decl.split("//").next().unwrap_or_default().trim();
    let json_tag = tag
        .split("json:\"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .map(str::to_string);
    let mut words = decl.split_whitespace();
    let first = words.next()?;
    let rest: Vec<&str> = words.collect();
    let (name, ty) = if rest.is_empty() {
        (None, first.to_string())
    } else {
        (Some(first), rest.join(" "))
    };
    let (doc, markers) = split_doc(comments);
    let (json, inline) = match &json_tag {
        Some(t) => {
            let name_part = t.split(',').next().unwrap_or_default();
            let inline = t.split(',').any(|o| o == "inline");
            if name_part == "-" {
                return None;
            }
            (
                (!name_part.is_empty()).then(|| name_part.to_string()),
                inline || (name.is_none() && name_part.is_empty()),
            )
        }
        None => (None, name.is_none()),
    };
    let omitempty = json_tag
        .as_deref()
        .is_some_and(|t| t.split(',').skip(1).any(|o| o == "omitempty"));
    Some(GoField {
        json,
        inline,
        omitempty,
        doc,
        markers,
        ty,
    })
}

// ---------------------------------------------------------------------------------------------
// the transform

/// The committed table: the Kubernetes release, every type's schema (references to other types
/// as `{"$known": "<rust path>"}`) with the k8s-openapi versions that have the type, and every
/// listable kind.
pub struct Table {
    pub kubernetes: String,
    pub types: BTreeMap<String, Value>,
    pub kinds: Vec<Value>,
}

/// The Kubernetes versions (minor numbers, `37` for 1.37) in whose k8s-openapi module each type
/// exists, read from the k8s-openapi sources (`src/v1_NN/<module path>/<file>.rs`).
pub fn k8s_openapi_versions(crate_src: &Path) -> Result<BTreeMap<String, Vec<u32>>, String> {
    let mut out: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let entries = std::fs::read_dir(crate_src)
        .map_err(|e| format!("cannot read {}: {e}", crate_src.display()))?;
    let mut versions: Vec<(u32, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let minor = p.file_name()?.to_str()?.strip_prefix("v1_")?.parse().ok()?;
            Some((minor, p))
        })
        .collect();
    versions.sort();
    for (minor, dir) in versions {
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            let entries =
                std::fs::read_dir(&d).map_err(|e| format!("cannot read {}: {e}", d.display()))?;
            for entry in entries.filter_map(Result::ok) {
                let p = entry.path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                if p.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&p)
                    .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
                let module: Vec<String> = p
                    .parent()
                    .and_then(|m| m.strip_prefix(&dir).ok())
                    .map(|m| {
                        m.components()
                            .map(|c| c.as_os_str().to_string_lossy().into_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                if module.is_empty() {
                    continue;
                }
                for line in text.lines() {
                    let Some(rest) = line
                        .strip_prefix("pub struct ")
                        .or_else(|| line.strip_prefix("pub enum "))
                    else {
                        continue;
                    };
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    // generic types (`WatchEvent<T>`) have no schema of their own
                    if rest[name.len()..].starts_with('<') {
                        continue;
                    }
                    out.entry(format!("{}::{name}", module.join("::")))
                        .or_default()
                        .push(minor);
                }
            }
        }
    }
    Ok(out)
}

impl Table {
    /// The table as committed: one type per line, so a change shows as a small diff.
    pub fn to_text(&self) -> String {
        let mut out = String::from("{\n");
        out.push_str(&format!(
            "\"kubernetes\": {},\n",
            Value::String(self.kubernetes.clone())
        ));
        out.push_str("\"kinds\": [\n");
        for (i, k) in self.kinds.iter().enumerate() {
            let comma = if i + 1 < self.kinds.len() { "," } else { "" };
            out.push_str(&format!("{k}{comma}\n"));
        }
        out.push_str("],\n\"types\": {\n");
        let n = self.types.len();
        for (i, (name, schema)) in self.types.iter().enumerate() {
            let comma = if i + 1 < n { "," } else { "" };
            out.push_str(&format!(
                "{}: {schema}{comma}\n",
                Value::String(name.clone())
            ));
        }
        out.push_str("}\n}\n");
        out
    }
}

/// Builds the table from the OpenAPI v3 documents (one per group-version path) and the Go
/// sources of the same release.
pub fn transform(
    docs: &[Value],
    go: &GoSources,
    kubernetes: &str,
    k8s_openapi: &BTreeMap<String, Vec<u32>>,
) -> Result<Table, String> {
    let mut definitions: BTreeMap<String, Value> = BTreeMap::new();
    for doc in docs {
        if let Some(schemas) = doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
        {
            for (name, schema) in schemas {
                definitions
                    .entry(name.clone())
                    .or_insert_with(|| schema.clone());
            }
        }
    }
    let mut types = BTreeMap::new();
    let mut problems = Vec::new();
    for (name, schema) in &definitions {
        let Some(path) = rust_path(name) else {
            continue;
        };
        match type_schema(name, schema, go) {
            Ok(s) => {
                let mut entry = json!({ "schema": s });
                if let Some(v) = k8s_openapi.get(&path) {
                    entry["k8s-openapi"] = json!(v);
                }
                types.insert(path, sorted(entry));
            }
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    let kinds = kinds(docs, &definitions);
    Ok(Table {
        kubernetes: kubernetes.to_string(),
        types,
        kinds,
    })
}

/// Every kind that can be listed: group, version, kind, plural, namespaced and its type.
fn kinds(docs: &[Value], definitions: &BTreeMap<String, Value>) -> Vec<Value> {
    // (group, version, kind) → (plural, namespaced)
    let mut found: BTreeMap<(String, String, String), (String, bool)> = BTreeMap::new();
    for doc in docs {
        let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
            continue;
        };
        for (path, item) in paths {
            let Some(get) = item.get("get") else { continue };
            if get.get("x-kubernetes-action").and_then(Value::as_str) != Some("list") {
                continue;
            }
            let Some(gvk) = get.get("x-kubernetes-group-version-kind") else {
                continue;
            };
            let s = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let plural = path.rsplit('/').next().unwrap_or_default().to_string();
            if plural.starts_with('{') || path.contains("/watch/") {
                continue;
            }
            let namespaced = path.contains("/namespaces/{namespace}/");
            let entry = found
                .entry((s("group"), s("version"), s("kind")))
                .or_insert((plural, false));
            entry.1 |= namespaced;
        }
    }
    let mut out = Vec::new();
    for ((group, version, kind), (plural, namespaced)) in found {
        let ty = definitions.iter().find_map(|(name, schema)| {
            let gvks = schema.get("x-kubernetes-group-version-kind")?.as_array()?;
            gvks.iter()
                .any(|g| {
                    g.get("group").and_then(Value::as_str) == Some(&group)
                        && g.get("version").and_then(Value::as_str) == Some(&version)
                        && g.get("kind").and_then(Value::as_str) == Some(&kind)
                })
                .then(|| rust_path(name))
                .flatten()
        });
        let Some(ty) = ty else { continue };
        out.push(sorted(json!({
            "group": group, "version": version, "kind": kind,
            "plural": plural, "namespaced": namespaced, "type": ty,
        })));
    }
    out
}

/// Context for converting one definition: its Go package.
struct Ctx<'a> {
    go: &'a GoSources,
    import: String,
    package: std::rc::Rc<GoPackage>,
}

fn type_schema(definition: &str, schema: &Value, go: &GoSources) -> Result<Value, String> {
    if let Some(o) = override_schema(definition) {
        return Ok(o);
    }
    let (import, name) =
        GoSources::go_name(definition).ok_or_else(|| "not a Go type name".to_string())?;
    let package = go.package(&import)?;
    let ctx = Ctx {
        go,
        import: import.clone(),
        package,
    };
    let go_type = ctx
        .package
        .types
        .get(&name)
        .cloned()
        .ok_or_else(|| format!("type {name} not found in Go package {import}"))?;
    let mut out = Map::new();
    match go.struct_fields(&import, &name)? {
        Some((_, _, own_fields)) => {
            out.insert("type".into(), json!("object"));
            let mut properties = Map::new();
            let mut required = Vec::new();
            let mut immutable = Vec::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (prop, node) in props {
                    let (declared_in, field) = ctx
                        .field(&name, prop)?
                        .ok_or_else(|| format!("no Go field for property {prop}"))?;
                    let field_ctx = Ctx {
                        go,
                        package: go.package(&declared_in)?,
                        import: declared_in,
                    };
                    properties.insert(prop.clone(), field_ctx.field_schema(node, &field)?);
                    let is_required = go_required(&field);
                    if is_required {
                        required.push(prop.clone());
                    }
                    if field.markers.iter().any(|m| m == "k8s:immutable") && !is_required {
                        immutable.push(prop.clone());
                    }
                }
            }
            if !properties.is_empty() {
                out.insert("properties".into(), Value::Object(properties));
            }
            if !required.is_empty() {
                required.sort();
                out.insert("required".into(), json!(required));
            }
            // an optional immutable field may not be removed once set: controller-gen adds a rule
            // on the struct for each, in the order the fields are declared
            immutable.sort_by_key(|p| {
                own_fields
                    .iter()
                    .position(|f| f.json.as_deref() == Some(p.as_str()))
                    .unwrap_or(usize::MAX)
            });
            if !immutable.is_empty() {
                let rules: Vec<Value> = immutable
                    .iter()
                    .map(|f| {
                        json!({
                            "message": format!("field {f} is immutable once set"),
                            "rule": format!("!has(oldSelf.{f}) || has(self.{f})"),
                        })
                    })
                    .collect();
                out.insert("x-kubernetes-validations".into(), Value::Array(rules));
            }
            copy_extensions(schema, &mut out);
            // an embedded struct's `+structType` holds for the struct it is embedded in
            for marker in go.embedded_markers(&import, &name, 0)? {
                apply_markers_to_map(&mut out, &marker)?;
            }
        }
        None => {
            let converted = ctx.node(schema, Some(&go_type.underlying))?;
            if let Value::Object(m) = converted {
                out = m;
            }
        }
    }
    let mut out = Value::Object(out);
    apply_markers(&mut out, &go_type.markers)?;
    apply_enum(&mut out, &ctx.package, &name, &go_type.markers);
    if let Some(d) = ctx.type_description(&go_type, 0)? {
        out["description"] = Value::String(d);
    }
    Ok(sorted(out))
}

/// Whether controller-gen requires a struct field: `+kubebuilder:validation:Optional`, then
/// `+kubebuilder:validation:Required`, then `+optional`/`+k8s:optional`, then
/// `+required`/`+k8s:required` decide, in that order; else a field is required unless it is
/// inline or `omitempty` (no Kubernetes package makes optional the default).
fn go_required(field: &GoField) -> bool {
    let has = |name: &str| field.markers.iter().any(|m| m == name);
    if has("kubebuilder:validation:Optional") {
        false
    } else if has("kubebuilder:validation:Required") {
        true
    } else if has("optional") || has("k8s:optional") {
        false
    } else if has("required") || has("k8s:required") {
        true
    } else {
        !field.inline && !field.omitempty
    }
}

/// `+k8s:enum` on a string type: the values of the type's string constants in its package,
/// sorted as controller-gen sorts them (by their JSON text).
fn apply_enum(out: &mut Value, package: &GoPackage, name: &str, markers: &[String]) {
    if !markers.iter().any(|m| m == "k8s:enum") {
        return;
    }
    let mut values: Vec<String> = package
        .consts
        .iter()
        .filter(|(ty, _)| ty == name)
        .map(|(_, v)| v.clone())
        .collect();
    values.sort_by_key(|v| Value::String(v.clone()).to_string());
    out["enum"] = json!(values);
}

impl Ctx<'_> {
    /// The Go field behind a JSON property, looking through inline (embedded) structs.
    fn field(&self, type_name: &str, json_name: &str) -> Result<Option<(String, GoField)>, String> {
        self.field_in(&self.import, type_name, json_name, 0)
    }

    fn field_in(
        &self,
        import: &str,
        type_name: &str,
        json_name: &str,
        depth: usize,
    ) -> Result<Option<(String, GoField)>, String> {
        if depth > 8 {
            return Ok(None);
        }
        let Some((import, package, fields)) = self.go.struct_fields(import, type_name)? else {
            return Ok(None);
        };
        let import = import.as_str();
        for f in &fields {
            if f.json.as_deref() == Some(json_name) && !f.inline {
                return Ok(Some((import.to_string(), f.clone())));
            }
        }
        for f in fields.iter().filter(|f| f.inline) {
            let ty = f.ty.trim_start_matches('*');
            let (imp, name) = match ty.split_once('.') {
                Some((alias, name)) => match package.imports.get(alias) {
                    Some(p) => (p.clone(), name.to_string()),
                    None => continue,
                },
                None => (import.to_string(), ty.to_string()),
            };
            if !MODULES.iter().any(|(_, p, _)| imp.starts_with(p)) {
                continue;
            }
            if let Some(found) = self.field_in(&imp, &name, json_name, depth + 1)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// A type's description: its doc, or for `type X pkg.Y` without one, Y's (controller-gen
    /// refers to Y, whose description stays when X has none).
    fn type_description(&self, go_type: &GoType, depth: usize) -> Result<Option<String>, String> {
        if let Some(d) = description(&go_type.doc) {
            return Ok(Some(d));
        }
        if go_type.fields.is_some() || depth > 8 {
            return Ok(None);
        }
        let Some((import, name)) = self.named(&go_type.underlying) else {
            return Ok(None);
        };
        if !MODULES.iter().any(|(_, p, _)| import.starts_with(p)) {
            return Ok(None);
        }
        let package = self.go.package(&import)?;
        let Some(inner_type) = package.types.get(&name).cloned() else {
            return Ok(None);
        };
        let inner = Ctx {
            go: self.go,
            import,
            package,
        };
        inner.type_description(&inner_type, depth + 1)
    }

    fn field_schema(&self, node: &Value, field: &GoField) -> Result<Value, String> {
        let mut out = self.node(node, Some(&field.ty))?;
        apply_markers(&mut out, &field.markers)?;
        if let Some(d) = description(&field.doc) {
            out["description"] = Value::String(d);
        }
        Ok(sorted(out))
    }

    /// A named Go type an expression refers to, in this package or an imported one.
    fn named(&self, ty: &str) -> Option<(String, String)> {
        let ty = ty.trim_start_matches('*');
        if ty.starts_with('[') || ty.starts_with("map[") {
            return None;
        }
        match ty.split_once('.') {
            Some((alias, name)) => {
                let import = self.package.imports.get(alias)?;
                Some((import.clone(), name.to_string()))
            }
            None => self
                .package
                .types
                .contains_key(ty)
                .then(|| (self.import.clone(), ty.to_string())),
        }
    }

    /// Converts an OpenAPI node whose Go type is `ty` (as written, when known).
    fn node(&self, node: &Value, ty: Option<&str>) -> Result<Value, String> {
        if let Some(r) = reference(node) {
            let path = rust_path(&r).ok_or_else(|| format!("reference to a foreign type {r}"))?;
            return Ok(json!({ "$known": path }));
        }
        let ty = ty.map(|t| t.trim_start_matches('*'));
        // a named Go type the OpenAPI inlines (`type Capability string`): its doc and markers
        if let Some(t) = ty
            && let Some((import, name)) = self.named(t)
            && MODULES.iter().any(|(_, p, _)| import.starts_with(p))
        {
            let package = self.go.package(&import)?;
            if let Some(go_type) = package.types.get(&name).cloned() {
                let inner = Ctx {
                    go: self.go,
                    import: import.clone(),
                    package: package.clone(),
                };
                let mut out = inner.node(node, Some(&go_type.underlying))?;
                apply_markers(&mut out, &go_type.markers)?;
                apply_enum(&mut out, &package, &name, &go_type.markers);
                if let Some(d) = inner.type_description(&go_type, 0)? {
                    out["description"] = Value::String(d);
                }
                return Ok(sorted(out));
            }
        }
        let Some(obj) = node.as_object() else {
            return Err(format!("schema node is not an object: {node}"));
        };
        let mut out = Map::new();
        for key in ["type", "format"] {
            if let Some(v) = obj.get(key) {
                out.insert(key.into(), v.clone());
            }
        }
        if out.get("format").and_then(Value::as_str) == Some("double") {
            out.remove("format");
        }
        if let Some(items) = obj.get("items") {
            let elem = ty.and_then(|t| t.strip_prefix("[]"));
            out.insert("items".into(), self.node(items, elem)?);
        }
        if let Some(ap) = obj.get("additionalProperties") {
            let value_ty = ty.and_then(map_value);
            let converted = match ap {
                Value::Bool(b) => Value::Bool(*b),
                other => self.node(other, value_ty.as_deref())?,
            };
            out.insert("additionalProperties".into(), converted);
        }
        if obj.contains_key("properties") {
            return Err(format!("inline object with properties: {node}"));
        }
        copy_extensions(node, &mut out);
        Ok(Value::Object(out))
    }
}

/// The value type of a Go map type expression.
fn map_value(ty: &str) -> Option<String> {
    let rest = ty.strip_prefix("map[")?;
    let mut depth = 1;
    for (i, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(rest[i + 1..].to_string());
                }
            }
            _ => {}
        }
    }
    None
}

/// The definition a node refers to (`$ref` or `allOf: [{$ref}]`).
fn reference(node: &Value) -> Option<String> {
    let r = node.get("$ref").or_else(|| {
        node.get("allOf")
            .and_then(Value::as_array)
            .filter(|a| a.len() == 1)
            .and_then(|a| a[0].get("$ref"))
    })?;
    Some(r.as_str()?.rsplit('/').next()?.to_string())
}

fn copy_extensions(node: &Value, out: &mut Map<String, Value>) {
    for key in [
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-int-or-string",
        "x-kubernetes-embedded-resource",
    ] {
        if let Some(v) = node.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
}

fn apply_markers_to_map(out: &mut Map<String, Value>, marker: &str) -> Result<(), String> {
    let mut v = Value::Object(std::mem::take(out));
    apply_markers(&mut v, &[marker.to_string()])?;
    if let Value::Object(m) = v {
        *out = m;
    }
    Ok(())
}

/// Applies the Go markers controller-gen reads on Kubernetes types that the OpenAPI document
/// does not carry: validation markers, `+default=`, `+nullable`, `+k8s:immutable`.
fn apply_markers(out: &mut Value, markers: &[String]) -> Result<(), String> {
    for m in markers {
        let (name, value) = match m.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (m.trim(), None),
        };
        let num = |v: Option<&str>| -> Result<Value, String> {
            let v = v.ok_or_else(|| format!("marker +{name} needs a value"))?;
            serde_json::from_str::<Value>(v).map_err(|e| format!("marker +{m}: {e}"))
        };
        match name {
            "kubebuilder:validation:MaxLength" => out["maxLength"] = num(value)?,
            "kubebuilder:validation:MinLength" => out["minLength"] = num(value)?,
            "kubebuilder:validation:Minimum" => out["minimum"] = num(value)?,
            "kubebuilder:validation:Maximum" => out["maximum"] = num(value)?,
            "kubebuilder:validation:Pattern" => {
                let v = value.unwrap_or_default();
                let v = v
                    .strip_prefix('`')
                    .and_then(|v| v.strip_suffix('`'))
                    .map(str::to_string)
                    .or_else(|| serde_json::from_str::<String>(v).ok())
                    .unwrap_or_else(|| v.to_string());
                out["pattern"] = Value::String(v);
            }
            "kubebuilder:validation:Enum" => {
                let items: Vec<Value> = value
                    .unwrap_or_default()
                    .split(';')
                    .map(|s| {
                        serde_json::from_str::<Value>(s)
                            .unwrap_or_else(|_| Value::String(s.to_string()))
                    })
                    .collect();
                out["enum"] = Value::Array(items);
            }
            "kubebuilder:validation:Format" => {
                out["format"] = Value::String(value.unwrap_or_default().into())
            }
            "kubebuilder:validation:Type" => {
                out["type"] = Value::String(value.unwrap_or_default().into())
            }
            "default" => {
                let v = value.unwrap_or_default();
                if !v.starts_with("ref(") {
                    out["default"] =
                        serde_json::from_str(v).map_err(|e| format!("marker +default={v}: {e}"))?;
                }
            }
            "nullable" => out["nullable"] = Value::Bool(true),
            "k8s:immutable" => {
                let rule = json!({"message": "field is immutable", "rule": "self == oldSelf"});
                match out.get_mut("x-kubernetes-validations") {
                    Some(Value::Array(rules)) => rules.push(rule),
                    _ => out["x-kubernetes-validations"] = json!([rule]),
                }
            }
            "structType" | "mapType" => {
                out["x-kubernetes-map-type"] = Value::String(value.unwrap_or_default().into())
            }
            _ => {}
        }
    }
    Ok(())
}

/// A description from Go doc lines, as controller-gen builds it: Go's comment text (runs of blank
/// lines made one, blank edges trimmed), then outside fenced code blocks `TODO` lines dropped and
/// the text cut at a `---` line.
fn description(doc: &[String]) -> Option<String> {
    let mut text: Vec<&str> = Vec::new();
    for l in doc {
        if l.is_empty() && text.last().is_none_or(|p| p.is_empty()) {
            continue;
        }
        text.push(l);
    }
    while text.last().is_some_and(|l| l.is_empty()) {
        text.pop();
    }
    let mut out: Vec<&str> = Vec::new();
    let mut fenced = false;
    for line in text {
        if line.starts_with("```") || line.starts_with("~~~") {
            fenced = !fenced;
        }
        if !fenced {
            if line.starts_with("TODO") {
                continue;
            }
            if line.starts_with("---") {
                break;
            }
        }
        out.push(line);
    }
    let text = out.join("\n");
    (!text.is_empty()).then_some(text)
}

/// A schema with its object keys in byte order at every level.
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let b: BTreeMap<String, Value> = m.into_iter().map(|(k, v)| (k, sorted(v))).collect();
            Value::Object(b.into_iter().collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}
