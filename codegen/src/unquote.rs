//! Double-quoted marker strings, unquoted by Go's rules (`strconv.Unquote`), as controller-gen
//! reads them: `\d` is an error there, not a `d`, so a pattern never silently loses a backslash.

use crate::diag::{Diagnostic, Loc};

/// A problem at byte offset `at` of the text handed to [`double_quoted`]: the literal is one
/// line, so the offset is the diagnostic's column on line 1.
fn fail<T>(at: usize, message: String) -> Result<T, Diagnostic> {
    Err(Diagnostic::new(message).at(Some(Loc {
        line: 1,
        column: at,
    })))
}

/// Reads the Go double-quoted string literal at the start of `raw` (which begins with `"`):
/// returns its value and the bytes it spans, quotes included. Escapes are Go's: `\a \b \f \n \r
/// \t \v \\ \"`, `\xHH`, `\NNN` (octal), `\uHHHH` and `\UHHHHHHHH`; any other escape is an error,
/// as are bytes that do not form UTF-8.
pub fn double_quoted(raw: &str) -> Result<(String, usize), Diagnostic> {
    let bytes = raw.as_bytes();
    if bytes.first() != Some(&b'"') {
        return fail(0, "expected a string starting with `\"`".into());
    }
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let value = String::from_utf8(out).or_else(|_| {
                    fail(
                        0,
                        "the string's \\x or octal escapes do not form UTF-8: write the characters themselves".into(),
                    )
                })?;
                return Ok((value, i + 1));
            }
            b'\n' => {
                return fail(
                    i,
                    "a double-quoted string cannot span lines: write `\\n`".into(),
                );
            }
            b'\\' => {
                let (len, piece) = escape(raw, i)?;
                out.extend_from_slice(&piece);
                i += len;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    fail(
        0,
        "unterminated string starting with \": close it with \"".into(),
    )
}

/// The escape starting with the backslash at `at`: its length in bytes and the bytes it stands for.
fn escape(raw: &str, at: usize) -> Result<(usize, Vec<u8>), Diagnostic> {
    let rest = &raw[at + 1..];
    let Some(c) = rest.chars().next() else {
        return fail(
            at,
            "unterminated string starting with \": close it with \"".into(),
        );
    };
    let simple = match c {
        'a' => Some(0x07),
        'b' => Some(0x08),
        'f' => Some(0x0c),
        'n' => Some(b'\n'),
        'r' => Some(b'\r'),
        't' => Some(b'\t'),
        'v' => Some(0x0b),
        '\\' => Some(b'\\'),
        '"' => Some(b'"'),
        _ => None,
    };
    if let Some(b) = simple {
        return Ok((2, vec![b]));
    }
    let digits = |n: usize, radix: u32| -> Option<u32> {
        let d = rest.get(1..1 + n)?;
        if d.chars().all(|c| c.is_digit(radix)) {
            u32::from_str_radix(d, radix).ok()
        } else {
            None
        }
    };
    match c {
        'x' => match digits(2, 16) {
            Some(v) => Ok((4, vec![v as u8])),
            None => fail(
                at,
                "invalid escape `\\x` in a double-quoted string: write exactly two hex digits, as in `\\x41`".into(),
            ),
        },
        '0'..='7' => match rest.get(..3).filter(|d| d.chars().all(|c| c.is_digit(8))) {
            Some(d) => match u8::from_str_radix(d, 8) {
                Ok(v) => Ok((4, vec![v])),
                Err(_) => fail(
                    at,
                    format!("octal escape `\\{d}` in a double-quoted string is above \\377: write the character itself"),
                ),
            },
            None => fail(
                at,
                "invalid octal escape in a double-quoted string: write exactly three octal digits, as in `\\101`".into(),
            ),
        },
        'u' | 'U' => {
            let n = if c == 'u' { 4 } else { 8 };
            let Some(v) = digits(n, 16) else {
                return fail(
                    at,
                    format!("invalid escape `\\{c}` in a double-quoted string: write exactly {n} hex digits"),
                );
            };
            match char::from_u32(v) {
                Some(ch) => Ok((2 + n, ch.to_string().into_bytes())),
                None => fail(
                    at,
                    format!("escape `\\{c}{v:X}` in a double-quoted string is not a unicode scalar value: write a valid code point"),
                ),
            }
        }
        other => fail(
            at,
            format!(
                "invalid escape `\\{other}` in a double-quoted string (Go's rules, as controller-gen reads it): write `\\\\{other}` for a backslash, or use a backtick string"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &str) -> (String, usize) {
        double_quoted(raw).unwrap_or_else(|e| panic!("{raw}: {e:?}"))
    }

    fn bad(raw: &str) -> String {
        match double_quoted(raw) {
            Ok(v) => panic!("{raw} was accepted as {v:?}"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn go_escapes() {
        assert_eq!(ok(r#""plain""#), ("plain".into(), 7));
        assert_eq!(ok(r#""a\"b" rest"#), ("a\"b".into(), 6));
        assert_eq!(ok(r#""^\\d+$""#).0, r"^\d+$");
        assert_eq!(ok(r#""\a\b\f\n\r\t\v""#).0, "\u{7}\u{8}\u{c}\n\r\t\u{b}");
        assert_eq!(ok(r#""\x41\101\u00e9\U0001F980""#).0, "AAé🦀");
        assert_eq!(ok(r#""\xc3\xa9""#).0, "é");
        assert_eq!(ok("\"é🦀\"").0, "é🦀");
    }

    #[test]
    fn invalid_escapes_are_errors() {
        assert!(bad(r#""^\d+$""#).contains("invalid escape `\\d`"));
        assert!(bad(r#""a\.b""#).contains("invalid escape `\\.`"));
        assert!(bad(r#""it\'s""#).contains("invalid escape `\\'`"));
        assert!(bad(r#""\x4""#).contains("two hex digits"));
        assert!(bad(r#""\12""#).contains("three octal digits"));
        assert!(bad(r#""\400""#).contains("above \\377"));
        assert!(bad(r#""\u12""#).contains("4 hex digits"));
        assert!(bad(r#""\ud800""#).contains("not a unicode scalar value"));
        assert!(bad(r#""\xff""#).contains("do not form UTF-8"));
        assert!(bad(r#""open"#).contains("unterminated"));
        assert!(bad(r#""ends with \"#).contains("unterminated"));
        assert_eq!(
            double_quoted(r#""ab\d""#).map_err(|e| e.loc.map(|l| l.column)),
            Err(Some(3)),
            "the offset points at the backslash"
        );
    }
}
