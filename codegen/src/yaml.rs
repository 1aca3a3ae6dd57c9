//! A YAML emitter for JSON values in the style of Go's yaml.v2, so files match controller-gen's:
//! sorted keys, block style, `|-` for multi-line text, plain scalars folded near column 80.

use serde_json::Value;
use std::cmp::Ordering;
use std::fmt::Write;

const WIDTH: usize = 80;

/// One document, preceded by `---`.
pub fn document(value: &Value) -> String {
    let mut out = String::from("---\n");
    emit_block(&mut out, value, 0);
    out
}

/// yaml.v2's key order: digit runs compare as numbers, letters by code point, and a non-letter
/// sorts before a letter.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    // compares char by char without collecting: keys are sorted at every level of every file
    let (mut ai, mut bi) = (a.chars().peekable(), b.chars().peekable());
    loop {
        let (Some(&ca), Some(&cb)) = (ai.peek(), bi.peek()) else {
            return ai.count().cmp(&bi.count());
        };
        if ca.is_ascii_digit() && cb.is_ascii_digit() {
            let mut na = String::new();
            while let Some(c) = ai.next_if(char::is_ascii_digit) {
                na.push(c);
            }
            let mut nb = String::new();
            while let Some(c) = bi.next_if(char::is_ascii_digit) {
                nb.push(c);
            }
            let (ta, tb) = (na.trim_start_matches('0'), nb.trim_start_matches('0'));
            let ord = ta.len().cmp(&tb.len()).then(ta.cmp(tb));
            if ord != Ordering::Equal {
                return ord;
            }
            continue;
        }
        if ca != cb {
            let (la, lb) = (ca.is_alphabetic(), cb.is_alphabetic());
            if la != lb {
                return if la {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
            }
            return ca.cmp(&cb);
        }
        ai.next();
        bi.next();
    }
}

fn sorted(map: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| natural_cmp(a.0, b.0));
    entries
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// Emits a value that starts on a fresh line at `indent`.
fn emit_block(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in sorted(map) {
                pad(out, indent);
                emit_entry(out, k, v, indent);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                pad(out, indent);
                emit_item(out, item, indent);
            }
        }
        other => {
            pad(out, indent);
            let _ = writeln!(out, "{}", inline_scalar(other, indent));
        }
    }
}

/// `key: value` with the cursor already at the key's indentation.
fn emit_entry(out: &mut String, key: &str, value: &Value, indent: usize) {
    out.push_str(&scalar_string(key, indent, false));
    out.push(':');
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            emit_block(out, value, indent + 2);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            emit_block(out, value, indent);
        }
        Value::String(s) if s.contains('\n') => {
            out.push(' ');
            literal(out, s, indent + 2);
        }
        other => {
            out.push(' ');
            let start = out.rfind('\n').map_or(0, |i| i + 1);
            let column = out.len() - start;
            let text = match other {
                Value::String(s) => fold_or_quote(s, indent + 2, column),
                _ => inline_scalar(other, indent + 2),
            };
            let _ = writeln!(out, "{text}");
        }
    }
}

/// `- item` with the cursor at the dash's indentation.
fn emit_item(out: &mut String, value: &Value, indent: usize) {
    out.push_str("- ");
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (n, (k, v)) in sorted(map).into_iter().enumerate() {
                if n > 0 {
                    pad(out, indent + 2);
                }
                emit_entry(out, k, v, indent + 2);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    pad(out, indent + 2);
                }
                emit_item(out, item, indent + 2);
            }
        }
        Value::String(s) if s.contains('\n') => literal(out, s, indent + 2),
        other => {
            let column = indent + 2;
            let text = match other {
                Value::String(s) => fold_or_quote(s, indent + 2, column),
                _ => inline_scalar(other, indent + 2),
            };
            let _ = writeln!(out, "{text}");
        }
    }
}

fn literal(out: &mut String, s: &str, indent: usize) {
    let chomp = if s.ends_with('\n') {
        if s.ends_with("\n\n") { "+" } else { "" }
    } else {
        "-"
    };
    let lead = if s.starts_with(' ') { "2" } else { "" };
    let _ = writeln!(out, "|{lead}{chomp}");
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        if !line.is_empty() {
            pad(out, indent);
            out.push_str(line);
        }
        out.push('\n');
    }
}

fn inline_scalar(value: &Value, indent: usize) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => scalar_string(s, indent, false),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

fn number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or_default();
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// A string as a plain scalar when YAML reads it back as the same string, quoted otherwise.
fn scalar_string(s: &str, _indent: usize, _fold: bool) -> String {
    if s.is_empty() {
        return "\"\"".into();
    }
    if looks_like_other_type(s) {
        return double_quoted(s);
    }
    if plain_allowed(s) {
        return s.to_string();
    }
    if s.chars().all(|c| !c.is_control()) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    double_quoted(s)
}

fn fold_or_quote(s: &str, indent: usize, column: usize) -> String {
    let text = scalar_string(s, indent, true);
    if text.starts_with(['"', '\'']) {
        return text;
    }
    // fold at a space once the line has passed the width, as libyaml does
    let mut out = String::with_capacity(s.len() + s.len() / WIDTH * (indent + 1));
    let mut col = column;
    let mut prev = None;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ' '
            && col > WIDTH
            && prev.is_some_and(|p| p != ' ')
            && chars.peek().is_some_and(|n| *n != ' ')
        {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', indent));
            col = indent;
        } else {
            out.push(c);
            col += 1;
        }
        prev = Some(c);
    }
    out
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn looks_like_other_type(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~",
        ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", ".nan", ".NaN", ".NAN",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    // what follows reads numbers, which start with a sign, a digit, a dot or an underscore
    if !s.starts_with(|c: char| c.is_ascii_digit() || "+-._".contains(c)) {
        return false;
    }
    let t = s.replace('_', "");
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(&t);
    if unsigned.is_empty() {
        return false;
    }
    if unsigned.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    if let Some(hex) = unsigned.strip_prefix("0x") {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    if let Some(bin) = unsigned.strip_prefix("0b") {
        return !bin.is_empty() && bin.chars().all(|c| c == '0' || c == '1');
    }
    let float_chars = unsigned
        .chars()
        .all(|c| c.is_ascii_digit() || ".eE+-".contains(c));
    float_chars && unsigned.chars().any(|c| c.is_ascii_digit()) && unsigned.parse::<f64>().is_ok()
}

fn plain_allowed(s: &str) -> bool {
    // bytes: every character this looks for is ASCII but the C1 controls (U+0080 to U+009F,
    // `C2 80` to `C2 9F` in UTF-8) and the byte order mark (`EF BB BF`)
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return true;
    };
    if first == b' ' || b.last() == Some(&b' ') || b.last() == Some(&b':') {
        return false;
    }
    if b"[]{},#&*!|>'\"%@`".contains(&first) {
        return false;
    }
    if matches!(first, b'-' | b'?' | b':') && b.get(1).is_none_or(|&c| c == b' ') {
        return false;
    }
    let mut prev = 0u8;
    for (i, &c) in b.iter().enumerate() {
        let next = b.get(i + 1).copied();
        let stops = (prev == b':' && c == b' ')
            || (prev == b' ' && c == b'#')
            || c < 0x20
            || c == 0x7f
            || (c == 0xc2 && next.is_some_and(|n| (0x80..=0x9f).contains(&n)))
            || (c == 0xef && next == Some(0xbb) && b.get(i + 2) == Some(&0xbf));
        if stops {
            return false;
        }
        prev = c;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn block_style_matches_go_yaml() {
        let v = json!({"b": [{"name": "x", "a": 1}], "a": {"c": "true", "d": "", "e": "{}", "f": "line1\nline2"}, "z": []});
        let want = "---\na:\n  c: \"true\"\n  d: \"\"\n  e: '{}'\n  f: |-\n    line1\n    line2\nb:\n- a: 1\n  name: x\nz: []\n";
        assert_eq!(document(&v), want);
    }

    #[test]
    fn long_plain_scalars_fold() {
        let v = json!({"properties": {"x": {"description": "This tests that markers that are allowed on both fields and types are applied to fields"}}});
        let out = document(&v);
        assert!(out.contains("description: This tests that markers that are allowed on both fields and types\n      are applied to fields\n"), "{out}");
    }

    #[test]
    fn natural_order() {
        assert_eq!(natural_cmp("v2", "v10"), Ordering::Less);
        assert_eq!(natural_cmp("Z", "a"), Ordering::Less);
        assert_eq!(natural_cmp("a-b", "ab"), Ordering::Less);
        assert_eq!(
            natural_cmp("x-kubernetes-map-type", "xValidation"),
            Ordering::Less
        );
    }

    #[test]
    fn ambiguous_strings_are_quoted() {
        for s in ["124", "True", "null", "1.5", "0x1F", "-3"] {
            assert!(looks_like_other_type(s), "{s}");
        }
        for s in ["v1", "abc", "1.2.3", "forty-two"] {
            assert!(!looks_like_other_type(s), "{s}");
        }
        assert_eq!(scalar_string("!(a)", 0, false), "'!(a)'");
    }

    #[test]
    fn plain_scalars_are_the_ones_yaml_reads_back() {
        for s in [
            "a:b",
            "a#b",
            "-a",
            "?x",
            ":x",
            "é",
            "aé",
            "a\u{a0}b",
            "a\u{100}b",
            "x",
        ] {
            assert!(plain_allowed(s), "{s:?} can be plain");
        }
        for s in [
            "a: b",
            "a #b",
            "a:",
            "-",
            "- a",
            "?",
            ": x",
            " a",
            "a ",
            "[a",
            "{a",
            "#a",
            "&a",
            "*a",
            "!a",
            "|a",
            ">a",
            "'a",
            "\"a",
            "%a",
            "@a",
            "`a",
            ",a",
            "a\tb",
            "a\nb",
            "a\u{7f}",
            "a\u{85}b",
            "a\u{9f}",
            "a\u{feff}",
            "\u{feff}a",
        ] {
            assert!(!plain_allowed(s), "{s:?} must be quoted");
        }
    }
}
