//! operator-gen's CLI as a library: clap surface, the scaffolding commands over the project
//! model and their plans, templates, the in-memory scaffold with atomic commit, and the
//! manifests source scan.

pub mod chart;
pub mod cli;
pub mod commands;
pub mod core_types;
pub mod error;
pub mod gate;
pub mod git;
pub mod manifests;
pub mod printer;
pub mod project;
pub mod reference;
pub mod scaffold;
pub mod scaffolding;
pub mod templates;
pub mod transaction;

pub use error::{Error, Result};
pub use printer::Printer;
