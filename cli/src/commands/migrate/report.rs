//! The migration report: everything `alpha migrate` did not translate one to one, by section,
//! printed and written to `MIGRATION.md` in the output.

use std::collections::BTreeMap;

/// The report's sections, in the order they are written.
pub const SECTIONS: &[(&str, &str)] = &[
    (
        "markers",
        "Markers dropped: controller-gen ignores them, or they mean nothing in Rust",
    ),
    ("types", "Types and fields not translated one to one"),
    (
        "code",
        "Go code left to port (kept as comments in the Rust files)",
    ),
    ("project", "PROJECT and layout"),
];

/// What the report collects: per section, `(where, what)` lines in the order found.
#[derive(Debug, Default)]
pub struct Report {
    entries: BTreeMap<&'static str, Vec<(String, String)>>,
}

impl Report {
    /// Add a line to `section` (one of [`SECTIONS`]).
    pub fn add(&mut self, section: &'static str, at: impl Into<String>, what: impl Into<String>) {
        let line = (at.into(), what.into());
        let list = self.entries.entry(section).or_default();
        if !list.contains(&line) {
            list.push(line);
        }
    }

    /// The lines of one section.
    pub fn lines(&self, section: &str) -> &[(String, String)] {
        self.entries
            .get(section)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The report as Markdown.
    pub fn render(&self, input: &str) -> String {
        let mut out = format!(
            "# Migration report\n\nMigrated from the kubebuilder project in `{input}` by `operator-gen alpha migrate`.\nEverything below was not translated one to one and needs a look.\n"
        );
        for (key, title) in SECTIONS {
            let lines = self.lines(key);
            out.push_str(&format!("\n## {title}\n\n"));
            if lines.is_empty() {
                out.push_str("Nothing.\n");
            }
            for (at, what) in lines {
                out.push_str(&format!("- `{at}`: {what}\n"));
            }
        }
        out
    }
}
