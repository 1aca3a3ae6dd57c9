//! Fuzz target: any UTF-8 text as a `PROJECT` file: refused, or parsed into a project that
//! survives a render and a parse.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| operator_gen_tests::fuzz::project_file(text));
