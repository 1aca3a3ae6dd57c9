//! The one way the CLI parses a project's Rust: the nesting bound ([`MAX_NESTING`]) checked
//! first, by a lexer that does not recurse, with one message; then the parser (syn, or
//! proc-macro2 for a token stream) run on a thread with the scan's stack. `manifests`, the
//! scaffold commands (`create api`, `create webhook`, `delete api`, `edit --multigroup`) and the
//! storage-version reader all parse through it, so none overflows its stack on deep input.

use std::str::FromStr;

use super::lexer::{Lexer, Token};
use super::threads::on_scan_stack;

/// Deepest nesting of brackets (`(`, `[`, `{`, `<`) a file may have: deeper input would overflow
/// the stack instead of getting a diagnostic.
pub const MAX_NESTING: usize = 128;

/// Why Rust text was not parsed: where, and what is wrong (the fix included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unparsable {
    /// 1-based.
    pub line: usize,
    /// 0-based, in characters.
    pub column: usize,
    /// Whether the text nests deeper than [`MAX_NESTING`] (else it does not parse).
    pub too_deep: bool,
    /// The nesting message, or the parser's report.
    pub message: String,
}

impl Unparsable {
    /// One line for the file `rel`: `rel:line:column: ` and the nesting message, or what
    /// `syntax` makes of the parser's report.
    pub fn in_file(&self, rel: &str, syntax: impl FnOnce(&str) -> String) -> String {
        let what = if self.too_deep {
            self.message.clone()
        } else {
            syntax(&self.message)
        };
        format!("{rel}:{}:{}: {what}", self.line, self.column + 1)
    }

    fn syntax(e: &syn::Error) -> Unparsable {
        let start = e.span().start();
        Unparsable {
            line: start.line,
            column: start.column,
            too_deep: false,
            message: e.to_string(),
        }
    }
}

/// The message of text nested deeper than [`MAX_NESTING`].
pub fn nesting_message() -> String {
    format!(
        "brackets nest more than {MAX_NESTING} levels deep: name the inner types or expressions"
    )
}

/// Refuses `text` nested deeper than [`MAX_NESTING`].
pub fn within_bound(text: &str) -> Result<(), Unparsable> {
    match too_deep(text) {
        Some((line, column)) => Err(Unparsable {
            line,
            column,
            too_deep: true,
            message: nesting_message(),
        }),
        None => Ok(()),
    }
}

/// `work` on `text` parsed by syn as a file, within the bound and on the scan's stack.
pub fn with_file<T: Send>(
    text: &str,
    work: impl FnOnce(syn::File) -> T + Send,
) -> Result<T, Unparsable> {
    within_bound(text)?;
    on_scan_stack(|| {
        syn::parse_file(text)
            .map(work)
            .map_err(|e| Unparsable::syntax(&e))
    })
}

/// `work` on `text` lexed into a token stream, within the bound and on the scan's stack.
pub fn with_tokens<T: Send>(
    text: &str,
    work: impl FnOnce(proc_macro2::TokenStream) -> T + Send,
) -> Result<T, Unparsable> {
    within_bound(text)?;
    on_scan_stack(|| match proc_macro2::TokenStream::from_str(text) {
        Ok(tokens) => Ok(work(tokens)),
        Err(e) => {
            let start = e.span().start();
            Err(Unparsable {
                line: start.line,
                column: start.column,
                too_deep: false,
                message: e.to_string(),
            })
        }
    })
}

/// Where `source` first nests deeper than [`MAX_NESTING`] brackets, by the tokens of [`Lexer`]
/// (comments and literals hold none): a 1-based line and a 0-based column, in characters. `<`
/// counts as an opener and `>` (not in `->`) as a closer; the `<`s open at one bracket level
/// stop counting where no generic argument list can go on (a `;`, a `=>`, the `{` of a block
/// rather than of a const argument): they were comparisons, or the parser stops there.
pub(crate) fn too_deep(source: &str) -> Option<(usize, usize)> {
    let bytes = source.as_bytes();
    let mut lexer = Lexer::new(bytes);
    // per open bracket, the `<`s open at its level when it opened, and their sum
    let mut saved: Vec<usize> = Vec::new();
    let (mut outer, mut angles) = (0usize, 0usize);
    while let Some(token) = lexer.next() {
        let at = lexer.at - 1;
        let before = bytes[..at]
            .iter()
            .rev()
            .find(|b| !b.is_ascii_whitespace())
            .copied();
        match token {
            Token::Open(open) => {
                if open == b'{' && !matches!(before, Some(b'<' | b',' | b'=')) {
                    angles = 0;
                }
                saved.push(angles);
                outer += angles;
                angles = 0;
            }
            Token::Close(_) => {
                angles = saved.pop().unwrap_or(0);
                outer -= angles;
            }
            Token::Punct(b';') => angles = 0,
            Token::Punct(b'<') => angles += 1,
            Token::Punct(b'>') => match at.checked_sub(1).map(|p| bytes[p]) {
                Some(b'-') => {}
                Some(b'=') => angles = 0,
                _ => angles = angles.saturating_sub(1),
            },
            _ => continue,
        }
        if saved.len() + outer + angles > MAX_NESTING {
            let before = &source[..at];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
            return Some((line, column));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_deep_skips_comments_strings_and_char_literals_and_counts_columns_in_characters() {
        let prefix = "let s = \"é(\"; let c = 'é'; let d = '('; let e = '\\''; ";
        let deep = "(".repeat(MAX_NESTING + 1);
        let source = format!("// é (\n/* ( /* ( */ */\n{prefix}{deep}");
        let column = prefix.chars().count() + MAX_NESTING;
        assert_eq!(too_deep(&source), Some((3, column)));
        let shallow = format!("// é (\n{prefix}{}", "(".repeat(MAX_NESTING));
        assert_eq!(too_deep(&shallow), None);
        // `<` opens and `>` closes, but not in `->`; raw strings hold no brackets
        let angles = "<".repeat(MAX_NESTING);
        assert_eq!(too_deep(&format!("{angles}>(")), None);
        assert_eq!(
            too_deep(&format!("{angles}->(")),
            Some((1, MAX_NESTING + 2))
        );
        assert_eq!(too_deep(&format!("{angles}r#\"(\"#")), None);
    }

    #[test]
    fn comparisons_end_where_no_generic_argument_list_goes_on() {
        // many comparisons in statements, blocks and match arms: no nesting
        let statements = "let x = a < b;\n".repeat(MAX_NESTING * 2);
        let blocks = "if a < b { f() }\n".repeat(MAX_NESTING * 2);
        let arms = format!(
            "match x {{ {} _ => 0 }}",
            "y if y < 3 => 1,\n".repeat(MAX_NESTING * 2)
        );
        for text in [statements, blocks, arms] {
            assert_eq!(too_deep(&format!("fn f() {{ {text} }}")), None, "{text}");
        }
        // generics nest across brackets and const arguments
        let generics = format!(
            "type T = {}u8{};",
            "Vec<(".repeat(MAX_NESTING / 2 + 1),
            ")>".repeat(MAX_NESTING / 2 + 1)
        );
        assert!(too_deep(&generics).is_some());
        let consts = format!("type T = {};", "A<{ B<".repeat(MAX_NESTING / 2 + 1));
        assert!(too_deep(&consts).is_some());
    }

    #[test]
    fn the_parsers_refuse_deep_text_with_the_one_message() {
        let deep = format!(
            "fn f() {{ let _ = {}{}; }}\n",
            "[".repeat(3000),
            "]".repeat(3000)
        );
        for refused in [
            with_file(&deep, |_| ()).expect_err("too deep"),
            with_tokens(&deep, |_| ()).expect_err("too deep"),
        ] {
            assert!(refused.too_deep);
            assert_eq!(
                refused.in_file("src/main.rs", |e| e.to_owned()),
                format!("src/main.rs:1:{}: {}", 17 + MAX_NESTING, nesting_message())
            );
        }
        let broken = with_tokens("fn f() {", |_| ()).expect_err("unbalanced");
        assert!(!broken.too_deep);
        assert_eq!(with_file("struct A;", |f| f.items.len()), Ok(1));
    }
}
