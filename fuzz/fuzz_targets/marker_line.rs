//! Fuzz target: any UTF-8 line through the marker parser; it may refuse, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|line: &str| operator_gen_tests::fuzz::marker_line(line));
