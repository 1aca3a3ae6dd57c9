//! What the scaffolding commands do to a project, below their flags: each plans a request
//! against the project model ([`crate::project`]) and stages its output in a
//! [`crate::scaffold::Scaffold`] for the command to commit. A command's output is declared as
//! lists of files, insertions at markers and lines to enable ([`lists`]), rendered from
//! `templates/` against the command's context, and run backwards by `delete api`.

pub mod api;
pub mod autoupdate;
pub mod delete;
pub mod deploy_image;
pub mod from_crd;
pub mod grafana;
pub mod init;
pub mod lists;
pub mod multigroup;
pub mod webhook;
