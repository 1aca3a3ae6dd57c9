//! Diagnostics: the one type every part of the generator reports a problem with, and the sink
//! that collects them so one run reports every problem it finds, not only the first.
//!
//! A [`Diagnostic`] is a message (the problem and the fix, one line) with whatever locates it:
//! the file, the line and column, the index of the marker it is about, the type it was found
//! in. Diagnostics cross threads (the CLI scans files in parallel), so they hold no compiler
//! span: a front end that needs one (the derive, for `compile_error!`) keeps it beside the
//! diagnostic as the [`Diagnostics`] anchor.
//!
//! This module is the bottom layer of the crate: it uses no other module of it.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// A position in a source file, 1-based line and 0-based column as `proc_macro2` reports them.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Loc {
    pub line: usize,
    pub column: usize,
}

/// One problem: its message and whatever is known of where it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostic {
    /// The problem and the fix, one line.
    pub message: String,
    /// The file the problem is in, as the user should see it.
    pub file: Option<PathBuf>,
    /// Where in that file (or in the derive's input).
    pub loc: Option<Loc>,
    /// The index of the marker the problem is about, in the list handed to the emitter.
    pub marker: Option<usize>,
    /// The type the problem was found in.
    pub in_type: Option<String>,
}

impl Diagnostic {
    /// A problem known by its message alone.
    pub fn new(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    /// A problem at `line` and 0-based `column` of `file`.
    pub fn in_file(
        file: impl Into<PathBuf>,
        line: usize,
        column: usize,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::new(message)
            .with_file(file)
            .at(Some(Loc { line, column }))
    }

    /// The same problem, at `loc` when it is known (a known location is kept otherwise).
    pub fn at(mut self, loc: Option<Loc>) -> Diagnostic {
        if loc.is_some() {
            self.loc = loc;
        }
        self
    }

    /// The same problem, in `file`.
    pub fn with_file(mut self, file: impl Into<PathBuf>) -> Diagnostic {
        self.file = Some(file.into());
        self
    }

    /// The same problem, about the marker at `index`.
    pub fn on_marker(mut self, index: usize) -> Diagnostic {
        self.marker = Some(index);
        self
    }

    /// The same problem, found in type `name`.
    pub fn in_type(mut self, name: impl Into<String>) -> Diagnostic {
        self.in_type = Some(name.into());
        self
    }

    /// The 1-based line, 0 when unknown.
    pub fn line(&self) -> usize {
        self.loc.unwrap_or_default().line
    }

    /// The 0-based column, 0 when unknown.
    pub fn column(&self) -> usize {
        self.loc.unwrap_or_default().column
    }
}

/// With a file: `file:line:column: message`, the column 1-based as editors count it (an
/// unknown position prints as line 0, column 1). Without a file but in a type:
/// `Type: message`. Otherwise the message alone.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, &self.in_type) {
            (Some(file), _) => write!(
                f,
                "{}:{}:{}: {}",
                file.display(),
                self.line(),
                self.column() + 1,
                self.message
            ),
            (None, Some(in_type)) => write!(f, "{in_type}: {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Diagnostic {}

impl From<String> for Diagnostic {
    fn from(message: String) -> Diagnostic {
        Diagnostic::new(message)
    }
}

impl From<&str> for Diagnostic {
    fn from(message: &str) -> Diagnostic {
        Diagnostic::new(message)
    }
}

/// The sink diagnostics are collected in while work goes on; [`Diagnostics::check`] ends the
/// collection and says whether the work's result may be used.
///
/// Each diagnostic may carry an anchor of type `A` that stays out of [`Diagnostic`]: the derive
/// keeps the compiler span of each problem there (spans cannot cross threads, diagnostics can).
#[derive(Clone, Debug)]
pub struct Diagnostics<A = ()> {
    found: Vec<(Diagnostic, A)>,
}

impl<A> Default for Diagnostics<A> {
    fn default() -> Self {
        Diagnostics { found: Vec::new() }
    }
}

impl Diagnostics {
    /// An empty sink of problems without anchors.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a problem.
    pub fn push(&mut self, diagnostic: impl Into<Diagnostic>) {
        self.found.push((diagnostic.into(), ()));
    }
}

impl<A> Diagnostics<A> {
    /// Adds a problem with its anchor.
    pub fn push_anchored(&mut self, anchor: A, diagnostic: impl Into<Diagnostic>) {
        self.found.push((diagnostic.into(), anchor));
    }

    /// Adds every problem `other` collected, in order.
    pub fn append(&mut self, other: Diagnostics<A>) {
        self.found.extend(other.found);
    }

    /// Whether no problem was found so far.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// How many problems were found so far.
    pub fn len(&self) -> usize {
        self.found.len()
    }

    /// The problems found so far, in the order they were found.
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.found.iter().map(|(d, _)| d)
    }

    /// Ends the collection: `Ok` when nothing was found, else every problem in order.
    #[must_use = "the problems found are lost unless they are reported"]
    pub fn check(self) -> Result<(), Vec<Diagnostic>> {
        if self.found.is_empty() {
            Ok(())
        } else {
            Err(self.found.into_iter().map(|(d, _)| d).collect())
        }
    }

    /// Ends the collection keeping the anchors: `Ok` when nothing was found.
    #[must_use = "the problems found are lost unless they are reported"]
    pub fn check_anchored(self) -> Result<(), Vec<(Diagnostic, A)>> {
        if self.found.is_empty() {
            Ok(())
        } else {
            Err(self.found)
        }
    }
}

/// Every problem with its anchor, in the order found.
impl<A> IntoIterator for Diagnostics<A> {
    type Item = (Diagnostic, A);
    type IntoIter = std::vec::IntoIter<(Diagnostic, A)>;
    fn into_iter(self) -> Self::IntoIter {
        self.found.into_iter()
    }
}

impl<D: Into<Diagnostic>> Extend<D> for Diagnostics {
    fn extend<I: IntoIterator<Item = D>>(&mut self, iter: I) {
        self.found.extend(iter.into_iter().map(|d| (d.into(), ())));
    }
}

impl<D: Into<Diagnostic>> FromIterator<D> for Diagnostics {
    fn from_iter<I: IntoIterator<Item = D>>(iter: I) -> Self {
        let mut sink = Diagnostics::new();
        sink.extend(iter);
        sink
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crosses_threads<T: Send + Sync>() {}

    #[test]
    fn diagnostics_cross_threads() {
        crosses_threads::<Diagnostic>();
        crosses_threads::<Diagnostics>();
    }

    #[test]
    fn a_file_diagnostic_prints_as_editors_read_it() {
        let d = Diagnostic::in_file("src/api.rs", 12, 4, "unknown marker `+foo`; remove it");
        assert_eq!(
            d.to_string(),
            "src/api.rs:12:5: unknown marker `+foo`; remove it"
        );
        let unplaced = Diagnostic::new("no kind").with_file("src/lib.rs");
        assert_eq!(unplaced.to_string(), "src/lib.rs:0:1: no kind");
    }

    #[test]
    fn a_type_diagnostic_names_the_type() {
        let d = Diagnostic::new("bad field").in_type("FooSpec");
        assert_eq!(d.to_string(), "FooSpec: bad field");
        assert_eq!(Diagnostic::new("plain").to_string(), "plain");
    }

    #[test]
    fn at_keeps_a_known_location() {
        let here = Loc { line: 3, column: 1 };
        let d = Diagnostic::new("x").at(Some(here)).at(None);
        assert_eq!(d.loc, Some(here));
    }

    #[test]
    fn check_reports_every_problem_in_order() {
        let mut sink = Diagnostics::new();
        assert!(sink.is_empty());
        sink.push("first");
        sink.extend(["second", "third"]);
        let found = sink.check().expect_err("three problems");
        let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["first", "second", "third"]);
        assert_eq!(Diagnostics::<()>::new().check(), Ok(()));
    }

    #[test]
    fn anchors_stay_beside_their_diagnostics() {
        let mut sink: Diagnostics<u32> = Diagnostics::default();
        sink.push_anchored(7, "a");
        let mut more = Diagnostics::default();
        more.push_anchored(9, "b");
        sink.append(more);
        assert_eq!(sink.len(), 2);
        let found = sink.check_anchored().expect_err("two problems");
        let anchors: Vec<(u32, &str)> = found
            .iter()
            .map(|(d, a)| (*a, d.message.as_str()))
            .collect();
        assert_eq!(anchors, [(7, "a"), (9, "b")]);
    }
}
