//! A parser for what Go API packages hold: the package clause and its doc, imports, type
//! declarations (structs with tagged fields, named and alias types), constant blocks, and
//! functions and methods with their bodies kept as raw text. `var` declarations and anything
//! else at the top level are skipped by balanced brackets. Comments are attached as Go's
//! tools attach them: a declaration's doc is the comment group right above it, and its marker
//! group also takes the group one blank line above that (where `+kubebuilder:object:root`
//! usually stands). Nesting is bounded; errors carry a line and a column.

use super::lex::{GoError, Tok, Token, lex};

/// Deepest nesting of type expressions read.
const MAX_DEPTH: usize = 32;

/// A Go type expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoType {
    /// `Name` or `pkg.Name` (`pkg` empty for a local or predeclared name).
    Named {
        pkg: String,
        name: String,
    },
    Pointer(Box<GoType>),
    Slice(Box<GoType>),
    /// `[N]T`, with `N` as written.
    Array(String, Box<GoType>),
    Map(Box<GoType>, Box<GoType>),
    /// An anonymous struct.
    Struct(Vec<Field>),
    /// `interface{...}` or `any`.
    Interface,
    /// `func(...)` or `chan T`: what an API type cannot hold.
    Other(String),
}

/// A struct field (or an embedded type, `name` empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub ty: GoType,
    pub tag: String,
    pub doc: Vec<String>,
    /// Comment lines above the field that are not its doc (separated by a blank line).
    pub detached: Vec<String>,
    pub line: usize,
}

/// A comment block attached to a declaration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comments {
    /// The doc comment: the group right above, one string per line (text after `//`).
    pub doc: Vec<String>,
    /// Lines of the groups above the doc, separated from it by one blank line.
    pub above: Vec<String>,
}

/// A type declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeDecl {
    pub name: String,
    pub ty: GoType,
    /// `type A = B`.
    pub alias: bool,
    pub comments: Comments,
    pub line: usize,
}

/// A constant of a `const` declaration; `value` is its literal string when it is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstDecl {
    pub name: String,
    pub ty: Option<GoType>,
    pub value: Option<String>,
    pub doc: Vec<String>,
    pub line: usize,
}

/// A function or method, its body as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncDecl {
    /// The receiver's type name, without `*`, for a method.
    pub receiver: Option<String>,
    pub name: String,
    /// The whole declaration's source text (signature and body).
    pub text: String,
    pub comments: Comments,
    pub line: usize,
}

/// One Go file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoFile {
    pub package: String,
    pub package_doc: Comments,
    /// Import name (the alias, or the path's last element) → path.
    pub imports: Vec<(String, String)>,
    pub types: Vec<TypeDecl>,
    pub consts: Vec<ConstDecl>,
    pub funcs: Vec<FuncDecl>,
}

/// Parse the text of one Go file.
pub fn parse_file(src: &str) -> Result<GoFile, GoError> {
    let tokens = lex(src)?;
    let mut p = Parser {
        src,
        toks: tokens,
        pos: 0,
        depth: 0,
    };
    p.file()
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn at(&self) -> (usize, usize) {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or((1, 1), |t| (t.line, t.col))
    }

    fn error(&self, message: impl Into<String>) -> GoError {
        let (line, col) = self.at();
        GoError {
            line,
            col,
            message: message.into(),
        }
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        let yes = self.is_op(op);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn expect_op(&mut self, op: &str) -> Result<(), GoError> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{op}`")))
        }
    }

    fn ident(&mut self) -> Result<String, GoError> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            None => Err(self.error("unexpected end of file: expected a name")),
            _ => Err(self.error("expected a name")),
        }
    }

    /// Skip newlines and `;`.
    fn skip_blank(&mut self) {
        while matches!(self.peek(), Some(Tok::Newline) | Some(Tok::Op(";"))) {
            self.pos += 1;
        }
    }

    /// Skip newlines, `;` and comments.
    fn skip_space(&mut self) {
        while matches!(
            self.peek(),
            Some(Tok::Newline) | Some(Tok::Op(";")) | Some(Tok::Comment { .. })
        ) {
            self.pos += 1;
        }
    }

    /// The comments attached to the token at `self.pos`: the group ending on the line above
    /// it (the doc), and the groups above that separated by single blank lines.
    fn comments(&self) -> Comments {
        let Some(line) = self.toks.get(self.pos).map(|t| t.line) else {
            return Comments::default();
        };
        // comment lines (single-line comments standing alone on their line), by line
        let mut by_line = std::collections::BTreeMap::new();
        let mut i = self.pos;
        while i > 0 {
            i -= 1;
            match &self.toks[i].tok {
                Tok::Newline => {}
                Tok::Comment { text, block } => {
                    let alone = i == 0 || matches!(self.toks[i - 1].tok, Tok::Newline);
                    if !alone {
                        break;
                    }
                    let t = &self.toks[i];
                    let lines: Vec<String> = if *block {
                        text.lines().map(str::to_owned).collect()
                    } else {
                        vec![text.clone()]
                    };
                    let first = t.line;
                    for (k, l) in lines.into_iter().enumerate() {
                        by_line.insert(first + k, l);
                    }
                }
                _ => break,
            }
        }
        let mut out = Comments::default();
        let mut expect = line.saturating_sub(1);
        let mut group = 0;
        while let Some(text) = by_line.get(&expect) {
            if group == 0 {
                out.doc.insert(0, text.clone());
            } else {
                out.above.insert(0, text.clone());
            }
            expect = expect.saturating_sub(1);
            if !by_line.contains_key(&expect) && by_line.contains_key(&expect.saturating_sub(1)) {
                // one blank line: the next group up is the marker group
                group += 1;
                expect = expect.saturating_sub(1);
            }
            if expect == 0 {
                break;
            }
        }
        out
    }

    fn file(&mut self) -> Result<GoFile, GoError> {
        let mut f = GoFile::default();
        self.skip_blank();
        // comments before the package clause: its doc
        while matches!(self.peek(), Some(Tok::Comment { .. }) | Some(Tok::Newline)) {
            self.pos += 1;
        }
        match self.peek() {
            Some(Tok::Ident(k)) if k == "package" => {}
            None => {
                return Err(self.error("no package clause: a Go file starts with `package <name>`"));
            }
            _ => return Err(self.error("expected `package <name>`")),
        }
        f.package_doc = self.comments();
        self.pos += 1;
        f.package = self.ident()?;
        loop {
            self.skip_space();
            let comments = self.comments();
            let line = self.at().0;
            let Some(tok) = self.peek().cloned() else {
                break;
            };
            match tok {
                Tok::Ident(k) if k == "import" => {
                    self.pos += 1;
                    self.imports(&mut f)?;
                }
                Tok::Ident(k) if k == "type" => {
                    self.pos += 1;
                    self.type_decls(&mut f, comments)?;
                }
                Tok::Ident(k) if k == "const" => {
                    self.pos += 1;
                    self.const_decls(&mut f)?;
                }
                Tok::Ident(k) if k == "func" => {
                    let start = self.toks[self.pos].start;
                    self.pos += 1;
                    let func = self.func(start, comments, line)?;
                    f.funcs.push(func);
                }
                _ => self.skip_statement()?,
            }
        }
        Ok(f)
    }

    /// Skip to the end of a top-level statement: the next newline outside brackets.
    fn skip_statement(&mut self) -> Result<(), GoError> {
        let mut depth = 0usize;
        while let Some(tok) = self.peek() {
            match tok {
                Tok::Op("(") | Tok::Op("[") | Tok::Op("{") => depth += 1,
                Tok::Op(")") | Tok::Op("]") | Tok::Op("}") => {
                    depth = depth
                        .checked_sub(1)
                        .ok_or_else(|| self.error("unbalanced closing bracket"))?;
                }
                Tok::Newline if depth == 0 => return Ok(()),
                _ => {}
            }
            self.pos += 1;
        }
        if depth > 0 {
            return Err(self.error("unexpected end of file: a bracket is not closed"));
        }
        Ok(())
    }

    fn imports(&mut self, f: &mut GoFile) -> Result<(), GoError> {
        let grouped = self.eat_op("(");
        loop {
            self.skip_space();
            if grouped && self.eat_op(")") {
                return Ok(());
            }
            let alias = match self.peek() {
                Some(Tok::Ident(a)) => {
                    let a = a.clone();
                    self.pos += 1;
                    Some(a)
                }
                Some(Tok::Op(".")) => {
                    self.pos += 1;
                    Some(".".to_owned())
                }
                _ => None,
            };
            let Some(Tok::Str(path)) = self.peek().cloned() else {
                return Err(self.error("expected an import path"));
            };
            self.pos += 1;
            let name = alias.unwrap_or_else(|| import_name(&path));
            f.imports.push((name, path));
            if !grouped {
                return Ok(());
            }
        }
    }

    fn type_decls(&mut self, f: &mut GoFile, comments: Comments) -> Result<(), GoError> {
        if !self.eat_op("(") {
            let decl = self.type_spec(comments)?;
            f.types.push(decl);
            return Ok(());
        }
        loop {
            self.skip_space();
            if self.eat_op(")") {
                return Ok(());
            }
            let comments = self.comments();
            let decl = self.type_spec(comments)?;
            f.types.push(decl);
        }
    }

    fn type_spec(&mut self, comments: Comments) -> Result<TypeDecl, GoError> {
        let line = self.at().0;
        let name = self.ident()?;
        if self.is_op("[") {
            return Err(self.error(format!(
                "type {name} has type parameters, which an API type cannot have"
            )));
        }
        let alias = self.eat_op("=");
        let ty = self.ty()?;
        Ok(TypeDecl {
            name,
            ty,
            alias,
            comments,
            line,
        })
    }

    fn const_decls(&mut self, f: &mut GoFile) -> Result<(), GoError> {
        let grouped = self.eat_op("(");
        let mut last_ty = None;
        loop {
            if grouped {
                self.skip_space();
                if self.eat_op(")") {
                    return Ok(());
                }
            }
            let doc = self.comments().doc;
            let line = self.at().0;
            let mut names = vec![self.ident()?];
            while self.eat_op(",") {
                names.push(self.ident()?);
            }
            let ty = if self.is_op("=") || self.at_line_end() {
                None
            } else {
                Some(self.ty()?)
            };
            let mut value = None;
            if self.eat_op("=") {
                value = match self.peek() {
                    Some(Tok::Str(s)) => Some(s.clone()),
                    _ => None,
                };
                last_ty = ty.clone();
                self.skip_statement()?;
            }
            let ty = ty.or_else(|| {
                if value.is_none() {
                    last_ty.clone()
                } else {
                    None
                }
            });
            for name in names {
                f.consts.push(ConstDecl {
                    name,
                    ty: ty.clone(),
                    value: value.clone(),
                    doc: doc.clone(),
                    line,
                });
            }
            if !grouped {
                return Ok(());
            }
        }
    }

    fn at_line_end(&self) -> bool {
        matches!(
            self.peek(),
            None | Some(Tok::Newline)
                | Some(Tok::Op(";"))
                | Some(Tok::Op(")"))
                | Some(Tok::Comment { .. })
        )
    }

    /// A function after `func`: receiver, name, signature and body.
    fn func(&mut self, start: usize, comments: Comments, line: usize) -> Result<FuncDecl, GoError> {
        let mut receiver = None;
        if self.eat_op("(") {
            let open = self.pos;
            self.skip_until_close(")")?;
            receiver = self.toks[open..self.pos.saturating_sub(1)]
                .iter()
                .rev()
                .find_map(|t| match &t.tok {
                    Tok::Ident(s) => Some(s.clone()),
                    _ => None,
                });
        }
        let name = self.ident()?;
        // the signature: up to the `{` outside parentheses that opens the body
        let mut parens = 0usize;
        loop {
            match self.peek() {
                None => return Err(self.error(format!("func {name} has no body"))),
                Some(Tok::Op("(")) | Some(Tok::Op("[")) => parens += 1,
                Some(Tok::Op(")")) | Some(Tok::Op("]")) => parens = parens.saturating_sub(1),
                Some(Tok::Op("{")) if parens == 0 => {
                    // `struct{}` or `interface{}` in the results
                    let prev = self.pos.checked_sub(1).map(|i| &self.toks[i].tok);
                    if !matches!(prev, Some(Tok::Ident(k)) if k == "struct" || k == "interface") {
                        break;
                    }
                    self.pos += 1;
                    self.skip_until_close("}")?;
                    continue;
                }
                Some(Tok::Newline) if parens == 0 => {
                    // a declaration without a body (assembly)
                    return Err(self.error(format!("func {name} has no body")));
                }
                _ => {}
            }
            self.pos += 1;
        }
        self.pos += 1;
        self.skip_until_close("}")?;
        let end = self.toks[self.pos - 1].end;
        Ok(FuncDecl {
            receiver,
            name,
            text: self.src.get(start..end).unwrap_or_default().to_owned(),
            comments,
            line,
        })
    }

    /// Move past the bracket closing the one just opened.
    fn skip_until_close(&mut self, close: &str) -> Result<(), GoError> {
        let mut depth = 1usize;
        while let Some(tok) = self.peek() {
            match tok {
                Tok::Op("(") | Tok::Op("[") | Tok::Op("{") => depth += 1,
                Tok::Op(o @ (")" | "]" | "}")) => {
                    depth -= 1;
                    if depth == 0 {
                        if *o != close {
                            return Err(self.error(format!("expected `{close}`, found `{o}`")));
                        }
                        self.pos += 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
        Err(self.error(format!("unexpected end of file: expected `{close}`")))
    }

    fn ty(&mut self) -> Result<GoType, GoError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!("types nest more than {MAX_DEPTH} deep")));
        }
        self.depth += 1;
        let ty = self.ty_inner();
        self.depth -= 1;
        ty
    }

    fn ty_inner(&mut self) -> Result<GoType, GoError> {
        if self.eat_op("*") {
            return Ok(GoType::Pointer(Box::new(self.ty()?)));
        }
        if self.eat_op("(") {
            let t = self.ty()?;
            self.expect_op(")")?;
            return Ok(t);
        }
        if self.eat_op("[") {
            if self.eat_op("]") {
                return Ok(GoType::Slice(Box::new(self.ty()?)));
            }
            let from = self.pos;
            self.skip_until_close("]")?;
            let len = self.toks[from..self.pos - 1]
                .iter()
                .filter_map(|t| self.src.get(t.start..t.end))
                .collect::<Vec<_>>()
                .join("");
            return Ok(GoType::Array(len, Box::new(self.ty()?)));
        }
        let name = self.ident()?;
        match name.as_str() {
            "map" => {
                self.expect_op("[")?;
                let k = self.ty()?;
                self.expect_op("]")?;
                Ok(GoType::Map(Box::new(k), Box::new(self.ty()?)))
            }
            "struct" => Ok(GoType::Struct(self.fields()?)),
            "interface" => {
                self.expect_op("{")?;
                self.skip_until_close("}")?;
                Ok(GoType::Interface)
            }
            "any" => Ok(GoType::Interface),
            "func" | "chan" => {
                let from = self.toks[self.pos - 1].start;
                self.skip_type_rest()?;
                let to = self.toks[self.pos - 1].end;
                Ok(GoType::Other(
                    self.src.get(from..to).unwrap_or(&name).to_owned(),
                ))
            }
            _ if self.eat_op(".") => Ok(GoType::Named {
                pkg: name,
                name: self.ident()?,
            }),
            _ => {
                if self.is_op("[") {
                    return Err(self.error(format!(
                        "generic type {name}[...]: an API type cannot use type parameters"
                    )));
                }
                Ok(GoType::Named {
                    pkg: String::new(),
                    name,
                })
            }
        }
    }

    /// Skip what follows `func` or `chan` in a type: to the end of the field's line.
    fn skip_type_rest(&mut self) -> Result<(), GoError> {
        let mut depth = 0usize;
        while let Some(tok) = self.peek() {
            match tok {
                Tok::Op("(") | Tok::Op("[") | Tok::Op("{") => depth += 1,
                Tok::Op(")") | Tok::Op("]") | Tok::Op("}") if depth == 0 => return Ok(()),
                Tok::Op(")") | Tok::Op("]") | Tok::Op("}") => depth -= 1,
                Tok::Newline | Tok::Str(_) | Tok::Op(";") if depth == 0 => return Ok(()),
                _ => {}
            }
            self.pos += 1;
        }
        Ok(())
    }

    /// The fields of a struct, after `struct`.
    fn fields(&mut self) -> Result<Vec<Field>, GoError> {
        self.expect_op("{")?;
        let mut out = Vec::new();
        let mut detached: Vec<String> = Vec::new();
        loop {
            self.skip_blank();
            if let Some(Tok::Comment { .. }) = self.peek() {
                // a comment group not right above a field is kept as plain comment lines
                let next = self.toks[self.pos..]
                    .iter()
                    .position(|t| !matches!(t.tok, Tok::Comment { .. } | Tok::Newline))
                    .map(|n| self.pos + n);
                let save = self.pos;
                if next.is_none() {
                    self.pos = self.toks.len();
                    return Err(self.error("unexpected end of file: expected `}`"));
                }
                if let Some(n) = next {
                    self.pos = n;
                    let c = self.comments();
                    self.pos = save;
                    let all: Vec<String> = self.toks[save..n]
                        .iter()
                        .filter_map(|t| match &t.tok {
                            Tok::Comment { text, .. } => Some(text.clone()),
                            _ => None,
                        })
                        .collect();
                    let keep = all.len().saturating_sub(c.doc.len());
                    detached.extend(all.into_iter().take(keep));
                    self.pos = n;
                }
                continue;
            }
            if self.eat_op("}") {
                return Ok(out);
            }
            let doc = self.comments().doc;
            let line = self.at().0;
            let mut fields = self.field_line(doc, line)?;
            if let Some(first) = fields.first_mut() {
                first.detached = std::mem::take(&mut detached);
            }
            out.append(&mut fields);
            // the rest of the line: a trailing comment
            if let Some(Tok::Comment { .. }) = self.peek() {
                self.pos += 1;
            }
            if !matches!(
                self.peek(),
                Some(Tok::Newline) | Some(Tok::Op(";")) | Some(Tok::Op("}"))
            ) {
                return Err(self.error("expected the end of the field"));
            }
        }
    }

    /// One line of a struct: `A, B T `tag``, `T `tag`` (embedded) or `*pkg.T`.
    fn field_line(&mut self, doc: Vec<String>, line: usize) -> Result<Vec<Field>, GoError> {
        let mut names = Vec::new();
        let embedded = matches!(
            (self.peek(), self.toks.get(self.pos + 1).map(|t| &t.tok)),
            (Some(Tok::Op("*")), _)
                | (
                    Some(Tok::Ident(_)),
                    Some(
                        Tok::Op(".")
                            | Tok::Str(_)
                            | Tok::Newline
                            | Tok::Op(";")
                            | Tok::Op("}")
                            | Tok::Comment { .. }
                    )
                )
        );
        if !embedded {
            names.push(self.ident()?);
            while self.eat_op(",") {
                names.push(self.ident()?);
            }
        }
        let ty = self.ty()?;
        let tag = match self.peek() {
            Some(Tok::Str(s)) => {
                let s = s.clone();
                self.pos += 1;
                s
            }
            _ => String::new(),
        };
        if names.is_empty() {
            names.push(String::new());
        }
        Ok(names
            .into_iter()
            .map(|name| Field {
                name,
                ty: ty.clone(),
                tag: tag.clone(),
                doc: doc.clone(),
                detached: Vec::new(),
                line,
            })
            .collect())
    }
}

/// The package name an import path gives by default: its last element, without a major
/// version suffix (`gopkg.in/yaml.v3` → `yaml`).
fn import_name(path: &str) -> String {
    let last = path.rsplit('/').next().unwrap_or(path);
    let last = if last.len() > 1
        && last.starts_with('v')
        && last[1..].chars().all(|c| c.is_ascii_digit())
        && path.matches('/').count() > 2
        && !path.starts_with("k8s.io/")
    {
        path.rsplit('/').nth(1).unwrap_or(last)
    } else {
        last
    };
    let last = last.split('.').next().unwrap_or(last);
    last.replace('-', "_")
}

/// The value of `key` in a struct tag (`json:"name,omitempty"`).
pub fn tag_value(tag: &str, key: &str) -> Option<String> {
    let mut rest = tag.trim();
    while !rest.is_empty() {
        let colon = rest.find(':')?;
        let k = rest[..colon].trim();
        let after = rest[colon + 1..].strip_prefix('"')?;
        let mut end = None;
        let mut escaped = false;
        for (i, c) in after.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let end = end?;
        if k == key {
            return Some(after[..end].replace("\\\"", "\""));
        }
        rest = after[end + 1..].trim_start();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"// Package v1 holds the crew API.
// +groupName=crew.my.domain
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// INSERT here

// Phase is a phase.
// +kubebuilder:validation:Enum=A;B
type Phase string

const (
	// PhaseA is a.
	PhaseA Phase = "A"
	PhaseB Phase = "B"
)

// +kubebuilder:object:root=true

// Captain is a kind.
type Captain struct {
	metav1.TypeMeta `json:",inline"`

	// INSERT ADDITIONAL FIELDS

	// size is the size.
	// +optional
	Size *int32 `json:"size,omitempty"` // trailing
	A, B string
	Labels map[string][]string `json:"labels"`
	Inner struct {
		X int `json:"x"`
	} `json:"inner"`
}

var x = map[string]int{"a": 1}

func (r *Captain) Default(ctx context.Context, obj runtime.Object) (struct{}, error) {
	if x := 1; x > 0 { return struct{}{}, nil }
	return struct{}{}, nil
}
"#;

    #[test]
    fn reads_an_api_file() {
        let f = parse_file(SRC).expect("parse");
        assert_eq!(f.package, "v1");
        assert_eq!(f.package_doc.doc[1], " +groupName=crew.my.domain");
        assert_eq!(
            f.imports[0],
            (
                "metav1".into(),
                "k8s.io/apimachinery/pkg/apis/meta/v1".into()
            )
        );
        assert_eq!(f.imports[1].0, "runtime");
        let phase = &f.types[0];
        assert_eq!(phase.name, "Phase");
        assert_eq!(
            phase.comments.doc,
            [" Phase is a phase.", " +kubebuilder:validation:Enum=A;B"]
        );
        assert_eq!(f.consts.len(), 2);
        assert_eq!(f.consts[1].value.as_deref(), Some("B"));
        assert_eq!(f.consts[0].doc, [" PhaseA is a."]);
        let captain = &f.types[1];
        assert_eq!(captain.comments.above, [" +kubebuilder:object:root=true"]);
        assert_eq!(captain.comments.doc, [" Captain is a kind."]);
        let GoType::Struct(fields) = &captain.ty else {
            panic!("struct")
        };
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["", "Size", "A", "B", "Labels", "Inner"]);
        assert_eq!(fields[1].doc, [" size is the size.", " +optional"]);
        assert_eq!(fields[1].detached, [" INSERT ADDITIONAL FIELDS"]);
        assert_eq!(
            tag_value(&fields[1].tag, "json").as_deref(),
            Some("size,omitempty")
        );
        assert!(matches!(&fields[1].ty, GoType::Pointer(_)));
        assert!(matches!(&fields[5].ty, GoType::Struct(f) if f.len() == 1));
        assert_eq!(f.funcs.len(), 1);
        assert_eq!(f.funcs[0].receiver.as_deref(), Some("Captain"));
        assert!(f.funcs[0].text.ends_with("return struct{}{}, nil\n}"));
    }

    #[test]
    fn every_cut_of_a_file_parses_or_is_an_error() {
        // no panic on any prefix or any one character removed
        let cuts = SRC.char_indices().map(|(i, _)| i);
        for i in cuts {
            let _ = parse_file(&SRC[..i]);
            let mut dropped = SRC.to_owned();
            dropped.remove(i);
            let _ = parse_file(&dropped);
        }
    }

    #[test]
    fn bad_input_is_a_located_error() {
        let e = parse_file("package v1\n\ntype A struct {\n\tB string\n").expect_err("cut");
        assert!(e.message.contains("end of file"), "{e:?}");
        assert!(parse_file("type A int").is_err());
        let deep = format!("package v1\ntype A {}int\n", "*".repeat(100));
        assert!(
            parse_file(&deep)
                .expect_err("deep")
                .message
                .contains("nest")
        );
    }
}
