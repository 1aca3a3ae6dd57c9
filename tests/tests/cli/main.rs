//! The CLI's scaffolding commands, run as the `operator-gen` binary: the directory cases and
//! their goldens, bad input, interrupted commands, re-runs, `alpha`, `delete api`, `version` and
//! `completion`, and `create webhook` against kubebuilder's.
//!
//! The integration tests are four binaries, one per directory of `tests/tests/` (`cli`,
//! `manifests`, `apiserver`, `project`): kube is linked four times, not once per test file.
//! To add a test file to this group, put it in this directory and add its `mod` line below
//! (`project`'s `test_layout` fails on a test file outside a group or not declared). Run one
//! file's tests with `cargo test -p operator-gen-tests --test cli <module>::`.
//! A group's tests share one process and run in parallel: none may change process-wide state
//! (environment, current directory, panic hook) for the others, and every build in the
//! generated projects' shared target directory holds `operator_gen_tests::operator::build_lock`.

mod book;
mod cli_alpha;
mod cli_cases;
mod cli_commands;
mod cli_delete;
mod cli_errors;
mod cli_faults;
mod cli_hostile;
mod cli_idempotent;
mod cli_interrupt;
mod cli_plugins;
mod init_existing;
mod migrate_corpus;
mod migrate_kubebuilder;
mod own_templates;
mod webhook_kubebuilder;
