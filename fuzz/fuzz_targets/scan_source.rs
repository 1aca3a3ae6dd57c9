//! Fuzz target: any UTF-8 text as a crate root through the source scan and, when it scans, every
//! manifests emitter (CRDs, RBAC, webhooks); diagnostics are fine, panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|source: &str| operator_gen_tests::fuzz::scan_source(source));
