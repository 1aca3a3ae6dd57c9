//! rustgen: writes the Rust source of API types (structs and enums with their docs, marker
//! lines, derives, serde and other attributes) from a small model. One writer for every
//! command that produces API types from something else (`create api --from-crd`, translations
//! of Go types). `render` is deterministic and does no IO; the model holds source text
//! (types, attribute arguments) as the caller means it to be written.
//!
//! ```text
//! RustFile { header, inner_doc, uses, items: [Item::Struct(Struct { doc, markers, derives,
//!     attrs, serde, body: Body::Named([Field { doc, markers, attrs, serde, ident, ty }]) })] }
//! ```

pub mod ident;

/// The derives of a kind's spec struct, in every file rustgen writes.
pub const KIND_DERIVES: &[&str] = &[
    "CustomResource",
    "Serialize",
    "Deserialize",
    "Clone",
    "Debug",
    "Default",
    "PartialEq",
];

/// The derives of every other struct and newtype rustgen's callers write.
pub const TYPE_DERIVES: &[&str] = &[
    "Schema",
    "Serialize",
    "Deserialize",
    "Clone",
    "Debug",
    "Default",
    "PartialEq",
];

/// One Rust source file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RustFile {
    /// Text put first, verbatim (a license header, already commented); empty for none. A
    /// trailing newline is added when it lacks one.
    pub header: String,
    /// The module's `//!` lines: prose, then marker lines (see [`Docs`]).
    pub inner_doc: Docs,
    /// `use` paths in the order given, each rendered `use <path>;`.
    pub uses: Vec<String>,
    pub items: Vec<Item>,
}

/// An item of a file, rendered in order with one blank line between items.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Struct(Struct),
    Enum(Enum),
    /// Source text put as it is (an `impl` block, a `mod tests`), without trailing newline.
    Raw(String),
}

/// A doc comment: prose lines, then marker lines (`+kubebuilder:validation:MinLength=2`, with
/// their `+`), a blank doc line between the two when both are present. Carriage returns are
/// dropped and trailing whitespace cut, as rustc and the source scan read doc lines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Docs {
    pub prose: Vec<String>,
    pub markers: Vec<String>,
}

impl Docs {
    /// Prose from a text of one or more lines (`\n`-separated), no markers.
    pub fn prose(text: &str) -> Docs {
        Docs {
            prose: if text.is_empty() {
                Vec::new()
            } else {
                text.split('\n').map(str::to_string).collect()
            },
            markers: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.prose.is_empty() && self.markers.is_empty()
    }

    /// The comment's lines, without the `///` or `//!`.
    pub fn lines(&self) -> Vec<String> {
        let clean = |l: &String| l.replace('\r', "").trim_end().to_string();
        let mut out: Vec<String> = self.prose.iter().map(clean).collect();
        if !out.is_empty() && !self.markers.is_empty() {
            out.push(String::new());
        }
        out.extend(self.markers.iter().map(clean));
        out
    }
}

/// A struct: named fields, one or more tuple fields, or none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Struct {
    pub name: String,
    pub doc: Docs,
    /// The names in `#[derive(...)]`, in order; none gives no derive line.
    pub derives: Vec<String>,
    /// Other attributes, each the text between `#[` and `]` (`k8s(group = "a.b")`), in order.
    pub attrs: Vec<String>,
    /// The arguments of one `#[serde(...)]` after `attrs` (`rename_all = "camelCase"`).
    pub serde: Vec<String>,
    pub body: Body,
}

/// An enum.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Enum {
    pub name: String,
    pub doc: Docs,
    pub derives: Vec<String>,
    pub attrs: Vec<String>,
    pub serde: Vec<String>,
    pub variants: Vec<Variant>,
}

/// A variant of an enum.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Variant {
    pub name: String,
    pub doc: Docs,
    /// Attributes such as `default`, each the text between `#[` and `]`.
    pub attrs: Vec<String>,
    pub serde: Vec<String>,
    pub body: Body,
}

/// The fields of a struct or variant.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Body {
    /// `{ a: T, ... }`; an empty list renders `{}`.
    Named(Vec<Field>),
    /// `(T, ...)`: the types as written.
    Tuple(Vec<String>),
    /// No fields.
    #[default]
    Unit,
}

/// A named field.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Field {
    /// The identifier as written (`r#type` for a keyword; see [`ident::field_name`]).
    pub ident: String,
    /// The type as written (`Option<Vec<String>>`).
    pub ty: String,
    pub doc: Docs,
    pub attrs: Vec<String>,
    pub serde: Vec<String>,
}

/// A Rust string literal holding `s` (quotes, backslashes and control characters escaped).
pub fn str_lit(s: &str) -> String {
    format!("{s:?}")
}

impl RustFile {
    /// The file's source text, ending in one newline.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if !self.header.is_empty() {
            out.push_str(&self.header);
            if !self.header.ends_with('\n') {
                out.push('\n');
            }
        }
        doc_lines(&mut out, "", "//!", &self.inner_doc);
        let mut sections: Vec<String> = Vec::new();
        if !self.uses.is_empty() {
            let uses: Vec<String> = self.uses.iter().map(|u| format!("use {u};\n")).collect();
            sections.push(uses.concat());
        }
        sections.extend(self.items.iter().map(Item::render));
        for (i, s) in sections.iter().enumerate() {
            if i > 0 || !out.is_empty() {
                out.push('\n');
            }
            out.push_str(s);
        }
        out
    }
}

impl Item {
    /// The item's text, ending in a newline.
    pub fn render(&self) -> String {
        match self {
            Item::Struct(s) => s.render(),
            Item::Enum(e) => e.render(),
            Item::Raw(text) => format!("{}\n", text.trim_end_matches('\n')),
        }
    }
}

impl Struct {
    pub fn render(&self) -> String {
        let mut out = String::new();
        head(
            &mut out,
            "",
            &self.doc,
            &self.derives,
            &self.attrs,
            &self.serde,
        );
        out.push_str("pub struct ");
        out.push_str(&self.name);
        match &self.body {
            Body::Unit => out.push_str(";\n"),
            Body::Tuple(tys) => {
                let tys: Vec<String> = tys.iter().map(|t| format!("pub {t}")).collect();
                out.push_str(&format!("({});\n", tys.join(", ")));
            }
            Body::Named(fields) => {
                named_fields(&mut out, "", "pub ", fields);
                out.push('\n');
            }
        }
        out
    }
}

impl Enum {
    pub fn render(&self) -> String {
        let mut out = String::new();
        head(
            &mut out,
            "",
            &self.doc,
            &self.derives,
            &self.attrs,
            &self.serde,
        );
        out.push_str("pub enum ");
        out.push_str(&self.name);
        if self.variants.is_empty() {
            out.push_str(" {}\n");
            return out;
        }
        out.push_str(" {\n");
        for v in &self.variants {
            head(&mut out, "    ", &v.doc, &[], &v.attrs, &v.serde);
            out.push_str("    ");
            out.push_str(&v.name);
            match &v.body {
                Body::Unit => {}
                Body::Tuple(tys) => out.push_str(&format!("({})", tys.join(", "))),
                Body::Named(fields) => named_fields(&mut out, "    ", "", fields),
            }
            out.push_str(",\n");
        }
        out.push_str("}\n");
        out
    }
}

/// ` {` fields `}` (no trailing newline), each field indented one level past `indent`.
fn named_fields(out: &mut String, indent: &str, vis: &str, fields: &[Field]) {
    if fields.is_empty() {
        out.push_str(" {}");
        return;
    }
    out.push_str(" {\n");
    let inner = format!("{indent}    ");
    for f in fields {
        head(out, &inner, &f.doc, &[], &f.attrs, &f.serde);
        out.push_str(&format!("{inner}{vis}{}: {},\n", f.ident, f.ty));
    }
    out.push_str(indent);
    out.push('}');
}

/// Doc lines, then `#[derive]`, the attributes and `#[serde]`, each on a line at `indent`.
fn head(
    out: &mut String,
    indent: &str,
    doc: &Docs,
    derives: &[String],
    attrs: &[String],
    serde: &[String],
) {
    doc_lines(out, indent, "///", doc);
    if !derives.is_empty() {
        out.push_str(&format!("{indent}#[derive({})]\n", derives.join(", ")));
    }
    for a in attrs {
        out.push_str(&format!("{indent}#[{a}]\n"));
    }
    if !serde.is_empty() {
        out.push_str(&format!("{indent}#[serde({})]\n", serde.join(", ")));
    }
}

fn doc_lines(out: &mut String, indent: &str, slashes: &str, doc: &Docs) {
    for line in doc.lines() {
        if line.is_empty() {
            out.push_str(&format!("{indent}{slashes}\n"));
        } else {
            out.push_str(&format!("{indent}{slashes} {line}\n"));
        }
    }
}

#[cfg(test)]
mod tests;
