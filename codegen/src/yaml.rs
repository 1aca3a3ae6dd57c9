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
        Value::String(s) if s.contains('\n') && block_allowed(s) => {
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
        Value::String(s) if s.contains('\n') && block_allowed(s) => literal(out, s, indent + 2),
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

/// Whether libyaml writes `s` as a literal block: not when a character needs an escape (a tab,
/// a control, U+FEFF, U+FFFE, U+FFFF), a space ends a line or the string; then it is quoted.
fn block_allowed(s: &str) -> bool {
    !s.ends_with(' ')
        && !s.contains(LINE_SEPARATORS)
        && !s.contains(" \n")
        && s.chars().all(|c| {
            c == '\n'
                || (' '..='~').contains(&c)
                || (c >= '\u{a0}' && !matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}'))
        })
}

fn literal(out: &mut String, s: &str, indent: usize) {
    let chomp = if s.ends_with('\n') {
        // keep: more than one break ends it, or nothing but breaks is in it (clipping would
        // leave an empty string)
        if s.ends_with("\n\n") || s.trim_end_matches('\n').is_empty() {
            "+"
        } else {
            ""
        }
    } else {
        "-"
    };
    // libyaml gives the indentation when the first line starts with a space or is empty
    let lead = if s.starts_with([' ', '\n']) { "2" } else { "" };
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
    if looks_like_other_type(s) || s.contains(LINE_SEPARATORS) {
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

/// U+2028 and U+2029, which YAML readers take for line breaks anywhere but in an escape: a
/// string holding one is double-quoted with it escaped (`\L`, `\P`).
const LINE_SEPARATORS: [char; 2] = ['\u{2028}', '\u{2029}'];

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether a YAML 1.1 or 1.2 reader would read `s`, written plain, as something other than
/// this string: a boolean (1.1's y/n/yes/no/on/off/true/false, any case), a null (`~`, `null`),
/// an integer or a float of either version (signs, `_`, `0x`, `0o`, `0b`, octal `0777`,
/// exponents, sexagesimal `1:20`, `.inf`, `.nan`), a 1.1 timestamp, or 1.1's `=` and `<<` keys.
fn looks_like_other_type(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "yes", "n", "no", "true", "false", "on", "off", "null", "~", "=", "<<",
    ];
    let lower = s.to_ascii_lowercase();
    if WORDS.contains(&lower.as_str()) {
        return true;
    }
    // what follows reads numbers and dates, which start with a sign, a digit, a dot or an
    // underscore
    if !s.starts_with(|c: char| c.is_ascii_digit() || "+-._".contains(c)) {
        return false;
    }
    if is_timestamp(s) {
        return true;
    }
    let signed = s.strip_prefix(['-', '+']).unwrap_or(s);
    if [".inf", ".nan"].contains(&signed.to_ascii_lowercase().as_str()) {
        return true;
    }
    if is_sexagesimal(signed) {
        return true;
    }
    let t = s.replace('_', "");
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(&t);
    if unsigned.is_empty() {
        return false;
    }
    if unsigned.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    let radix = |prefix: &str, digit: fn(&char) -> bool| {
        unsigned
            .strip_prefix(prefix)
            .is_some_and(|d| !d.is_empty() && d.chars().all(|c| digit(&c)))
    };
    if radix("0x", char::is_ascii_hexdigit)
        || radix("0o", |c| ('0'..='7').contains(c))
        || radix("0b", |c| *c == '0' || *c == '1')
    {
        return true;
    }
    let float_chars = unsigned
        .chars()
        .all(|c| c.is_ascii_digit() || ".eE+-".contains(c));
    float_chars && unsigned.chars().any(|c| c.is_ascii_digit()) && unsigned.parse::<f64>().is_ok()
}

/// YAML 1.1's sexagesimal integers and floats (unsigned here): `190:20:30`, `1:20.5`; the first
/// part digits (and `_`), each further part one digit or two below 60, the last one of a
/// float followed by `.` and digits.
fn is_sexagesimal(s: &str) -> bool {
    let mut parts = s.split(':');
    let first = parts.next().unwrap_or_default();
    if !first.starts_with(|c: char| c.is_ascii_digit())
        || !first.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return false;
    }
    let rest: Vec<&str> = parts.collect();
    let Some((last, middle)) = rest.split_last() else {
        return false;
    };
    let base60 = |p: &str| match p.as_bytes() {
        [a] => a.is_ascii_digit(),
        [a, b] => (b'0'..=b'5').contains(a) && b.is_ascii_digit(),
        _ => false,
    };
    let (last, fraction) = last.split_once('.').unwrap_or((last, ""));
    middle.iter().all(|p| base60(p))
        && base60(last)
        && fraction.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// YAML 1.1's timestamps: `2001-12-14`, or a date with one- or two-digit month and day, then
/// `T`, `t` or spaces and tabs, a time `h:mm:ss` with an optional fraction, and an optional
/// zone (`Z`, `+5`, `-05:00`, spaces and tabs before it allowed).
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |from: usize, min: usize, max: usize| -> Option<usize> {
        let n = b[from.min(b.len())..]
            .iter()
            .take(max)
            .take_while(|c| c.is_ascii_digit())
            .count();
        (n >= min).then_some(from + n)
    };
    let lit = |at: usize, c: u8| -> Option<usize> { (b.get(at) == Some(&c)).then_some(at + 1) };
    // the date alone: `yyyy-mm-dd`, two-digit month and day
    let date_only = b.len() == 10
        && b.iter().enumerate().all(|(k, c)| {
            if k == 4 || k == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    if date_only {
        return true;
    }
    let date = || -> Option<usize> {
        let i = digits(0, 4, 4)?;
        let i = digits(lit(i, b'-')?, 1, 2)?;
        digits(lit(i, b'-')?, 1, 2)
    };
    let Some(i) = date() else {
        return false;
    };
    if i == b.len() {
        return false;
    }
    let mut i = i;
    if matches!(b[i], b'T' | b't') {
        i += 1;
    } else {
        let n = b[i..]
            .iter()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count();
        if n == 0 {
            return false;
        }
        i += n;
    }
    let time = || -> Option<usize> {
        let i = digits(i, 1, 2)?;
        let i = lit(i, b':')?;
        let i = digits(i, 2, 2)?;
        let i = lit(i, b':')?;
        let mut i = digits(i, 2, 2)?;
        if b.get(i) == Some(&b'.') {
            i = digits(i + 1, 0, usize::MAX)?;
        }
        Some(i)
    };
    let Some(mut i) = time() else {
        return false;
    };
    i += b[i..]
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t'))
        .count();
    if i == b.len() {
        // spaces after the time belong to a zone
        return !matches!(b.last(), Some(b' ' | b'\t'));
    }
    if b[i] == b'Z' {
        return i + 1 == b.len();
    }
    if !matches!(b[i], b'+' | b'-') {
        return false;
    }
    let Some(mut i) = digits(i + 1, 1, 2) else {
        return false;
    };
    if b.get(i) == Some(&b':') {
        let Some(j) = digits(i + 1, 2, 2) else {
            return false;
        };
        i = j;
    }
    i == b.len()
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

    /// Multi-line strings as controller-gen v0.21.0 writes them: a tab, or a space ending a line
    /// or the string, keeps a string out of a literal block (double-quoted instead), a first
    /// line that is empty or starts with a space gets the indentation indicator, and a `---`
    /// cut's trailing newline is kept.
    #[test]
    fn multi_line_strings_follow_libyaml() {
        let v = json!({
            "tab": "A.\n  indented\n\ttabbed\n\n    code",
            "lead": "\nA.",
            "kept": "A.\n",
            "space": "A. \nB.",
            "trailing": "A.\nB. ",
        });
        let want = "---\nkept: |\n  A.\nlead: |2-\n\n  A.\nspace: \"A. \\nB.\"\ntab: \"A.\\n  indented\\n\\ttabbed\\n\\n    code\"\ntrailing: \"A.\\nB. \"\n";
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

    /// Strings a YAML 1.1 or 1.2 reader would read as another type, generated over the forms
    /// of each kind, come out quoted; look-alikes that are strings in both stay plain.
    #[test]
    fn every_string_of_another_type_is_quoted() {
        let mut other: Vec<String> = Vec::new();
        for word in ["y", "yes", "n", "no", "true", "false", "on", "off", "null"] {
            let upper = word.to_uppercase();
            let title = format!("{}{}", &upper[..1], &word[1..]);
            let mixed: String = word
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if i % 2 == 1 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            other.extend([word.to_string(), upper, title, mixed]);
        }
        other.extend(["~", "=", "<<"].map(String::from));
        for sign in ["", "-", "+"] {
            for n in [
                "0",
                "12",
                "0777",
                "0o17",
                "0x1F",
                "0xff",
                "0b101",
                "1_000",
                "0x_1F",
                "1:20",
                "190:20:30",
                "190:20:30.15",
                "1.5",
                "0.",
                ".5",
                "1e3",
                "12e03",
                "1.5E-3",
                "1_0.5",
                ".inf",
                ".Inf",
                ".INF",
                "6.8523015e+5",
            ] {
                other.push(format!("{sign}{n}"));
            }
        }
        other.extend([".nan", ".NaN", ".NAN"].map(String::from));
        for date in [
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14 21:59:43.10 -5",
        ] {
            other.push(date.to_string());
        }
        for t in ["T", "t", " ", " \t"] {
            for zone in ["", "Z", " Z", "+5", "-05:00", " -5"] {
                other.push(format!("1970-1-1{t}0:00:00{zone}"));
                other.push(format!("1970-01-01{t}00:00:00.123{zone}"));
            }
        }
        for s in &other {
            let written = scalar_string(s, 0, false);
            assert!(
                written.starts_with('"') || written.starts_with('\''),
                "{s:?} is written plain"
            );
        }
        for s in [
            "plain",
            "v1",
            "1.2.3",
            "1e",
            "0x",
            "0xg",
            "0o8",
            "0b2",
            "1:60",
            "1:2:x",
            "yess",
            "nul",
            "onward",
            "infinite",
            ".infx",
            "1970-01-01x",
            "1970-1-1",
            "1970-01-01T00:00",
            "1970-01-01T00:00:00Zx",
            "12-01-01",
            "2001-12-14x",
            "a-2001-12-14",
            "_",
            "1.0.0-rc1",
        ] {
            assert_eq!(scalar_string(s, 0, false), s, "{s:?} is quoted");
        }
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
