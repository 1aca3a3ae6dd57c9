//! All user-facing output: status lines and warnings go to stderr, command output to stdout.

use std::io::{IsTerminal, Write};

use crate::error::Error;

/// How much the printer says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verbosity {
    /// Status lines, warnings, hints and errors.
    #[default]
    Normal,
    /// Only warnings and errors.
    Quiet,
}

/// The one place that writes to the terminal.
#[derive(Debug)]
pub struct Printer {
    verbosity: Verbosity,
    color: bool,
}

impl Default for Printer {
    fn default() -> Self {
        Printer::new(Verbosity::Normal)
    }
}

impl Printer {
    /// A printer; colours only when stderr is a terminal and `NO_COLOR` is unset.
    pub fn new(verbosity: Verbosity) -> Printer {
        let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Printer { verbosity, color }
    }

    fn status_line(&self, verb: &str, color: &str, what: &str) {
        if self.verbosity == Verbosity::Quiet {
            return;
        }
        let verb = format!("{verb:>12}");
        let line = if self.color {
            format!("\x1b[1;{color}m{verb}\x1b[0m {what}")
        } else {
            format!("{verb} {what}")
        };
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }

    /// A file was written for the first time.
    pub fn created(&self, path: &str) {
        self.status_line("create", "32", path);
    }

    /// An existing file was changed.
    pub fn updated(&self, path: &str) {
        self.status_line("update", "36", path);
    }

    /// A file was left as it was.
    pub fn unchanged(&self, path: &str) {
        self.status_line("unchanged", "2", path);
    }

    /// Progress: `verb` right-aligned, like cargo.
    pub fn status(&self, verb: &str, what: &str) {
        self.status_line(verb, "32", what);
    }

    /// Something the user should know but that does not stop the command.
    pub fn warn(&self, message: &str) {
        let prefix = if self.color {
            "\x1b[1;33mwarning\x1b[0m"
        } else {
            "warning"
        };
        let _ = writeln!(std::io::stderr().lock(), "{prefix}: {message}");
    }

    /// A hint on what to do next.
    pub fn hint(&self, message: &str) {
        if self.verbosity == Verbosity::Quiet {
            return;
        }
        let _ = writeln!(std::io::stderr().lock(), "{message}");
    }

    /// The command failed.
    pub fn error(&self, error: &Error) {
        let prefix = if self.color {
            "\x1b[1;31merror\x1b[0m"
        } else {
            "error"
        };
        let _ = writeln!(std::io::stderr().lock(), "{prefix}: {error}");
    }

    /// Command output proper (e.g. `version`, `completion`), on stdout.
    pub fn out(&self, text: &str) {
        let _ = write!(std::io::stdout().lock(), "{text}");
    }

    /// Ask a yes/no question on the terminal; `None` when there is no answer to read.
    pub fn ask_yes_no(&self, question: &str) -> Option<bool> {
        loop {
            {
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "{question} [y/n] ");
                let _ = err.flush();
            }
            let mut answer = String::new();
            match std::io::stdin().read_line(&mut answer) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            match answer.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return Some(true),
                "n" | "no" => return Some(false),
                _ => self.warn("please answer y or n"),
            }
        }
    }
}
