//! Fuzz target: any UTF-8 text as a Rust file the scaffold commands edit (the wiring inserted at
//! and removed from each scaffold marker, `delete api`'s token search, `edit --multigroup`'s
//! `super::` check); refusals are fine, panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| operator_gen_tests::fuzz::scaffold_edit(text));
