//! The one error type of the CLI: every failure is a single lower-case line naming the problem
//! and the fix.

use operator_gen_codegen::diag::Diagnostic;
use std::path::{Path, PathBuf};

/// A CLI failure. `Display` is the one line the user sees after `error: `.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A complete message: the problem and the fix.
    #[error("{0}")]
    Message(String),
    /// Problems found in the user's sources or markers, one line each, in the order found.
    #[error("{}", lines(.0))]
    Diagnostics(Vec<Diagnostic>),
    /// A filesystem operation failed.
    #[error("cannot {action} {}: {}; {}", path.display(), lower_first(&source.to_string()), io_fix(source.kind()))]
    Io {
        /// What was being done, e.g. `read`.
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A template failed to load or render: a bug in operator-gen, not in the user's input.
    #[error("template {name} failed: {message}; this is a bug in operator-gen, please report it")]
    Template {
        /// The template name under `templates/`.
        name: String,
        /// Tera's report.
        message: String,
    },
}

impl Error {
    /// An error with a complete message.
    pub fn msg(message: impl Into<String>) -> Error {
        Error::Message(message.into())
    }

    /// An IO error on `path`.
    pub fn io(action: &'static str, path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl From<Vec<Diagnostic>> for Error {
    fn from(diagnostics: Vec<Diagnostic>) -> Error {
        Error::Diagnostics(diagnostics)
    }
}

impl From<Diagnostic> for Error {
    fn from(diagnostic: Diagnostic) -> Error {
        Error::Diagnostics(vec![diagnostic])
    }
}

impl From<String> for Error {
    fn from(message: String) -> Error {
        Error::Message(message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Error {
        Error::Message(message.to_owned())
    }
}

/// The CLI's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Each diagnostic as it prints, one a line.
fn lines(diagnostics: &[Diagnostic]) -> String {
    let lines: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
    lines.join("\n")
}

/// The fix an I/O failure calls for, by its kind: a full disk, a read-only file system and a
/// missing permission each need something different of the user.
fn io_fix(kind: std::io::ErrorKind) -> &'static str {
    use std::io::ErrorKind;
    match kind {
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => {
            "the disk is full: free some space on it and run the command again"
        }
        ErrorKind::ReadOnlyFilesystem => {
            "the file system is read-only: remount it writable or work on a copy elsewhere"
        }
        _ => "check the path and its permissions",
    }
}

/// The fix for a tool's failure (git's, say) whose message names the operating system's error
/// for a full disk or a read-only file system, as [`Error::Io`] gives it; `None` for any other.
pub fn os_message_fix(message: &str) -> Option<&'static str> {
    use std::io::ErrorKind;
    [
        ("No space left on device", ErrorKind::StorageFull),
        ("Disk quota exceeded", ErrorKind::QuotaExceeded),
        ("Read-only file system", ErrorKind::ReadOnlyFilesystem),
    ]
    .into_iter()
    .find(|(text, _)| message.contains(text))
    .map(|(_, kind)| io_fix(kind))
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_are_lower_case() {
        let e = Error::io("read", Path::new("x"), std::io::Error::other("Boom"));
        assert_eq!(
            e.to_string(),
            "cannot read x: boom; check the path and its permissions"
        );
    }

    #[test]
    fn io_errors_name_a_full_disk_and_a_read_only_file_system() {
        let full = Error::io(
            "write",
            Path::new("PROJECT"),
            std::io::Error::from(std::io::ErrorKind::StorageFull),
        );
        assert_eq!(
            full.to_string(),
            "cannot write PROJECT: no storage space; the disk is full: free some space on it and run the command again"
        );
        let read_only = Error::io(
            "write",
            Path::new("PROJECT"),
            std::io::Error::from(std::io::ErrorKind::ReadOnlyFilesystem),
        );
        assert!(
            read_only.to_string().ends_with(
                "; the file system is read-only: remount it writable or work on a copy elsewhere"
            ),
            "{read_only}"
        );
    }

    #[test]
    fn a_tools_message_of_a_full_disk_or_a_read_only_file_system_has_their_fix() {
        let full =
            os_message_fix("fatal: unable to write loose object file: No space left on device");
        assert!(
            full.is_some_and(|f| f.starts_with("the disk is full")),
            "{full:?}"
        );
        let read_only =
            os_message_fix("error: unable to create '.git/index.lock': Read-only file system");
        assert!(
            read_only.is_some_and(|f| f.starts_with("the file system is read-only")),
            "{read_only:?}"
        );
        assert_eq!(os_message_fix("fatal: not a git repository"), None);
    }

    #[test]
    fn diagnostics_print_one_a_line() {
        let e = Error::from(vec![
            Diagnostic::in_file("src/api.rs", 3, 4, "unknown marker `+foo`: drop it"),
            Diagnostic::new("no kind found: add #[derive(CustomResource)]"),
        ]);
        assert_eq!(
            e.to_string(),
            "src/api.rs:3:5: unknown marker `+foo`: drop it\nno kind found: add #[derive(CustomResource)]"
        );
    }
}
