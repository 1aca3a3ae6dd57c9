//! Compile-fail ui tests of the derives: one case per class of bad input under `tests/ui/`,
//! each expected to fail with exactly one error, the one its `.stderr` file holds.
//!
//! The `.stderr` files are pinned to the toolchain CI uses (rustc 1.95); rustc's rendering
//! changes between releases, so on another toolchain this test may fail on layout alone.
//! Refresh them with `TRYBUILD=overwrite cargo test -p operator-gen-tests --test manifests ui::ui`,
//! then read every changed file: each must show one clear error, not a cascade.
//! `tests/tests/manifests/scan_diagnostics.rs` holds `operator-gen manifests`' diagnostics for the
//! same sources.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}
