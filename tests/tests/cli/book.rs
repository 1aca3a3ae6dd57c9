//! The book in `docs/`: its generated reference pages are current, it builds with mdBook, every
//! internal link and anchor of the built book resolves, every `{{#include file:anchor}}` names
//! an existing file and anchor, every marker controller-gen v0.21 lists in its marker help is in
//! the marker reference, and every command of the CLI, with each of its flags, is in the command
//! reference.

use operator_gen::reference::{self, CommandDoc};
use operator_gen_tests::{tools, workspace};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// The mdBook version `.ci/run` installs into the tools cache.
const MDBOOK_VERSION: &str = "0.5.4";

fn docs() -> PathBuf {
    workspace().join("docs")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The line that installs mdBook where the tests and `.ci/run` look for it.
fn mdbook_install() -> String {
    let root = tools::tools_bin()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    format!(
        "cargo install --locked --no-default-features --features search --root {} mdbook@{MDBOOK_VERSION}",
        root.display()
    )
}

/// The mdBook binary: the tools cache's, else one on `PATH`; `None` (after reporting the skip,
/// or failing in CI) when neither runs.
#[track_caller]
fn mdbook() -> Option<PathBuf> {
    let cached = tools::tools_bin().join("mdbook");
    for candidate in [cached.clone(), PathBuf::from("mdbook")] {
        let runs = Command::new(&candidate)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if runs {
            return Some(candidate);
        }
    }
    tools::skip_or_fail(
        &format!(
            "mdbook not found at {} nor on PATH: the book was not built",
            cached.display()
        ),
        &mdbook_install(),
    );
    None
}

/// The book built by `mdbook build docs` into a new temporary directory (the tree stays as it
/// is), which goes when the returned value is dropped.
fn build_book(mdbook: &Path) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("operator-gen-book-")
        .tempdir()
        .unwrap_or_else(|e| panic!("cannot create a temporary directory: {e}"));
    let out = Command::new(mdbook)
        .arg("build")
        .arg(docs())
        .arg("--dest-dir")
        .arg(dir.path())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", mdbook.display()));
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // an error mdBook logs fails the build even where it exits 0
    assert!(
        out.status.success() && !log.contains("ERROR"),
        "`mdbook build docs` failed:\n{log}"
    );
    dir
}

#[test]
fn generated_reference_pages_are_current() {
    let dir = workspace().join(reference::DIR);
    let mut stale = Vec::new();
    for (name, want) in reference::pages() {
        let path = dir.join(name);
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have != want {
            let line = have
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| have.lines().count().min(want.lines().count()))
                + 1;
            stale.push(format!(
                "{}/{name} differs from what the CLI and the marker registry give now (first at line {line})",
                reference::DIR
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "{}\nfix: run {} and commit the pages",
        stale.join("\n"),
        reference::SCRIPT
    );
}

#[test]
fn the_book_builds() {
    let Some(mdbook) = mdbook() else { return };
    tools::record_ran(tools::Ran::Mdbook);
    let book = build_book(&mdbook);
    for page in [
        "index.html",
        "reference/commands.html",
        "reference/markers.html",
    ] {
        assert!(
            book.path().join(page).is_file(),
            "the built book has no {page}"
        );
    }
}

/// Every `href` of every HTML page of the built book that points inside the book: the page
/// exists, and its `#fragment` is an `id` of that page.
#[test]
fn every_internal_link_and_anchor_of_the_built_book_resolves() {
    let Some(mdbook) = mdbook() else { return };
    tools::record_ran(tools::Ran::Mdbook);
    let book = build_book(&mdbook);
    let root = book.path();
    let pages = html_files(root);
    let mut ids: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = read(page);
        // 404.html sets `<base href="/">`: its links resolve from the book's root
        let base = match attribute_values(&text, "<base", "href").first() {
            Some(b) if b.starts_with('/') => root.join(b.trim_start_matches('/')),
            _ => page.parent().unwrap_or(root).to_path_buf(),
        };
        for href in attribute_values(&text, "<a", "href") {
            if is_external(&href) {
                continue;
            }
            let (path, fragment) = match href.split_once('#') {
                Some((p, f)) => (p.to_string(), Some(f.to_string())),
                None => (href.clone(), None),
            };
            let target = if path.is_empty() {
                page.clone()
            } else {
                let mut t = normalize(&base.join(percent_decode(&path)));
                if path.ends_with('/') || t.is_dir() {
                    t = t.join("index.html");
                }
                t
            };
            checked += 1;
            let shown = page
                .strip_prefix(root)
                .unwrap_or(page)
                .display()
                .to_string();
            if !target.is_file() {
                broken.push(format!("{shown}: `{href}`: no such page"));
                continue;
            }
            let Some(fragment) = fragment.filter(|f| !f.is_empty()) else {
                continue;
            };
            if target.extension().is_some_and(|e| e == "html") {
                let target_ids = ids.entry(target.clone()).or_insert_with(|| {
                    let text = read(&target);
                    attribute_values(&text, "", "id").into_iter().collect()
                });
                if !target_ids.contains(&percent_decode(&fragment)) {
                    broken.push(format!(
                        "{shown}: `{href}`: {} has no id `{fragment}`",
                        target.strip_prefix(root).unwrap_or(&target).display()
                    ));
                }
            }
        }
    }
    println!(
        "checked {checked} internal links in {} pages of the built book",
        pages.len()
    );
    assert!(
        checked > 0 && pages.iter().any(|p| p.ends_with("reference/markers.html")),
        "the built book has no links or no marker reference"
    );
    assert!(
        broken.is_empty(),
        "{} broken internal links:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

/// Every `{{#include path}}`, `{{#include path:anchor}}` (and `rustdoc_include`) in the book's
/// sources names an existing file and, for an anchor, a file holding `ANCHOR: anchor` and
/// `ANCHOR_END: anchor` lines.
#[test]
fn every_include_of_the_book_resolves() {
    let src = docs().join("src");
    let mut broken = Vec::new();
    let mut checked = Vec::new();
    for page in files_with_extension(&src, "md") {
        let text = read(&page);
        let shown = page
            .strip_prefix(&src)
            .unwrap_or(&page)
            .display()
            .to_string();
        for (path, anchor) in includes(&text) {
            let file = normalize(&page.parent().unwrap_or(&src).join(&path));
            checked.push(format!("{shown}: {path}"));
            let Ok(body) = std::fs::read_to_string(&file) else {
                broken.push(format!(
                    "{shown}: `{{{{#include {path}}}}}`: no file {}",
                    file.display()
                ));
                continue;
            };
            if let Some(anchor) = anchor {
                for mark in ["ANCHOR", "ANCHOR_END"] {
                    if !has_anchor(&body, mark, &anchor) {
                        broken.push(format!(
                            "{shown}: `{path}:{anchor}`: {} has no `{mark}: {anchor}` line",
                            file.display()
                        ));
                    }
                }
            }
        }
    }
    println!("checked {} includes in docs/src", checked.len());
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// Markers controller-gen v0.21 lists in its help that the marker reference may leave out, each
/// with its reason. Empty: every listed marker is documented.
const NOT_IN_REFERENCE: &[(&str, &str)] = &[];

/// The generators whose markers controller-gen's help lists: every one that reads markers.
const GENERATORS: &[&str] = &[
    "crd",
    "rbac:roleName=manager-role",
    "webhook",
    "object",
    "applyconfiguration",
];

#[test]
fn every_marker_controller_gen_lists_is_in_the_marker_reference() {
    let Some(controller_gen) = tools::go_tool("controller-gen") else {
        return;
    };
    tools::record_ran(tools::Ran::GoPeers);
    let out = Command::new(&controller_gen)
        .args(GENERATORS)
        .arg("-ww")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", controller_gen.display()));
    // the help goes to stderr
    let help = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "controller-gen {} -ww failed: {help}",
        GENERATORS.join(" ")
    );
    // `-ww` prints each marker as a line `+<name> <target>`, its help indented below it
    let listed: BTreeSet<&str> = help
        .lines()
        .filter_map(|l| l.strip_prefix('+'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for name in [
        "kubebuilder:validation:Minimum",
        "kubebuilder:rbac",
        "kubebuilder:object:root",
    ] {
        assert!(
            listed.contains(name),
            "controller-gen's help no longer lists `+{name}`: the parse of `-ww` is out of date"
        );
    }
    let page = read(&workspace().join(reference::DIR).join("markers.md"));
    let excused: BTreeMap<&str, &str> = NOT_IN_REFERENCE.iter().copied().collect();
    let mut present = 0;
    let mut missing = Vec::new();
    let mut stale_exceptions = Vec::new();
    for name in &listed {
        let found = mentions(&page, &format!("+{name}"));
        present += usize::from(found);
        match (found, excused.get(name)) {
            (false, None) => missing.push(format!("+{name}")),
            (true, Some(_)) => stale_exceptions.push(format!("+{name}")),
            _ => {}
        }
    }
    for (name, reason) in &excused {
        println!("not in the marker reference: +{name}: {reason}");
    }
    println!(
        "compared {} markers controller-gen v0.21 lists with the marker reference: {present} present, {} excused",
        listed.len(),
        excused.len()
    );
    assert!(
        missing.is_empty(),
        "markers controller-gen lists that docs/src/reference/markers.md lacks (add them to the registry, or to NOT_IN_REFERENCE with the reason): {}",
        missing.join(", ")
    );
    assert!(
        stale_exceptions.is_empty(),
        "NOT_IN_REFERENCE excuses markers the reference now has: {}",
        stale_exceptions.join(", ")
    );
}

/// Every command of the CLI has its section in the command reference, and every flag and
/// argument of the command is in that section.
#[test]
fn every_command_and_flag_is_in_the_command_reference() {
    let page = read(&workspace().join(reference::DIR).join("commands.md"));
    let commands = reference::commands();
    let lines: Vec<String> = commands.iter().map(CommandDoc::line).collect();
    for expected in [
        "operator-gen init",
        "operator-gen create api",
        "operator-gen create webhook",
        "operator-gen delete api",
        "operator-gen edit",
        "operator-gen manifests",
        "operator-gen alpha generate",
        "operator-gen alpha update",
        "operator-gen envtest use",
        "operator-gen version",
        "operator-gen completion",
    ] {
        assert!(
            lines.iter().any(|l| l == expected),
            "the CLI has no `{expected}`"
        );
    }
    let mut missing = Vec::new();
    for c in &commands {
        let heading = format!("## `{}` {{#{}}}\n", c.line(), c.anchor());
        let Some(start) = page.find(&heading) else {
            missing.push(format!("no section `{}`", heading.trim_end()));
            continue;
        };
        let rest = &page[start + heading.len()..];
        let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
        for arg in c.command.get_arguments() {
            if arg.get_id() == "help" || (!c.path.is_empty() && arg.is_global_set()) {
                continue;
            }
            let shown = match arg.get_long() {
                Some(long) => format!("`--{long}`"),
                None => format!("`{}`", arg.get_id().as_str().to_ascii_uppercase()),
            };
            if !section.contains(&shown) {
                missing.push(format!("{}: {shown}", c.line()));
            }
        }
    }
    println!(
        "compared {} commands with the command reference",
        commands.len()
    );
    assert!(
        missing.is_empty(),
        "docs/src/reference/commands.md lacks:\n{}\nfix: run {}",
        missing.join("\n"),
        reference::SCRIPT
    );
}

/// Whether `text` names `name` whole: followed by no character that could continue a name.
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        text[i + name.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-'))
    })
}

fn html_files(root: &Path) -> Vec<PathBuf> {
    files_with_extension(root, "html")
}

fn files_with_extension(root: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The values of `attr="..."` in the tags of `text` starting with `tag` (any tag when empty),
/// with `&amp;` and `&quot;` decoded.
fn attribute_values(text: &str, tag: &str, attr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let needle = format!(" {attr}=\"");
    let mut rest = text;
    while let Some(i) = rest.find(&needle) {
        let start = i + needle.len();
        let Some(len) = rest[start..].find('"') else {
            break;
        };
        let open = rest[..i].rfind('<').unwrap_or(0);
        let in_tag = !rest[open..i].contains('>');
        if in_tag && (tag.is_empty() || rest[open..].starts_with(tag)) {
            out.push(
                rest[start..start + len]
                    .replace("&quot;", "\"")
                    .replace("&amp;", "&"),
            );
        }
        rest = &rest[start + len..];
    }
    out
}

fn is_external(href: &str) -> bool {
    href.contains("://")
        || href.starts_with("//")
        || href.starts_with("mailto:")
        || href.starts_with("javascript:")
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `path` with `.` and `..` taken out, without touching the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The `{{#include path[:anchor]}}` and `{{#rustdoc_include ...}}` links of a page, escaped
/// ones (`\{{#include`) left out: each file and, when the part after `:` is not a line range,
/// its anchor.
fn includes(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for directive in ["{{#include ", "{{#rustdoc_include "] {
        for (i, _) in text.match_indices(directive) {
            if text[..i].ends_with('\\') {
                continue;
            }
            let body = &text[i + directive.len()..];
            let Some(end) = body.find("}}") else {
                continue;
            };
            let arg = body[..end].trim();
            let (path, anchor) = match arg.split_once(':') {
                Some((p, a)) => {
                    let is_range = a.chars().all(|c| c.is_ascii_digit() || c == ':');
                    (p, (!is_range).then(|| a.to_string()))
                }
                None => (arg, None),
            };
            out.push((path.to_string(), anchor));
        }
    }
    out
}

/// Whether `body` has a line with `<mark>: <anchor>` (mdBook's `ANCHOR:` and `ANCHOR_END:`).
fn has_anchor(body: &str, mark: &str, anchor: &str) -> bool {
    let needle = format!("{mark}:");
    body.lines().any(|line| {
        line.match_indices(&needle).any(|(i, _)| {
            // `ANCHOR:` is also the tail of `ANCHOR_END:`; take whole marks only
            let whole =
                !line[..i].ends_with('_') && !line[..i].ends_with(|c: char| c.is_alphanumeric());
            let name: String = line[i + needle.len()..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
                .collect();
            whole && name == anchor
        })
    })
}

#[test]
fn the_include_and_link_helpers_read_what_mdbook_writes() {
    assert_eq!(
        includes("a {{#include ../x.rs:main}} b \\{{#include y.rs}} {{#include z.rs:2:5}}"),
        vec![
            ("../x.rs".to_string(), Some("main".to_string())),
            ("z.rs".to_string(), None)
        ]
    );
    let body = "// ANCHOR: main\nfn main() {}\n// ANCHOR_END: main\n";
    assert!(has_anchor(body, "ANCHOR", "main"));
    assert!(has_anchor(body, "ANCHOR_END", "main"));
    assert!(!has_anchor("// ANCHOR_END: main\n", "ANCHOR", "main"));
    assert!(!has_anchor(body, "ANCHOR", "mai"));
    let html = r##"<a class="x" href="a.html#b&amp;c">x</a><div id="top"><base href="/">"##;
    assert_eq!(attribute_values(html, "<a", "href"), vec!["a.html#b&c"]);
    assert_eq!(attribute_values(html, "", "id"), vec!["top"]);
    assert_eq!(attribute_values(html, "<base", "href"), vec!["/"]);
    assert!(mentions("`+kubebuilder:rbac:groups`", "+kubebuilder:rbac"));
    assert!(!mentions(
        "`+kubebuilder:webhookconfiguration`",
        "+kubebuilder:webhook"
    ));
    assert_eq!(
        normalize(Path::new("/a/b/../c/./d.html")),
        PathBuf::from("/a/c/d.html")
    );
}
