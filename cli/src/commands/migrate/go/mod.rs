//! The Go reader of `alpha migrate`: a lexer and a parser for what kubebuilder API packages,
//! controllers and webhooks hold. No Go toolchain runs.

pub mod lex;
pub mod parse;

pub use lex::GoError;
pub use parse::{
    Comments, ConstDecl, Field, FuncDecl, GoFile, GoType, TypeDecl, parse_file, tag_value,
};
