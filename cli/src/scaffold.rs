//! The in-memory change set a command builds: whole files and fragments inserted before
//! scaffold marker lines, checked in memory and then committed to disk all or nothing (see
//! [`crate::transaction`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::printer::Printer;
use crate::transaction::{self, Change};

/// What to do when a whole file already exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfExists {
    /// Fail: the file must not exist.
    Error,
    /// Replace it (`--force`).
    Overwrite,
    /// Keep the existing file.
    Skip,
}

#[derive(Debug)]
struct Pending {
    /// The contents on disk before the command, `None` for a new file.
    original: Option<String>,
    content: String,
}

/// A set of changes under one root directory; nothing touches the disk before [`Scaffold::commit`].
#[derive(Debug)]
pub struct Scaffold {
    root: PathBuf,
    files: BTreeMap<PathBuf, Pending>,
    /// Files [`Scaffold::check`] does not parse (Helm templates are text, not YAML).
    unchecked: std::collections::BTreeSet<PathBuf>,
    /// Files to remove.
    removed: std::collections::BTreeSet<PathBuf>,
    /// Directories to remove once the removals leave them empty.
    pruned: std::collections::BTreeSet<PathBuf>,
}

impl Scaffold {
    /// An empty change set rooted at `root`.
    pub fn new(root: &Path) -> Scaffold {
        Scaffold {
            root: root.to_path_buf(),
            files: BTreeMap::new(),
            unchecked: Default::default(),
            removed: Default::default(),
            pruned: Default::default(),
        }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The current contents of `rel`: pending, else on disk, else `None`.
    pub fn read(&mut self, rel: &str) -> Result<Option<String>> {
        let rel = PathBuf::from(rel);
        if let Some(p) = self.files.get(&rel) {
            return Ok(Some(p.content.clone()));
        }
        read_disk(&self.root, &rel)
    }

    /// Whether `rel` exists (pending or on disk).
    pub fn exists(&self, rel: &str) -> bool {
        self.files.contains_key(Path::new(rel)) || self.root.join(rel).exists()
    }

    fn entry(&mut self, rel: &str) -> Result<&mut Pending> {
        let key = PathBuf::from(rel);
        if !self.files.contains_key(&key) {
            let original = read_disk(&self.root, &key)?;
            let content = original.clone().unwrap_or_default();
            self.files
                .insert(key.clone(), Pending { original, content });
        }
        self.files
            .get_mut(&key)
            .ok_or_else(|| Error::msg(format!("internal error: lost pending file {rel}")))
    }

    /// Write the whole file `rel`.
    pub fn file(&mut self, rel: &str, content: String, if_exists: IfExists) -> Result<()> {
        let exists = self.exists(rel);
        if exists {
            match if_exists {
                IfExists::Skip => return Ok(()),
                IfExists::Error => {
                    return Err(Error::msg(format!(
                        "{rel} already exists; remove it or pass --force to overwrite it"
                    )));
                }
                IfExists::Overwrite => {}
            }
        }
        self.entry(rel)?.content = content;
        Ok(())
    }

    /// Insert `fragment` (one or more lines) immediately before the line holding `marker`, with
    /// the marker's indentation, unless the fragment is already in the file.
    pub fn insert(&mut self, rel: &str, marker: &str, fragment: &str) -> Result<()> {
        if !self.exists(rel) {
            return Err(Error::msg(format!(
                "{rel} does not exist, so nothing can be inserted at `{marker}`; restore it from a fresh `operator-gen init`"
            )));
        }
        let pending = self.entry(rel)?;
        pending.content = insert_before_marker(&pending.content, marker, fragment)
            .ok_or_else(|| {
                Error::msg(format!(
                    "{rel} has no `{marker}` line; put the marker back where generated code should go"
                ))
            })?;
        Ok(())
    }

    /// Turn the commented-out line `# <line>` into `<line>` (e.g. `#- ../crd`), keeping its
    /// indentation; a no-op when the line is already active.
    pub fn uncomment(&mut self, rel: &str, line: &str) -> Result<()> {
        let Some(content) = self.read(rel)? else {
            return Ok(());
        };
        let mut changed = false;
        let out: String = content
            .split_inclusive('\n')
            .map(|l| {
                let trimmed = l.trim_start();
                let indent = &l[..l.len() - trimmed.len()];
                match trimmed.strip_prefix('#') {
                    Some(rest) if rest.trim_start().trim_end() == line && !changed => {
                        changed = true;
                        format!(
                            "{indent}{}{}",
                            line,
                            if l.ends_with('\n') { "\n" } else { "" }
                        )
                    }
                    _ => l.to_owned(),
                }
            })
            .collect();
        if changed {
            self.entry(rel)?.content = out;
        }
        Ok(())
    }

    /// Remove the file `rel` (nothing when it does not exist); a pending write of it is dropped.
    pub fn remove(&mut self, rel: &str) {
        let key = PathBuf::from(rel);
        self.files.remove(&key);
        if self.root.join(&key).is_file() {
            self.removed.insert(key);
        }
    }

    /// [`Scaffold::remove`], and then each directory above `rel` (below the root) that the
    /// removals leave empty.
    pub fn remove_pruning(&mut self, rel: &str) {
        self.remove(rel);
        let mut dir = Path::new(rel).parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            self.pruned.insert(d.to_path_buf());
            dir = d.parent();
        }
    }

    /// Whether `rel` is to be removed.
    pub fn is_removed(&self, rel: &str) -> bool {
        self.removed.contains(Path::new(rel))
    }

    /// The inverse of [`Scaffold::insert`]: `fragment` (as inserted before `marker`) taken out
    /// of `rel` again; a no-op when the file or the fragment is not there.
    pub fn remove_inserted(&mut self, rel: &str, marker: &str, fragment: &str) -> Result<()> {
        let Some(content) = self.read(rel)? else {
            return Ok(());
        };
        let out = remove_before_marker(&content, marker, fragment);
        if out != content {
            self.entry(rel)?.content = out;
        }
        Ok(())
    }

    /// The inverse of [`Scaffold::uncomment`]: the active line `<line>` turned back into
    /// `#<line>`, keeping its indentation; a no-op when it is not there.
    pub fn comment(&mut self, rel: &str, line: &str) -> Result<()> {
        let Some(content) = self.read(rel)? else {
            return Ok(());
        };
        let mut changed = false;
        let out: String = content
            .split_inclusive('\n')
            .map(|l| {
                let trimmed = l.trim_start();
                let indent = &l[..l.len() - trimmed.len()];
                if !changed && trimmed.trim_end() == line {
                    changed = true;
                    format!("{indent}#{trimmed}")
                } else {
                    l.to_owned()
                }
            })
            .collect();
        if changed {
            self.entry(rel)?.content = out;
        }
        Ok(())
    }

    /// Leave `rel` out of [`Scaffold::check`]: its text is a template of YAML, not YAML.
    pub fn skip_check(&mut self, rel: &str) {
        self.unchecked.insert(PathBuf::from(rel));
    }

    /// Check every pending file parses: Rust with `syn`, YAML with serde-saphyr.
    pub fn check(&self) -> Result<()> {
        for (rel, pending) in &self.files {
            if self.unchecked.contains(rel) {
                continue;
            }
            let name = rel.to_string_lossy().replace('\\', "/");
            if name.ends_with(".rs") {
                if let Err(refused) = crate::manifests::bounded::with_file(&pending.content, drop) {
                    return Err(Error::msg(refused.in_file(&name, |e| {
                        format!("would not parse as rust ({e}); fix the file or report an operator-gen bug")
                    })));
                }
            } else if (name.ends_with(".yaml") || name.ends_with(".yml"))
                && let Err(e) =
                    serde_saphyr::from_multiple::<serde::de::IgnoredAny>(&pending.content)
            {
                return Err(Error::msg(format!(
                    "{name} would not parse as yaml ({e}); fix the file or report an operator-gen bug"
                )));
            }
        }
        Ok(())
    }

    /// The pending files (path, new contents, whether new), sorted by path.
    pub fn pending(&self) -> impl Iterator<Item = (&Path, &str, bool)> {
        self.files
            .iter()
            .map(|(p, f)| (p.as_path(), f.content.as_str(), f.original.is_none()))
    }

    /// Write every changed file all or nothing through [`crate::transaction::commit`]: a kill
    /// at any point leaves the old tree or, after the next command's recovery, the new one. The
    /// caller holds the project's [`crate::transaction::lock`].
    pub fn commit(self, printer: &Printer) -> Result<()> {
        let changed: Vec<(String, &Pending)> = self
            .files
            .iter()
            .filter(|(_, p)| p.original.as_deref() != Some(p.content.as_str()))
            .map(|(rel, p)| (rel.to_string_lossy().replace('\\', "/"), p))
            .collect();
        let changes: Vec<Change> = changed
            .iter()
            .map(|(rel, p)| Change {
                rel,
                content: &p.content,
            })
            .collect();
        let removed: Vec<String> = self
            .removed
            .iter()
            .map(|rel| rel.to_string_lossy().replace('\\', "/"))
            .collect();
        // deepest first, so a directory emptied by pruning its last subdirectory goes too
        let mut pruned: Vec<String> = self
            .pruned
            .iter()
            .map(|rel| rel.to_string_lossy().replace('\\', "/"))
            .collect();
        pruned.sort_by(|a, b| {
            b.matches('/')
                .count()
                .cmp(&a.matches('/').count())
                .then(a.cmp(b))
        });
        transaction::commit_pruning(&self.root, &changes, &removed, &pruned)?;
        for (rel, pending) in &changed {
            if pending.original.is_none() {
                printer.created(rel)
            } else {
                printer.updated(rel)
            }
        }
        for rel in &removed {
            printer.status("remove", rel);
        }
        Ok(())
    }
}

/// The text of `rel` under `root`, through the gate; Rust refused past the bounded parser's
/// nesting bound, where it is on disk (before any edit moves its lines).
fn read_disk(root: &Path, rel: &Path) -> Result<Option<String>> {
    let text = crate::gate::read_text(&root.join(rel))?;
    if let Some(text) = &text
        && rel.extension().is_some_and(|e| e == "rs")
        && let Err(refused) = crate::manifests::bounded::within_bound(text)
    {
        let name = rel.to_string_lossy().replace('\\', "/");
        return Err(Error::msg(refused.in_file(&name, str::to_owned)));
    }
    Ok(text)
}

/// Single-line fragments with these prefixes join the run of like lines right above the marker
/// in sorted order, the order rustfmt gives `mod` and `use` items.
const SORTED_PREFIXES: &[&str] = &["pub mod ", "pub use ", "mod ", "use "];

/// `content` with `fragment` inserted before the first line whose trimmed text is `marker`
/// (a single `pub mod`/`pub use` line goes to its sorted place in the run of such lines just
/// above it); unchanged when the fragment is already present; `None` when there is no marker.
pub fn insert_before_marker(content: &str, marker: &str, fragment: &str) -> Option<String> {
    let single = fragment.trim();
    if !single.contains('\n')
        && let Some(prefix) = SORTED_PREFIXES.iter().find(|p| single.starts_with(*p))
    {
        return insert_sorted(content, marker, single, prefix);
    }
    let mut out = String::with_capacity(content.len() + fragment.len());
    let mut offset = 0;
    for line in content.split_inclusive('\n') {
        if line.trim() == marker {
            let indent = &line[..line.len() - line.trim_start().len()];
            let block: String = fragment
                .lines()
                .map(|l| {
                    if l.is_empty() {
                        "\n".to_owned()
                    } else {
                        format!("{indent}{l}\n")
                    }
                })
                .collect();
            if content.contains(&block) {
                return Some(content.to_owned());
            }
            out.push_str(&content[..offset]);
            out.push_str(&block);
            out.push_str(&content[offset..]);
            return Some(out);
        }
        offset += line.len();
    }
    None
}

/// The inverse of [`insert_before_marker`]: `content` without `fragment`. A one-line fragment
/// is the last line above the marker whose trimmed text is the fragment's (the first such line
/// anywhere when the marker is gone); a block is the fragment's lines with the marker's
/// indentation, found last above the marker. `content` unchanged when the fragment is not there.
pub fn remove_before_marker(content: &str, marker: &str, fragment: &str) -> String {
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let at = lines.iter().position(|l| l.trim() == marker);
    let above = at.unwrap_or(lines.len());
    let wanted: Vec<&str> = fragment.trim_end_matches('\n').lines().collect();
    let indent = at
        .map(|i| &lines[i][..lines[i].len() - lines[i].trim_start().len()])
        .unwrap_or("");
    let matches_at = |start: usize| {
        start + wanted.len() <= above
            && wanted.iter().enumerate().all(|(k, w)| {
                let line = lines[start + k].trim_end_matches(['\n', '\r']);
                if wanted.len() == 1 {
                    line.trim() == w.trim()
                } else if w.is_empty() {
                    line.is_empty()
                } else {
                    line.strip_prefix(indent) == Some(*w)
                }
            })
    };
    let found = if at.is_some() {
        (0..above).rev().find(|&i| matches_at(i))
    } else {
        (0..above).find(|&i| matches_at(i))
    };
    match found {
        Some(start) if !wanted.is_empty() => {
            let mut out = String::with_capacity(content.len());
            for (i, l) in lines.iter().enumerate() {
                if i < start || i >= start + wanted.len() {
                    out.push_str(l);
                }
            }
            out
        }
        _ => content.to_owned(),
    }
}

fn insert_sorted(content: &str, marker: &str, line: &str, prefix: &str) -> Option<String> {
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let at = lines.iter().position(|l| l.trim() == marker)?;
    if lines.iter().any(|l| l.trim() == line) {
        return Some(content.to_owned());
    }
    let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
    let mut start = at;
    while start > 0 && lines[start - 1].trim_start().starts_with(prefix) {
        start -= 1;
    }
    let pos = (start..at).find(|&i| lines[i].trim() > line).unwrap_or(at);
    let mut out = String::with_capacity(content.len() + line.len() + 1);
    for l in &lines[..pos] {
        out.push_str(l);
    }
    out.push_str(indent);
    out.push_str(line);
    out.push('\n');
    for l in &lines[pos..] {
        out.push_str(l);
    }
    Some(out)
}

/// Everything but directories under `dir` (files, symbolic links not followed, and FIFOs,
/// devices and sockets, which the gate refuses when they are read), by their path relative to
/// `root` with `/`, leaving out the entries of `root` itself named in `skip`; a name that is not
/// UTF-8 is refused.
pub fn files_under(root: &Path, dir: &Path, skip: &[&str]) -> Result<BTreeMap<String, PathBuf>> {
    fn walk(
        root: &Path,
        dir: &Path,
        skip: &[&str],
        out: &mut BTreeMap<String, PathBuf>,
    ) -> Result<()> {
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io("read", dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("read", dir, e))?;
            let path = entry.path();
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let Some(rel) = rel.to_str().map(|r| r.replace('\\', "/")) else {
                return Err(Error::msg(format!(
                    "{}: its name is not UTF-8, so operator-gen cannot name it among the project's files; rename it (or move it out of the project), then run the command again",
                    path.display()
                )));
            };
            if dir == root && skip.contains(&rel.as_str()) {
                continue;
            }
            let kind = entry.file_type().map_err(|e| Error::io("read", &path, e))?;
            if kind.is_dir() {
                walk(root, &path, skip, out)?;
            } else {
                // a FIFO, device or socket too: reading it says why it cannot be read
                out.insert(rel, path);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(root, dir, skip, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_lines_are_sorted_like_rustfmt() {
        let text = "//! doc\n\npub mod b;\npub mod d;\n// +m\n";
        let once = insert_before_marker(text, "// +m", "pub mod c;").expect("marker");
        assert_eq!(
            once,
            "//! doc\n\npub mod b;\npub mod c;\npub mod d;\n// +m\n"
        );
        let first = insert_before_marker(text, "// +m", "pub mod a;").expect("marker");
        assert_eq!(
            first,
            "//! doc\n\npub mod a;\npub mod b;\npub mod d;\n// +m\n"
        );
        let last = insert_before_marker(text, "// +m", "pub mod e;").expect("marker");
        assert!(last.ends_with("pub mod d;\npub mod e;\n// +m\n"));
        assert_eq!(
            insert_before_marker(&once, "// +m", "pub mod c;").as_deref(),
            Some(once.as_str())
        );
    }

    #[test]
    fn removing_undoes_inserting() {
        let texts = [
            "//! doc\n\npub mod b;\npub mod d;\n// +m\n",
            "fn main() {\n    a();\n    // +m\n}\n",
            "resources:\n- x.yaml\n# +m\n",
        ];
        for text in texts {
            for fragment in [
                "pub mod a;",
                "pub mod c;",
                "pub mod e;",
                "b();\nc();",
                "- y.yaml",
            ] {
                let marker = if text.contains("# +m") {
                    "# +m"
                } else {
                    "// +m"
                };
                let inserted = insert_before_marker(text, marker, fragment).expect("marker");
                assert_ne!(inserted, text);
                assert_eq!(remove_before_marker(&inserted, marker, fragment), text);
            }
        }
        // what was already there before the fragment stays
        assert_eq!(
            remove_before_marker("x();\n// +m\n", "// +m", "y();"),
            "x();\n// +m\n"
        );
        // without the marker the fragment's line still goes
        assert_eq!(
            remove_before_marker("a\npub mod c;\n", "// +m", "pub mod c;"),
            "a\n"
        );
    }

    #[test]
    fn inserts_once_with_indentation() {
        let text = "fn main() {\n    // +m\n}\n";
        let once = insert_before_marker(text, "// +m", "a();\nb();").expect("marker");
        assert_eq!(once, "fn main() {\n    a();\n    b();\n    // +m\n}\n");
        let twice = insert_before_marker(&once, "// +m", "a();\nb();").expect("marker");
        assert_eq!(once, twice);
        assert!(insert_before_marker(text, "// +other", "x").is_none());
    }

    #[test]
    fn commit_writes_atomically() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut s = Scaffold::new(dir.path());
        s.file("a/b.txt", "hello\n".into(), IfExists::Error)
            .expect("file");
        s.file("c.txt", "# +m\n".into(), IfExists::Error)
            .expect("file");
        s.insert("c.txt", "# +m", "x").expect("insert");
        s.commit(&Printer::new(crate::printer::Verbosity::Quiet))
            .expect("commit");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a/b.txt")).expect("read"),
            "hello\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("c.txt")).expect("read"),
            "x\n# +m\n"
        );
        let mut s = Scaffold::new(dir.path());
        assert!(s.file("c.txt", String::new(), IfExists::Error).is_err());
    }
}
