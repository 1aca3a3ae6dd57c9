//! The engine's diagnostics: located problems in the project's sources, and why a run stopped.

use std::path::Path;

use operator_gen_codegen::ir::Loc;

use crate::error::Error;

/// A located problem in a source file: codegen's diagnostic, printed `file:line:column: message`.
pub use operator_gen_codegen::diag::Diagnostic;

/// A problem at `loc` in `file` (its start when `loc` is unknown).
pub(crate) fn located(file: &Path, loc: Option<Loc>, message: String) -> Diagnostic {
    let loc = loc.unwrap_or_default();
    Diagnostic::in_file(file, loc.line, loc.column, message)
}

/// Why a stage of the pipeline stopped: its diagnostics, and whether one of them is about a type
/// path that names nothing the scanned crates define or operator-gen knows.
#[derive(Debug, Default)]
pub(crate) struct Stopped {
    pub diagnostics: Vec<Diagnostic>,
    pub type_not_found: bool,
}

impl From<Vec<Diagnostic>> for Stopped {
    fn from(diagnostics: Vec<Diagnostic>) -> Stopped {
        Stopped {
            diagnostics,
            type_not_found: false,
        }
    }
}

impl Stopped {
    /// The command's error: one diagnostic a line, then `note` when a type was not found (it
    /// may be in a crate that could not be looked for, and the note says why).
    pub(crate) fn into_error(self, note: Option<&str>) -> Error {
        let error = Error::from(self.diagnostics);
        match note {
            Some(note) if self.type_not_found => Error::msg(format!("{error}\nnote: {note}")),
            _ => error,
        }
    }
}
