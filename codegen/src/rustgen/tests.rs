use super::*;

fn sample() -> RustFile {
    RustFile {
        header: "// Copyright 2026 The Authors.".into(),
        inner_doc: Docs::prose("The Ship API (fleet.example.com/v1)."),
        uses: vec![
            "operator_gen_runtime::prelude::*".into(),
            "serde::{Deserialize, Serialize}".into(),
        ],
        items: vec![
            Item::Struct(Struct {
                name: "ShipSpec".into(),
                doc: Docs {
                    prose: vec![
                        "ShipSpec is the desired state.".into(),
                        "\r".into(),
                        "Second.  ".into(),
                    ],
                    markers: vec!["+kubebuilder:subresource:status".into()],
                },
                derives: vec!["CustomResource".into(), "Serialize".into()],
                attrs: vec![format!(
                    "k8s(group = {}, kind = \"Ship\")",
                    str_lit("fleet.example.com")
                )],
                serde: vec!["rename_all = \"camelCase\"".into()],
                body: Body::Named(vec![
                    Field {
                        ident: "r#type".into(),
                        ty: "Option<String>".into(),
                        doc: Docs {
                            prose: vec![],
                            markers: vec!["+kubebuilder:validation:MinLength=2".into()],
                        },
                        attrs: vec![],
                        serde: vec![
                            "default".into(),
                            "skip_serializing_if = \"Option::is_none\"".into(),
                        ],
                    },
                    Field {
                        ident: "url".into(),
                        ty: "String".into(),
                        serde: vec!["rename = \"URL\"".into()],
                        ..Default::default()
                    },
                ]),
            }),
            Item::Struct(Struct {
                name: "Quantity".into(),
                derives: vec!["Clone".into()],
                body: Body::Tuple(vec!["String".into()]),
                ..Default::default()
            }),
            Item::Struct(Struct {
                name: "Empty".into(),
                body: Body::Named(vec![]),
                ..Default::default()
            }),
            Item::Enum(Enum {
                name: "Mode".into(),
                doc: Docs::prose("How it sails."),
                derives: vec!["Serialize".into()],
                attrs: vec![],
                serde: vec![],
                variants: vec![
                    Variant {
                        name: "Fast".into(),
                        attrs: vec!["default".into()],
                        serde: vec!["rename = \"fast\"".into()],
                        ..Default::default()
                    },
                    Variant {
                        name: "Towed".into(),
                        doc: Docs::prose("By another."),
                        body: Body::Tuple(vec!["String".into()]),
                        ..Default::default()
                    },
                    Variant {
                        name: "Rowed".into(),
                        body: Body::Named(vec![Field {
                            ident: "oars".into(),
                            ty: "u32".into(),
                            ..Default::default()
                        }]),
                        ..Default::default()
                    },
                ],
            }),
            Item::Raw("impl Empty {}\n\n".into()),
        ],
    }
}

#[test]
fn renders_every_shape() {
    let want = r#"// Copyright 2026 The Authors.
//! The Ship API (fleet.example.com/v1).

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// ShipSpec is the desired state.
///
/// Second.
///
/// +kubebuilder:subresource:status
#[derive(CustomResource, Serialize)]
#[k8s(group = "fleet.example.com", kind = "Ship")]
#[serde(rename_all = "camelCase")]
pub struct ShipSpec {
    /// +kubebuilder:validation:MinLength=2
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    #[serde(rename = "URL")]
    pub url: String,
}

#[derive(Clone)]
pub struct Quantity(pub String);

pub struct Empty {}

/// How it sails.
#[derive(Serialize)]
pub enum Mode {
    #[default]
    #[serde(rename = "fast")]
    Fast,
    /// By another.
    Towed(String),
    Rowed {
        oars: u32,
    },
}

impl Empty {}
"#;
    let got = sample().render();
    assert_eq!(got, want, "\n{got}");
    assert_eq!(
        sample().render(),
        got,
        "rendering twice gives the same text"
    );
}

#[test]
fn string_literals_escape_what_rust_needs() {
    assert_eq!(str_lit("a\"b\\c\nd"), r#""a\"b\\c\nd""#);
    assert_eq!(str_lit("é"), "\"é\"");
}

#[test]
fn an_empty_file_renders_empty() {
    assert_eq!(RustFile::default().render(), "");
    let only_uses = RustFile {
        uses: vec!["std::fmt".into()],
        ..Default::default()
    };
    assert_eq!(only_uses.render(), "use std::fmt;\n");
}
