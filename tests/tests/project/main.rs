//! Generated projects built and run: end to end through `make` and `cargo`, the operator and its
//! webhooks on a real kube-apiserver, API versions, the project's own controller tests (and
//! their unit test refusing a sample the CRD refuses), the Helm chart, the cargo-generate
//! template, `envtest use`, portability, the publishable crates and the layout of these test
//! binaries.
//!
//! The integration tests are four binaries, one per directory of `tests/tests/` (`cli`,
//! `manifests`, `apiserver`, `project`): kube is linked four times, not once per test file.
//! To add a test file to this group, put it in this directory and add its `mod` line below
//! (`project`'s `test_layout` fails on a test file outside a group or not declared). Run one
//! file's tests with `cargo test -p operator-gen-tests --test project <module>::`.
//! A group's tests share one process and run in parallel: none may change process-wide state
//! (environment, current directory, panic hook) for the others, and every build in the
//! generated projects' shared target directory holds `operator_gen_tests::operator::build_lock`.

mod api_versions;
mod cargo_generate;
mod cli_e2e;
mod envtest_use;
mod generated_controller_tests;
mod helm_chart;
mod operator_e2e;
mod operator_faults;
mod portable_project;
mod publishable;
mod sample_admission;
mod test_layout;
mod tutorial;
mod webhook_scaffold;
