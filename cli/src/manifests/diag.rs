//! The engine's diagnostics: located problems in the project's sources, and why a run stopped.

use std::path::{Path, PathBuf};

use operator_gen_codegen::ir::Loc;

use crate::error::Error;

/// A located problem in a source file.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file.display(),
            self.line,
            self.column + 1,
            self.message
        )
    }
}

/// A problem at `loc` in `file` (its start when `loc` is unknown).
pub(crate) fn located(file: &Path, loc: Option<Loc>, message: String) -> Diagnostic {
    let loc = loc.unwrap_or_default();
    Diagnostic {
        file: file.to_path_buf(),
        line: loc.line,
        column: loc.column,
        message,
    }
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
        let lines: Vec<String> = self.diagnostics.iter().map(ToString::to_string).collect();
        let text = lines.join("\n");
        match note {
            Some(note) if self.type_not_found => Error::msg(format!("{text}\nnote: {note}")),
            _ => Error::msg(text),
        }
    }
}
