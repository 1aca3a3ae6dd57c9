//! Against a real etcd and kube-apiserver (`KUBEBUILDER_ASSETS`), without a generated project:
//! the control plane itself, the generated CRDs and their markers, the fake client's behaviour
//! table and its admission of custom resources, the runtime's webhook server, its secure metrics,
//! its sharded watches, its lean caches and its warm standby.
//!
//! The integration tests are four binaries, one per directory of `tests/tests/` (`cli`,
//! `manifests`, `apiserver`, `project`): kube is linked four times, not once per test file.
//! To add a test file to this group, put it in this directory and add its `mod` line below
//! (`project`'s `test_layout` fails on a test file outside a group or not declared). Run one
//! file's tests with `cargo test -p operator-gen-tests --test apiserver <module>::`.
//! A group's tests share one process and run in parallel: none may change process-wide state
//! (environment, current directory, panic hook) for the others, and every build in the
//! generated projects' shared target directory holds `operator_gen_tests::operator::build_lock`.

mod apiserver;
mod apiserver_markers;
mod control_plane;
mod crd_size;
mod fake_admission;
mod fake_client;
mod lean_cache;
mod metrics_secure;
mod shard_handoff;
mod sharded_watch;
mod typed_apply;
mod warm_standby;
mod webhook_server;

// kubebuilder's project-v4 kinds (testdata/conformance/project_v4), which `apiserver` and
// `webhook_server` both use: a file may be compiled once per binary
#[path = "../../../testdata/conformance/project_v4/src/lib.rs"]
#[allow(dead_code)]
mod project_v4;
