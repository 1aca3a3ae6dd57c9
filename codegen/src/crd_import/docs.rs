//! Descriptions as doc lines that the source scan reads back into the same description, or,
//! where Go's comment text cannot hold one, its closest form and a note saying so.

use super::error::Note;

/// The doc lines of `text`, a description at `path`.
pub fn lines(text: &str, path: &str, notes: &mut Vec<Note>) -> Vec<String> {
    let mut escaped = false;
    let out: Vec<String> = text
        .split('\n')
        .map(|l| {
            if l.trim_start().starts_with('+') {
                // a doc line starting with `+` is a marker: keep the text, not its meaning
                escaped = true;
                format!("\\{}", l.trim_start())
            } else {
                l.to_string()
            }
        })
        .collect();
    if escaped {
        notes.push(Note::new(
            path,
            "a description line starting with `+` would read as a marker: written with a `\\` before it",
        ));
    }
    let cleaned: Vec<String> = out.iter().map(|l| l.replace('\r', "")).collect();
    let read_back = crate::schema::description(&cleaned).unwrap_or_default();
    if !escaped && read_back != text {
        notes.push(Note::new(
            path,
            "the description is not as Go's comment text leaves one (trailing spaces, runs of blank lines, a line starting with `TODO` or `---`): written as a doc comment gives it",
        ));
    }
    cleaned
}
