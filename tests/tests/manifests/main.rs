//! What `operator-gen manifests` and the derives generate, without building a project: the
//! source scan, the derives, the marker registry, the compile-fail ui cases, conformance with
//! controller-gen's and kubebuilder's goldens, the differential test against controller-gen and
//! its twins, the Kubernetes types table, naming, stable output and no-panic runs.
//!
//! The integration tests are four binaries, one per directory of `tests/tests/` (`cli`,
//! `manifests`, `apiserver`, `project`): kube is linked four times, not once per test file.
//! To add a test file to this group, put it in this directory and add its `mod` line below
//! (`project`'s `test_layout` fails on a test file outside a group or not declared). Run one
//! file's tests with `cargo test -p operator-gen-tests --test manifests <module>::`.
//! A group's tests share one process and run in parallel: none may change process-wide state
//! (environment, current directory, panic hook) for the others, and every build in the
//! generated projects' shared target directory holds `operator_gen_tests::operator::build_lock`.

mod conformance;
mod conformance_webhook;
mod crd_corpus;
mod derive;
mod differential_controller_gen;
mod differential_docs;
mod differential_twins;
mod from_crd;
mod k8s_types;
mod kube_rs;
mod manifests_stable;
mod naming_flect;
mod no_panic;
mod registry;
mod scan_diagnostics;
mod scan_files;
mod scan_resolution;
mod ui;
mod workspace_crates;
mod yaml_readback;
