//! Checks a crate's module layering: no module reaches, directly or through others, a module
//! that reaches back to it, and no function outside test code is longer than a limit.
//!
//! Built and run by `hack/check-layers.sh`; standard library only, so it needs no Cargo project.
//!
//! The modules are the files reachable from `src/lib.rs`, `src/main.rs` and `src/bin/*.rs`
//! through `mod name;` declarations. A module uses another when its code names a path into it:
//! `crate::a::b`, `super::x`, `self::child::y`, or `child::y` for a child it declares, grouped
//! imports (`use crate::{a, b::c}`) included. Items under `#[cfg(test)]` (test modules, test-only
//! helpers) are left out, and so are comments and string literals. An inline `mod x { .. }`
//! counts as part of its file's module.
//!
//! A function's length counts its lines from the `fn` keyword to the closing brace.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut max_fn_lines = 100usize;
    let mut allow_long: Vec<PathBuf> = Vec::new();
    let mut dirs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--max-fn-lines" {
            match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => max_fn_lines = n,
                None => {
                    eprintln!("--max-fn-lines needs a number of lines, e.g. --max-fn-lines 100");
                    return ExitCode::from(2);
                }
            }
        } else if arg == "--allow-long" {
            match args.next() {
                Some(prefix) => allow_long.push(PathBuf::from(prefix)),
                None => {
                    eprintln!("--allow-long needs a file or directory, e.g. --allow-long codegen/src/derive");
                    return ExitCode::from(2);
                }
            }
        } else {
            dirs.push(PathBuf::from(arg));
        }
    }
    if dirs.is_empty() {
        eprintln!(
            "usage: check-layers [--max-fn-lines N] [--allow-long PATH]... CRATE_DIR...  (e.g. runtime cli codegen)"
        );
        return ExitCode::from(2);
    }
    let mut failed = false;
    for dir in &dirs {
        let roots = crate_roots(dir);
        if roots.is_empty() {
            eprintln!(
                "{}: no src/lib.rs, src/main.rs or src/bin/*.rs: give a crate's directory",
                dir.display()
            );
            return ExitCode::from(2);
        }
        for root in roots {
            failed |= check_root(&root, max_fn_lines, &allow_long);
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn crate_roots(dir: &Path) -> Vec<PathBuf> {
    let src = dir.join("src");
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .filter(|p| p.is_file())
        .collect();
    if let Ok(entries) = fs::read_dir(src.join("bin")) {
        let mut bins: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        bins.sort();
        roots.extend(bins);
    }
    roots
}

/// One module's file, its text with comments, strings and test items blanked out (newlines kept).
struct Module {
    file: PathBuf,
    code: Vec<char>,
    children: BTreeSet<String>,
}

/// Returns whether the root's tree fails a check; prints what it finds.
fn check_root(root: &Path, max_fn_lines: usize, allow_long: &[PathBuf]) -> bool {
    let mut modules: BTreeMap<String, Module> = BTreeMap::new();
    let mut queue = vec![(String::new(), root.to_path_buf(), true)];
    while let Some((name, file, owns_dir)) = queue.pop() {
        let Ok(text) = fs::read_to_string(&file) else {
            eprintln!("{}: cannot read it", file.display());
            continue;
        };
        let code = strip_tests(&blank(&text));
        let children = declared_modules(&code);
        // `a.rs` keeps its children in `a/`; `lib.rs`, `main.rs` and `mod.rs` beside them
        let dir = if owns_dir {
            file.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            file.with_extension("")
        };
        for child in &children {
            let flat = dir.join(format!("{child}.rs"));
            let nested = dir.join(child).join("mod.rs");
            let (path, owns) = if flat.is_file() {
                (flat, false)
            } else {
                (nested, true)
            };
            if path.is_file() {
                queue.push((join(&name, child), path, owns));
            }
        }
        modules.insert(
            name,
            Module {
                file,
                code,
                children,
            },
        );
    }

    let known: BTreeSet<String> = modules.keys().cloned().collect();
    // edges[a][b] = the first place a names b
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (name, module) in &modules {
        let out = edges.entry(name.clone()).or_default();
        for (line, path) in paths(&module.code) {
            let Some(abs) = absolute(name, &module.children, &path) else {
                continue;
            };
            let target = longest_module(&known, &abs);
            if &target != name {
                out.entry(target)
                    .or_insert_with(|| format!("{}:{line}", module.file.display()));
            }
        }
    }

    let label = |m: &str| {
        if m.is_empty() {
            "crate".to_owned()
        } else {
            m.to_owned()
        }
    };
    println!("{}: {} modules", root.display(), modules.len());
    let mut failed = false;
    for scc in cycles(&edges) {
        failed = true;
        println!(
            "  cycle: {}",
            scc.iter().map(|m| label(m)).collect::<Vec<_>>().join(", ")
        );
        let cycle = one_cycle(&edges, &scc);
        let shortest: Vec<String> = cycle.iter().map(|m| label(m)).collect();
        println!("    e.g. {}; every use inside it:", shortest.join(" -> "));
        for from in &scc {
            for (to, at) in edges[from].iter().filter(|(to, _)| scc.contains(to)) {
                println!("    {} -> {} ({at})", label(from), label(to));
            }
        }
    }
    for module in modules.values() {
        // files whose length is their nature (token emitters that quote one whole item) are
        // named with --allow-long and skipped here; cycles are checked in them all the same
        if allow_long.iter().any(|prefix| module.file.starts_with(prefix)) {
            continue;
        }
        for (line, name, lines) in long_functions(&module.code, max_fn_lines) {
            failed = true;
            println!(
                "  long fn: {}:{line} {name} ({lines} lines, over {max_fn_lines})",
                module.file.display()
            );
        }
    }
    if !failed {
        println!("  no module cycles, no function over {max_fn_lines} lines");
    }
    failed
}

fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}::{child}")
    }
}

/// The text with comments, string and char literals replaced by spaces, newlines kept.
fn blank(text: &str) -> Vec<char> {
    let s: Vec<char> = text.chars().collect();
    let mut out = s.clone();
    let mut i = 0;
    let wipe = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut out[from..to.min(s.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    while i < s.len() {
        let next = s.get(i + 1).copied();
        if s[i] == '/' && next == Some('/') {
            let end = (i..s.len()).find(|&j| s[j] == '\n').unwrap_or(s.len());
            wipe(&mut out, i, end);
            i = end;
        } else if s[i] == '/' && next == Some('*') {
            let (mut j, mut depth) = (i + 2, 1);
            while j < s.len() && depth > 0 {
                if s[j] == '/' && s.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if s[j] == '*' && s.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            wipe(&mut out, i, j);
            i = j;
        } else if s[i] == 'r'
            && matches!(next, Some('#' | '"'))
            && !ident_char(i.checked_sub(1).map(|p| s[p]))
        {
            // raw string: r"..." or r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while s.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if s.get(j) != Some(&'"') {
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= s.len() {
                    break;
                }
                if s[j] == '"' && (0..hashes).all(|h| s.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            wipe(&mut out, i, j);
            i = j;
        } else if s[i] == '"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != '"' {
                j += if s[j] == '\\' { 2 } else { 1 };
            }
            wipe(&mut out, i, j + 1);
            i = j + 1;
        } else if s[i] == '\'' {
            // a char literal ('x', '\n', '\u{1F600}'), or a lifetime ('a), left as it is
            if next == Some('\\') {
                let end = (i + 2..s.len()).find(|&j| s[j] == '\'').unwrap_or(s.len());
                wipe(&mut out, i, end + 1);
                i = end + 1;
            } else if s.get(i + 2) == Some(&'\'') {
                wipe(&mut out, i, i + 3);
                i += 3;
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

fn ident_char(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

fn line_of(code: &[char], at: usize) -> usize {
    code[..at].iter().filter(|&&c| c == '\n').count() + 1
}

/// The code with every item under `#[cfg(test)]` blanked out.
fn strip_tests(code: &[char]) -> Vec<char> {
    let mut out = code.to_vec();
    let text: String = code.iter().collect();
    // char offsets of each `#[cfg(test)]`
    let starts: Vec<usize> = text
        .match_indices("#[cfg(test)]")
        .map(|(byte, _)| text[..byte].chars().count())
        .collect();
    for start in starts {
        let mut j = start + "#[cfg(test)]".len();
        // skip further attributes
        loop {
            while j < code.len() && code[j].is_whitespace() {
                j += 1;
            }
            if code.get(j) == Some(&'#') {
                j = skip_balanced(
                    code,
                    (j..code.len())
                        .find(|&k| code[k] == '[')
                        .unwrap_or(code.len()),
                    '[',
                    ']',
                );
            } else {
                break;
            }
        }
        // the item ends at the first `;` outside brackets, or with its braces
        let mut depth = 0i32;
        while j < code.len() {
            match code[j] {
                '(' | '[' | '<' => depth += 1,
                ')' | ']' | '>' => depth -= 1,
                ';' if depth <= 0 => {
                    j += 1;
                    break;
                }
                '{' if depth <= 0 => {
                    j = skip_balanced(code, j, '{', '}');
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        for c in &mut out[start..j.min(code.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    }
    out
}

/// The index just past the bracket closing the one at `open`.
fn skip_balanced(code: &[char], open: usize, left: char, right: char) -> usize {
    let mut depth = 0;
    let mut j = open;
    while j < code.len() {
        if code[j] == left {
            depth += 1;
        } else if code[j] == right {
            depth -= 1;
            if depth == 0 {
                return j + 1;
            }
        }
        j += 1;
    }
    code.len()
}

/// Identifiers and punctuation, with their positions.
fn tokens(code: &[char]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < code.len() && (code[i].is_alphanumeric() || code[i] == '_') {
                i += 1;
            }
            out.push((start, code[start..i].iter().collect()));
        } else if c == ':' && code.get(i + 1) == Some(&':') {
            out.push((i, "::".to_owned()));
            i += 2;
        } else if c == '\''
            && code
                .get(i + 1)
                .is_some_and(|c| c.is_alphabetic() || *c == '_')
        {
            // a lifetime: not an identifier
            i += 1;
            while i < code.len() && (code[i].is_alphanumeric() || code[i] == '_') {
                i += 1;
            }
        } else if c.is_ascii_digit() {
            while i < code.len() && (code[i].is_alphanumeric() || code[i] == '_' || code[i] == '.')
            {
                i += 1;
            }
        } else if c.is_whitespace() {
            i += 1;
        } else {
            out.push((i, c.to_string()));
            i += 1;
        }
    }
    out
}

/// The names of the modules a file declares with `mod name;`.
fn declared_modules(code: &[char]) -> BTreeSet<String> {
    let toks = tokens(code);
    toks.windows(3)
        .filter(|w| w[0].1 == "mod" && w[2].1 == ";")
        .map(|w| w[1].1.clone())
        .collect()
}

/// Every path the code names (`a::b::c`, grouped imports expanded), with its line; the first
/// segment may be `crate`, `super`, `self` or a name.
fn paths(code: &[char]) -> Vec<(usize, Vec<String>)> {
    let toks = tokens(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let starts_path = toks.get(i + 1).is_some_and(|t| t.1 == "::")
            && is_ident(&toks[i].1)
            && !(i > 0 && toks[i - 1].1 == "::");
        if starts_path {
            let line = line_of(code, toks[i].0);
            let mut found = Vec::new();
            i = path_tree(&toks, i, Vec::new(), &mut found);
            out.extend(found.into_iter().map(|p| (line, p)));
        } else {
            i += 1;
        }
    }
    out
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Reads `seg (:: seg)* (:: { tree, .. })?` from `i`, pushing each full path; returns the index
/// after it.
fn path_tree(
    toks: &[(usize, String)],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        match toks.get(i).map(|t| t.1.as_str()) {
            Some("{") => {
                i += 1;
                loop {
                    match toks.get(i).map(|t| t.1.as_str()) {
                        Some("}") => return i + 1,
                        Some(",") => i += 1,
                        Some(t) if is_ident(t) || t == "{" || t == "*" => {
                            i = path_tree(toks, i, prefix.clone(), out);
                        }
                        Some(_) => i += 1,
                        None => return i,
                    }
                }
            }
            Some("*") => {
                out.push(prefix);
                return i + 1;
            }
            Some(t) if is_ident(t) => {
                if t != "self" || prefix.is_empty() {
                    prefix.push(t.to_owned());
                }
                i += 1;
                if toks.get(i).map(|t| t.1.as_str()) == Some("::") {
                    i += 1;
                } else {
                    out.push(prefix);
                    return i;
                }
            }
            _ => {
                out.push(prefix);
                return i;
            }
        }
    }
}

/// The path from the crate root, or `None` for a path into another crate.
fn absolute(module: &str, children: &BTreeSet<String>, path: &[String]) -> Option<Vec<String>> {
    let mut here: Vec<String> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").map(str::to_owned).collect()
    };
    let first = path.first()?;
    let mut rest = &path[1..];
    match first.as_str() {
        "crate" => here.clear(),
        "self" => {}
        "super" => {
            here.pop();
            while rest.first().is_some_and(|s| s == "super") {
                here.pop();
                rest = &rest[1..];
            }
        }
        name if children.contains(name) => rest = path,
        _ => return None,
    }
    here.extend(rest.iter().cloned());
    Some(here)
}

/// The longest prefix of `path` that names a module.
fn longest_module(known: &BTreeSet<String>, path: &[String]) -> String {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| known.contains(m))
        .unwrap_or_default()
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flat_map(|e| e.keys()) {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                let low = s.low[v].min(s.low[w.as_str()]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w.as_str()) {
                let low = s.low[v].min(s.index[w.as_str()]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                scc.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                s.out.push(scc);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// A shortest cycle through the component's first module, first module repeated at the end.
fn one_cycle(edges: &BTreeMap<String, BTreeMap<String, String>>, scc: &[String]) -> Vec<String> {
    let inside: BTreeSet<&String> = scc.iter().collect();
    let start = &scc[0];
    let mut came_from: BTreeMap<&String, &String> = BTreeMap::new();
    let mut frontier = vec![start];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for v in frontier {
            for w in edges[v].keys().filter(|w| inside.contains(w)) {
                if w == start {
                    let mut cycle = vec![start.clone()];
                    let mut at = v;
                    while at != start {
                        cycle.push(at.clone());
                        at = came_from[at];
                    }
                    cycle.push(start.clone());
                    cycle.reverse();
                    return cycle;
                }
                if !came_from.contains_key(w) {
                    came_from.insert(w, v);
                    next.push(w);
                }
            }
        }
        frontier = next;
    }
    scc.to_vec()
}

/// Functions with a body longer than `max` lines: (line of `fn`, name, lines).
fn long_functions(code: &[char], max: usize) -> Vec<(usize, String, usize)> {
    let toks = tokens(code);
    let mut out = Vec::new();
    for (k, (at, t)) in toks.iter().enumerate() {
        if t != "fn" {
            continue;
        }
        let Some((_, name)) = toks.get(k + 1).filter(|t| is_ident(&t.1)) else {
            continue;
        };
        // the body is the first `{` after the signature, unless a `;` ends it first
        let mut depth = 0i32;
        let mut body = None;
        for (pos, t) in &toks[k + 2..] {
            match t.as_str() {
                "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                ";" if depth == 0 => break,
                "{" if depth == 0 => {
                    body = Some(*pos);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = body else { continue };
        let close = skip_balanced(code, open, '{', '}');
        let lines = line_of(code, close.saturating_sub(1)) - line_of(code, *at) + 1;
        if lines > max {
            out.push((line_of(code, *at), name.clone(), lines));
        }
    }
    out
}
