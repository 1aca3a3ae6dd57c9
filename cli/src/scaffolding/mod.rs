//! The scaffolding commands' declarative side: a command's output as lists of files,
//! insertions at markers and lines to enable ([`lists`]), rendered from `templates/` against
//! the command's context into a [`crate::scaffold::Scaffold`], and run backwards by `delete api`.

pub mod api;
pub mod delete;
pub mod init;
pub mod lists;
pub mod multigroup;
pub mod webhook;
