//! One module per subcommand: its flags and a short `run` over the project model
//! ([`crate::project`]), the scaffolding plans ([`crate::scaffolding`]) and the in-memory
//! [`crate::scaffold::Scaffold`] it commits.

pub mod api;
pub mod delete;
pub mod edit;
pub mod envtest;
pub mod export_template;
pub mod generate;
pub mod init;
pub mod migrate;
pub mod replay;
pub mod update;
pub mod version;
pub mod webhook;
