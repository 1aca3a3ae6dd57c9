//! Fuzz target: any UTF-8 text as a types file through the storage-version marker reader, and
//! the marker added or removed where it says.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| operator_gen_tests::fuzz::storage_marker(text));
