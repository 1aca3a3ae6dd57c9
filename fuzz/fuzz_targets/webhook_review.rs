//! Fuzz target: any bytes as a review body POSTed to the webhook server's mutate, validate and
//! convert paths; the answer is always a JSON review with status 200 or 400.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| operator_gen_tests::fuzz::webhook_review(body));
