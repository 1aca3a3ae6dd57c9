//! The book's generated reference pages: the command reference, written from the clap
//! definitions of [`crate::cli`], the template variables, from the commands' context structs,
//! and the marker reference, written from codegen's marker
//! registry and its descriptions (`operator_gen_codegen::markers::docs`). `hack/docs/reference.sh`
//! writes both into `docs/src/reference/`; a test fails when either file differs from what these
//! functions return.

mod commands;
mod markers;
mod page;
mod variables;

pub use commands::{CommandDoc, commands, commands_page};
pub use markers::{attribute_form, markers_page};
pub use page::{DIR, SCRIPT};
pub use variables::variables_page;

/// Each generated page: its file name under [`DIR`] and its text.
pub fn pages() -> Vec<(&'static str, String)> {
    vec![
        ("commands.md", commands_page()),
        ("markers.md", markers_page()),
        ("template-variables.md", variables_page()),
    ]
}
