//! The book's two generated reference pages: the command reference, written from the clap
//! definitions of [`crate::cli`], and the marker reference, written from codegen's marker
//! registry and its descriptions (`operator_gen_codegen::markers::docs`). `hack/docs/reference.sh`
//! writes both into `docs/src/reference/`; a test fails when either file differs from what these
//! functions return.

mod commands;
mod markers;

pub use commands::{CommandDoc, commands, commands_page};
pub use markers::{attribute_form, markers_page};

/// Where the pages go, relative to the workspace root.
pub const DIR: &str = "docs/src/reference";

/// The script that writes the pages, named in the pages' header and in the staleness test.
pub const SCRIPT: &str = "hack/docs/reference.sh";

/// Each generated page: its file name under [`DIR`] and its text.
pub fn pages() -> Vec<(&'static str, String)> {
    vec![
        ("commands.md", commands_page()),
        ("markers.md", markers_page()),
    ]
}

/// The comment each page starts with, below its title: where it comes from and how to rewrite
/// it.
fn generated_note(source: &str) -> String {
    format!(
        "<!-- Generated from {source} by {SCRIPT}: edit those, not this file, then run the script. -->\n"
    )
}

/// Text for a Markdown table cell: one line, with `|` escaped.
fn cell(text: &str) -> String {
    text.split("\n\n")
        .map(|para| para.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("<br><br>")
        .replace('|', "\\|")
}
