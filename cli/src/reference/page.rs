//! What both pages share: where they go, the script that writes them, the note each starts with,
//! and the text of a table cell.

/// Where the pages go, relative to the workspace root.
pub const DIR: &str = "docs/src/reference";

/// The script that writes the pages, named in the pages' header and in the staleness test.
pub const SCRIPT: &str = "hack/docs/reference.sh";

/// The comment each page starts with, below its title: where it comes from and how to rewrite
/// it.
pub(super) fn generated_note(source: &str) -> String {
    format!(
        "<!-- Generated from {source} by {SCRIPT}: edit those, not this file, then run the script. -->\n"
    )
}

/// Text for a Markdown table cell: one line, with `|` escaped.
pub(super) fn cell(text: &str) -> String {
    text.split("\n\n")
        .map(|para| para.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("<br><br>")
        .replace('|', "\\|")
}
