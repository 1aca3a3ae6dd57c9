//! A lexer for the Go that API packages hold: identifiers, numbers, string, raw string and rune
//! literals, operators, comments and newlines, each with its line, column and byte span.
//! It never panics; an unterminated literal or comment is a located error.

/// One token's class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// An identifier or keyword.
    Ident(String),
    /// A number literal, as written.
    Number(String),
    /// An interpreted (`"..."`) or raw (`` `...` ``) string literal, decoded.
    Str(String),
    /// A rune literal, as written.
    Rune(String),
    /// An operator or punctuation, as written.
    Op(&'static str),
    /// A `//` comment (text after `//`) or `/* */` comment (text between the delimiters).
    Comment { text: String, block: bool },
    /// The end of a line.
    Newline,
}

/// A token with where it stands (1-based line and column, byte span).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
    pub col: usize,
    pub start: usize,
    pub end: usize,
}

/// A located error of the Go reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

/// Operators, longest first so the first match is the longest.
const OPS: &[&str] = &[
    "<<=", ">>=", "&^=", "...", "&&", "||", "<-", "++", "--", "==", "!=", "<=", ">=", ":=", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "&^", "~", "+", "-", "*", "/", "%", "&",
    "|", "^", "<", ">", "=", "!", "(", ")", "[", "]", "{", "}", ",", ";", ".", ":",
];

/// The tokens of `src`.
pub fn lex(src: &str) -> Result<Vec<Token>, GoError> {
    let mut lx = Lexer {
        src,
        pos: 0,
        line: 1,
        line_start: 0,
        out: Vec::new(),
    };
    while lx.pos < src.len() {
        lx.next_token()?;
    }
    Ok(lx.out)
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: usize,
    line_start: usize,
    out: Vec<Token>,
}

impl Lexer<'_> {
    fn rest(&self) -> &str {
        self.src.get(self.pos..).unwrap_or_default()
    }

    fn col(&self, at: usize) -> usize {
        self.src
            .get(self.line_start..at)
            .map_or(1, |s| s.chars().count() + 1)
    }

    fn error(&self, at: usize, message: impl Into<String>) -> GoError {
        GoError {
            line: self.line,
            col: self.col(at),
            message: message.into(),
        }
    }

    fn push(&mut self, tok: Tok, start: usize, line: usize, col: usize) {
        self.out.push(Token {
            tok,
            line,
            col,
            start,
            end: self.pos,
        });
    }

    /// Advance over `n` bytes, counting the newlines passed.
    fn advance(&mut self, n: usize) {
        let end = (self.pos + n).min(self.src.len());
        for (i, b) in self.src.as_bytes()[self.pos..end].iter().enumerate() {
            if *b == b'\n' {
                self.line += 1;
                self.line_start = self.pos + i + 1;
            }
        }
        self.pos = end;
    }

    fn next_token(&mut self) -> Result<(), GoError> {
        let start = self.pos;
        let (line, col) = (self.line, self.col(start));
        let Some(c) = self.rest().chars().next() else {
            return Ok(());
        };
        match c {
            '\n' => {
                self.advance(1);
                self.push(Tok::Newline, start, line, col);
            }
            c if c.is_whitespace() => self.advance(c.len_utf8()),
            '/' if self.rest().starts_with("//") => {
                let len = self.rest().find('\n').unwrap_or(self.rest().len());
                let text = self.rest()[2..len].trim_end_matches('\r').to_owned();
                self.advance(len);
                self.push(Tok::Comment { text, block: false }, start, line, col);
            }
            '/' if self.rest().starts_with("/*") => {
                let Some(len) = self.rest()[2..].find("*/") else {
                    return Err(self.error(start, "comment not terminated: add `*/`"));
                };
                let text = self.rest()[2..2 + len].to_owned();
                self.advance(len + 4);
                self.push(Tok::Comment { text, block: true }, start, line, col);
            }
            '"' => {
                let text = self.interpreted(start)?;
                self.push(Tok::Str(text), start, line, col);
            }
            '`' => {
                let Some(len) = self.rest()[1..].find('`') else {
                    return Err(self.error(start, "raw string not terminated: add '`'"));
                };
                let text = self.rest()[1..1 + len].replace('\r', "");
                self.advance(len + 2);
                self.push(Tok::Str(text), start, line, col);
            }
            '\'' => {
                let len = self.rune_len(start)?;
                let text = self.rest()[..len].to_owned();
                self.advance(len);
                self.push(Tok::Rune(text), start, line, col);
            }
            c if c.is_ascii_digit()
                || (c == '.' && self.rest()[1..].starts_with(|d: char| d.is_ascii_digit())) =>
            {
                let len = self
                    .rest()
                    .find(|d: char| !(d.is_ascii_alphanumeric() || d == '.' || d == '_'))
                    .unwrap_or(self.rest().len());
                let text = self.rest()[..len].to_owned();
                self.advance(len);
                self.push(Tok::Number(text), start, line, col);
            }
            c if c.is_alphabetic() || c == '_' => {
                let len = self
                    .rest()
                    .find(|d: char| !(d.is_alphanumeric() || d == '_'))
                    .unwrap_or(self.rest().len());
                let text = self.rest()[..len].to_owned();
                self.advance(len);
                self.push(Tok::Ident(text), start, line, col);
            }
            _ => {
                let Some(op) = OPS.iter().find(|op| self.rest().starts_with(**op)) else {
                    return Err(self.error(start, format!("unexpected character {c:?}")));
                };
                self.advance(op.len());
                self.push(Tok::Op(op), start, line, col);
            }
        }
        Ok(())
    }

    /// An interpreted string literal starting at `start`, decoded; the lexer moves past it.
    fn interpreted(&mut self, start: usize) -> Result<String, GoError> {
        let mut out = String::new();
        let mut chars = self.rest().char_indices().skip(1);
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.advance(i + 1);
                    return Ok(out);
                }
                '\n' => break,
                '\\' => {
                    let Some((_, e)) = chars.next() else { break };
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        '\\' => out.push('\\'),
                        '"' => out.push('"'),
                        '\'' => out.push('\''),
                        'a' => out.push('\u{7}'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'v' => out.push('\u{b}'),
                        'x' | 'u' | 'U' | '0'..='7' => {
                            let n = match e {
                                'x' => 2,
                                'u' => 4,
                                'U' => 8,
                                _ => 2,
                            };
                            let digits: String = chars.by_ref().take(n).map(|(_, c)| c).collect();
                            let radix = if matches!(e, '0'..='7') { 8 } else { 16 };
                            let text = if radix == 8 {
                                format!("{e}{digits}")
                            } else {
                                digits
                            };
                            match u32::from_str_radix(&text, radix)
                                .ok()
                                .and_then(char::from_u32)
                            {
                                Some(c) => out.push(c),
                                None => {
                                    return Err(self.error(start, "invalid escape in string"));
                                }
                            }
                        }
                        _ => return Err(self.error(start, format!("unknown escape \\{e}"))),
                    }
                }
                c => out.push(c),
            }
        }
        Err(self.error(start, "string not terminated: add '\"'"))
    }

    /// The byte length of the rune literal starting at `start`.
    fn rune_len(&self, start: usize) -> Result<usize, GoError> {
        let mut escaped = false;
        for (i, c) in self.rest().char_indices().skip(1) {
            match c {
                '\n' => break,
                '\\' if !escaped => escaped = true,
                '\'' if !escaped => return Ok(i + 1),
                _ => escaped = false,
            }
        }
        Err(self.error(start, "rune literal not terminated: add \"'\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_with_places() {
        let toks = lex("type A struct {\n\tB *string `json:\"b\"` // c\n}\n").expect("lex");
        let kinds: Vec<&Tok> = toks.iter().map(|t| &t.tok).collect();
        assert_eq!(kinds[0], &Tok::Ident("type".into()));
        assert!(kinds.contains(&&Tok::Str("json:\"b\"".into())));
        assert!(kinds.contains(&&Tok::Comment {
            text: " c".into(),
            block: false
        }));
        let star = toks.iter().find(|t| t.tok == Tok::Op("*")).expect("star");
        assert_eq!((star.line, star.col), (2, 4));
    }

    #[test]
    fn unterminated_literals_are_located_errors() {
        let e = lex("a\n  \"abc").expect_err("unterminated");
        assert_eq!((e.line, e.col), (2, 3));
        assert!(lex("/* x").is_err());
        assert!(lex("`x").is_err());
        assert!(lex("'x").is_err());
        assert_eq!(
            lex("\"\\u00e9\"").expect("lex")[0].tok,
            Tok::Str("é".into())
        );
    }
}
