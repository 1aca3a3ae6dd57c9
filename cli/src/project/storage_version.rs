//! Which version of a kind is stored: finding, adding and removing `+kubebuilder:storageversion`
//! on the doc comment of a version's spec struct (the one deriving `CustomResource`, from which
//! the derive generates the kind's root type) in a user-owned types file.

use syn::spanned::Spanned;

/// The storage marker as a doc-comment line.
pub const MARKER: &str = "+kubebuilder:storageversion";
/// The marker's key in the `#[k8s(...)]` attribute form.
const ATTRIBUTE_KEY: &str = "storage_version";

/// What a types file says about its version being stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// Marked by the doc-comment line on these (1-based) lines, each exactly
    /// `/// +kubebuilder:storageversion`, so it can be removed.
    Marked { lines: Vec<usize> },
    /// Marked in a way this module does not rewrite (the attribute form, a `#[doc]` attribute).
    MarkedOtherwise,
    /// Not marked; a marker line goes in before this (1-based) line, with this indentation.
    Unmarked { insert_at: usize, indent: String },
    /// The file does not have the expected shape: the reason. It may still hold the marker
    /// somewhere (see [`mentions_marker`]).
    Unknown(String),
}

/// `text` without its doc-comment marker lines (`/// +kubebuilder:storageversion`, as [`add`]
/// writes them): a types file as its template rendered it, whichever version is stored.
pub fn without_marker(text: &str) -> String {
    text.split_inclusive('\n')
        .filter(|l| l.trim() != format!("/// {MARKER}"))
        .collect()
}

/// Whether `text` mentions the marker anywhere, in either spelling: what a file of unknown shape
/// is judged by.
pub fn mentions_marker(text: &str) -> bool {
    text.lines().any(|l| {
        let t = l.trim_start();
        (t.starts_with("//") && t.contains(MARKER))
            || (!t.starts_with("//") && t.contains(ATTRIBUTE_KEY))
    })
}

/// Read the storage marker of kind `kind`'s spec (`<Kind>Spec`, deriving `CustomResource`) in
/// the Rust source `text`.
pub fn inspect(text: &str, kind: &str) -> Storage {
    // as the scan reads files: what it never reads blanked, through the bounded parser
    let blanked = crate::manifests::blank_unread(text);
    crate::manifests::bounded::with_file(&blanked, |file| inspect_parsed(&file, &blanked, kind))
        .unwrap_or_else(|refused| {
            Storage::Unknown(if refused.too_deep {
                format!("at line {}, {}", refused.line, refused.message)
            } else {
                format!("it does not parse as rust ({})", refused.message)
            })
        })
}

/// [`inspect`] on the file parsed from `text`.
fn inspect_parsed(file: &syn::File, text: &str, kind: &str) -> Storage {
    let spec = format!("{kind}Spec");
    let found = file.items.iter().find_map(|item| match item {
        syn::Item::Struct(s) if s.ident == spec => Some(s),
        _ => None,
    });
    let Some(item) = found else {
        return Storage::Unknown(format!("it has no top-level `struct {spec}`"));
    };
    if !derives_custom_resource(&item.attrs) {
        return Storage::Unknown(format!("`struct {spec}` does not derive CustomResource"));
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut marked = Vec::new();
    let mut otherwise = false;
    let mut last_doc = None;
    for attr in &item.attrs {
        let line = attr.span().start().line;
        let source = lines
            .get(line.wrapping_sub(1))
            .map(|l| l.trim())
            .unwrap_or("");
        if attr.path().is_ident("doc") {
            let is_line_comment = source.starts_with("///");
            if is_line_comment {
                last_doc = Some(line);
            }
            if crate::manifests::attribute_string(attr).is_some_and(|t| t.trim() == MARKER) {
                if is_line_comment && source == format!("/// {MARKER}") {
                    marked.push(line);
                } else {
                    otherwise = true;
                }
            }
        } else if attr.path().is_ident("k8s") && attr_mentions(attr, ATTRIBUTE_KEY) {
            otherwise = true;
        }
    }
    if otherwise {
        return Storage::MarkedOtherwise;
    }
    if !marked.is_empty() {
        return Storage::Marked { lines: marked };
    }
    let insert_at = match last_doc {
        Some(line) => line + 1,
        None => item
            .attrs
            .first()
            .map(|a| a.span().start().line)
            .unwrap_or_else(|| item.span().start().line),
    };
    let indent = lines
        .get(insert_at.wrapping_sub(1))
        .map(|l| l[..l.len() - l.trim_start().len()].to_owned())
        .unwrap_or_default();
    Storage::Unmarked { insert_at, indent }
}

/// `text` with a marker line inserted before line `at` (1-based).
pub fn add(text: &str, at: usize, indent: &str) -> String {
    let mut out = String::with_capacity(text.len() + MARKER.len() + 8);
    let mut inserted = false;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i + 1 == at {
            out.push_str(&format!("{indent}/// {MARKER}\n"));
            inserted = true;
        }
        out.push_str(line);
    }
    if !inserted {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{indent}/// {MARKER}\n"));
    }
    out
}

/// `text` without the given (1-based) lines.
pub fn remove(text: &str, lines: &[usize]) -> String {
    text.split_inclusive('\n')
        .enumerate()
        .filter(|(i, _)| !lines.contains(&(i + 1)))
        .map(|(_, l)| l)
        .collect()
}

fn derives_custom_resource(attrs: &[syn::Attribute]) -> bool {
    operator_gen_codegen::lower::lists_key(attrs, "derive", "CustomResource")
}

fn attr_mentions(attr: &syn::Attribute, key: &str) -> bool {
    match &attr.meta {
        syn::Meta::List(list) => list.tokens.clone().into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => i == key,
            _ => false,
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "//! v1\n\nuse x::*;\n\n/// CaptainSpec defines it\n///\n/// +kubebuilder:subresource:status\n#[derive(CustomResource, Clone)]\n#[k8s(group = \"g\", version = \"v1\", kind = \"Captain\")]\npub struct CaptainSpec {\n    pub foo: i32,\n}\n";

    #[test]
    fn a_file_nesting_past_the_scans_bound_is_of_unknown_shape_not_a_crash() {
        let depth = 100_000;
        let deep = format!(
            "{SPEC}\nconst X: i32 = {}1{};\n",
            "(".repeat(depth),
            ")".repeat(depth)
        );
        let Storage::Unknown(why) = inspect(&deep, "Captain") else {
            panic!("{:?}", inspect(&deep, "Captain"));
        };
        assert!(
            why.contains("at line 14, brackets nest more than 128 levels deep"),
            "{why}"
        );
    }

    #[test]
    fn adds_after_the_last_doc_line_and_removes_it_again() {
        let Storage::Unmarked { insert_at, indent } = inspect(SPEC, "Captain") else {
            panic!("{:?}", inspect(SPEC, "Captain"));
        };
        assert_eq!(insert_at, 8);
        let marked = add(SPEC, insert_at, &indent);
        assert!(
            marked.contains(
                "/// +kubebuilder:subresource:status\n/// +kubebuilder:storageversion\n#[derive"
            ),
            "{marked}"
        );
        let Storage::Marked { lines } = inspect(&marked, "Captain") else {
            panic!("not marked: {marked}");
        };
        assert_eq!(lines, vec![8]);
        assert_eq!(remove(&marked, &lines), SPEC);
    }

    #[test]
    fn the_attribute_form_and_unexpected_shapes_are_reported() {
        let attr = SPEC.replace("kind = \"Captain\"", "kind = \"Captain\", storage_version");
        assert_eq!(inspect(&attr, "Captain"), Storage::MarkedOtherwise);
        assert!(mentions_marker(&attr));
        assert!(!mentions_marker(SPEC));
        let renamed = SPEC.replace("CaptainSpec {", "CaptainParams {");
        assert!(
            matches!(inspect(&renamed, "Captain"), Storage::Unknown(r) if r.contains("struct CaptainSpec"))
        );
        let no_derive = SPEC.replace("CustomResource, ", "");
        assert!(
            matches!(inspect(&no_derive, "Captain"), Storage::Unknown(r) if r.contains("CustomResource"))
        );
        assert!(matches!(inspect("fn (", "Captain"), Storage::Unknown(_)));
    }
}
