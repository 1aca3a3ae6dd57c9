//! The proof fixture: Rust source for a custom resource with one slot per proof of the marker
//! registry, which the registry's own test and the apiserver test both build CRDs from, so a
//! marker cannot join the registry without what proves it.

use super::registry::{Case, Kind, Proof, REGISTRY};

/// Group, version and kind of the fixture's custom resource.
pub const GROUP: &str = "proof.operator-gen.dev";
pub const VERSION: &str = "v1";
pub const KIND: &str = "Proof";

/// Types the proofs' `ty` may name besides Rust's and serde_json's.
const HELPERS: &str = r#"
/// A list-map entry keyed by name.
#[derive(Schema, Serialize, Deserialize)]
pub struct Keyed {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<i32>,
}

/// Two optional strings.
#[derive(Schema, Serialize, Deserialize)]
pub struct Pair {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<String>,
}

/// The observed state: the replicas the scale subresource reads.
#[derive(Schema, Serialize, Deserialize)]
pub struct ProofStatus {
    #[serde(default)]
    pub replicas: i32,
}
"#;

/// One proof placed in the fixture.
#[derive(Clone, Copy, Debug)]
pub struct Placed {
    pub kind: Kind,
    pub proof: &'static Proof,
    /// The slot's number: `spec.p<n>.f` holds the proof's field.
    pub slot: usize,
}

impl Placed {
    /// The JSON name of the slot under `spec`.
    pub fn slot_name(&self) -> String {
        format!("p{}", self.slot)
    }
    /// The kind of the CRD this proof stands in: the shared one, or for a proof whose CRD the
    /// apiserver must refuse, one of its own.
    pub fn crd_kind(&self) -> String {
        match self.proof.case {
            Case::RefusesCrd { .. } => format!("Refused{}", self.slot),
            _ => KIND.to_string(),
        }
    }
    /// Whether the proof's lines stand on the root (CRD markers) rather than on its field.
    pub fn on_root(&self) -> bool {
        matches!(
            self.proof.case,
            Case::Column { .. } | Case::Scale { .. } | Case::StatusIgnored
        )
    }
}

/// Every proof of the registry, numbered in registry order.
pub fn proofs() -> Vec<Placed> {
    REGISTRY
        .iter()
        .flat_map(|d| d.proofs.iter().map(move |p| (d.kind, p)))
        .enumerate()
        .map(|(slot, (kind, proof))| Placed { kind, proof, slot })
        .collect()
}

fn doc_lines(lines: &str, indent: &str, field: &str) -> String {
    lines
        .split('\n')
        .map(|l| format!("{indent}/// {}\n", l.replace("{field}", field)))
        .collect()
}

/// The fixture's source; `without` leaves out the marker lines of the proof in that slot (its
/// field stays), so a test can compare the CRD with and without them.
pub fn source(proofs: &[Placed], without: Option<usize>) -> String {
    let mut out = String::from(
        "//! Generated from the marker registry: one slot per proof.\n\nuse operator_gen_runtime::prelude::*;\nuse serde::{Deserialize, Serialize};\n",
    );
    out.push_str(HELPERS);
    let lines_of = |p: &Placed| {
        if without == Some(p.slot) {
            ""
        } else {
            p.proof.lines
        }
    };
    let mut roots: Vec<(String, Vec<&Placed>)> = Vec::new();
    for p in proofs {
        let kind = p.crd_kind();
        match roots.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, ps)) => ps.push(p),
            None => roots.push((kind, vec![p])),
        }
    }
    for (kind, members) in &roots {
        let mut root_docs = format!("/// {kind} holds one slot per marker proof.\n");
        for p in members.iter().filter(|p| p.on_root()) {
            let lines = lines_of(p);
            if !lines.is_empty() {
                root_docs.push_str(&doc_lines(lines, "", &format!("{}.f", p.slot_name())));
            }
        }
        let status = if kind == KIND {
            ", status = \"ProofStatus\""
        } else {
            ""
        };
        out.push_str(&format!(
            "\n{root_docs}#[derive(CustomResource, Serialize, Deserialize)]\n#[k8s(group = \"{GROUP}\", version = \"{VERSION}\", kind = \"{kind}\"{status})]\npub struct {kind}Spec {{\n"
        ));
        for p in members {
            out.push_str(&format!(
                "    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub {}: Option<P{}>,\n",
                p.slot_name(),
                p.slot
            ));
        }
        out.push_str("}\n");
    }
    for p in proofs {
        let n = p.slot;
        let lines = if p.on_root() { "" } else { lines_of(p) };
        let ty = p.proof.ty;
        let declared = ["struct ", "enum "]
            .iter()
            .find_map(|k| ty.strip_prefix(k).map(|rest| (k.trim(), rest)));
        let field_ty = match declared {
            Some((keyword, body)) => {
                out.push_str(&format!(
                    "\n/// The type proof {n} stands on.\n{}#[derive(Schema, Serialize, Deserialize)]\npub {keyword} T{n} {}\n",
                    doc_lines(lines, "", "f"),
                    body.trim()
                ));
                format!("T{n}")
            }
            None => ty.to_string(),
        };
        let field_docs = if declared.is_some() {
            String::new()
        } else {
            doc_lines(lines, "    ", "f")
        };
        let optional = if field_ty.starts_with("Option<") {
            "    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n"
        } else {
            ""
        };
        out.push_str(&format!(
            "\n/// Slot {n}: {}.\n#[derive(Schema, Serialize, Deserialize)]\npub struct P{n} {{\n{field_docs}{optional}    pub f: {field_ty},\n}}\n",
            p.kind.name()
        ));
    }
    out
}
