//! Just enough of Rust's lexer for the scan's blanking and for the nesting bound every parse of
//! a project's Rust checks first: brackets, identifiers, `;`, `#`, `<` and `>` outside comments
//! and literals.

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(super) enum Token<'a> {
    Ident(&'a [u8]),
    Open(u8),
    Close(u8),
    /// `;`, `#`, `<` or `>`.
    Punct(u8),
    /// A literal, lifetime or anything else that is neither of the above.
    Other,
}

/// Just enough of Rust's lexer to find brackets, identifiers, `;`, `#`, `<` and `>` outside
/// comments and literals: what blanking and the nesting bound read. Positions are byte offsets on
/// char boundaries.
pub(super) struct Lexer<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
    /// Where each line comment lexed so far starts, in order, each once: outer doc lines
    /// (`///`, not `////`), inner doc lines (`//!`) and the others.
    pub(super) docs: Vec<usize>,
    pub(super) inner_docs: Vec<usize>,
    pub(super) comments: Vec<usize>,
}

/// Adds `at` to the ascending `list` unless it is there: the lexer may read text again.
fn push_once(list: &mut Vec<usize>, at: usize) {
    if list.last().is_none_or(|&last| last < at) {
        list.push(at);
    }
}

pub(super) fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl<'a> Lexer<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Lexer<'a> {
        Lexer {
            bytes,
            at: 0,
            docs: Vec::new(),
            inner_docs: Vec::new(),
            comments: Vec::new(),
        }
    }

    pub(super) fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.at + ahead).copied()
    }

    /// Skips a (possibly raw, possibly nested) literal or comment starting at `self.at`, or
    /// returns false when none starts there.
    pub(super) fn skip_trivia_or_literal(&mut self) -> bool {
        let b = self.bytes;
        let i = self.at;
        match (b[i], b.get(i + 1).copied()) {
            (b'/', Some(b'/')) => {
                let list = match (b.get(i + 2), b.get(i + 3)) {
                    (Some(b'/'), next) if next != Some(&b'/') => &mut self.docs,
                    (Some(b'!'), _) => &mut self.inner_docs,
                    _ => &mut self.comments,
                };
                push_once(list, i);
                self.at = memchr_from(b, i, b'\n').unwrap_or(b.len());
                true
            }
            (b'/', Some(b'*')) => {
                let mut depth = 0usize;
                let mut j = i;
                while j < b.len() {
                    match (b[j], b.get(j + 1).copied()) {
                        (b'/', Some(b'*')) => {
                            depth += 1;
                            j += 2;
                        }
                        (b'*', Some(b'/')) => {
                            depth -= 1;
                            j += 2;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => j += 1,
                    }
                }
                self.at = j.min(b.len());
                true
            }
            (b'"', _) => {
                self.at = skip_string(b, i + 1);
                true
            }
            (b'\'', Some(b'\\')) => {
                // an escaped char literal: past the escaped char, up to the closing quote
                let mut j = i + 3;
                while j < b.len() && b[j] != b'\'' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                self.at = (j + 1).min(b.len());
                true
            }
            (b'\'', Some(_)) => {
                // a char literal `'x'` (x possibly multi-byte) or a lifetime / label
                let width = utf8_width(b[i + 1]);
                if b.get(i + 1 + width) == Some(&b'\'') {
                    self.at = i + 2 + width;
                } else {
                    self.at = i + 1;
                }
                true
            }
            _ => false,
        }
    }

    pub(super) fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let b = *self.bytes.get(self.at)?;
            if b.is_ascii_whitespace() {
                self.at += 1;
                continue;
            }
            if self.skip_trivia_or_literal() {
                if matches!(b, b'"' | b'\'') {
                    return Some(Token::Other);
                }
                continue;
            }
            if is_ident_byte(b) {
                let start = self.at;
                // raw strings: r"..", r#".."#, br"..", cr#".."#
                let prefix_len = match (b, self.peek(1)) {
                    (b'r', _) => Some(1),
                    (b'b' | b'c', Some(b'r')) => Some(2),
                    _ => None,
                };
                if let Some(n) = prefix_len {
                    let mut j = start + n;
                    while self.bytes.get(j) == Some(&b'#') {
                        j += 1;
                    }
                    if self.bytes.get(j) == Some(&b'"') {
                        let hashes = j - start - n;
                        self.at = skip_raw_string(self.bytes, j + 1, hashes);
                        return Some(Token::Other);
                    }
                }
                // byte and C strings, byte chars: b"..", c"..", b'x'
                if matches!(b, b'b' | b'c') && matches!(self.peek(1), Some(b'"' | b'\'')) {
                    self.at += 1;
                    self.skip_trivia_or_literal();
                    return Some(Token::Other);
                }
                // raw identifiers: r#name
                if b == b'r'
                    && self.peek(1) == Some(b'#')
                    && self.peek(2).is_some_and(is_ident_byte)
                {
                    self.at += 2;
                    while self.peek(0).is_some_and(is_ident_byte) {
                        self.at += 1;
                    }
                    return Some(Token::Ident(&self.bytes[start..self.at]));
                }
                while self.peek(0).is_some_and(is_ident_byte) {
                    self.at += 1;
                }
                return Some(Token::Ident(&self.bytes[start..self.at]));
            }
            self.at += 1;
            return Some(match b {
                b'(' | b'[' | b'{' => Token::Open(b),
                b')' | b']' | b'}' => Token::Close(b),
                b';' | b'#' | b'<' | b'>' => Token::Punct(b),
                _ => Token::Other,
            });
        }
    }
}

pub(super) fn memchr_from(bytes: &[u8], from: usize, needle: u8) -> Option<usize> {
    bytes[from..]
        .iter()
        .position(|&b| b == needle)
        .map(|p| p + from)
}

/// Past the closing quote of a string whose body starts at `at`.
fn skip_string(b: &[u8], mut at: usize) -> usize {
    while at < b.len() {
        match b[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    b.len()
}

/// Past the closing `"###` of a raw string whose body starts at `at`.
fn skip_raw_string(b: &[u8], mut at: usize, hashes: usize) -> usize {
    while at < b.len() {
        if b[at] == b'"'
            && b[at + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == b'#')
                .count()
                == hashes
        {
            return at + 1 + hashes;
        }
        at += 1;
    }
    b.len()
}

fn utf8_width(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}
