//! The fuzz targets' entry functions: the cargo-fuzz targets under `fuzz/` (nightly) and the
//! stable corpus run `tests/tests/manifests/no_panic.rs` call the same two functions.

use std::path::Path;

use operator_gen::manifests;
use operator_gen_codegen::schema::Settings;

/// Target `marker_line`: any text through the marker parser; it may refuse, never panic.
pub fn marker_line(line: &str) {
    let _ = operator_gen_codegen::markers::parse_line(line);
}

/// Target `scan_source`: any text as a crate root through the source scan and, when it scans,
/// every manifests emitter (CRDs, RBAC, webhooks) under two settings; diagnostics are fine,
/// panics are not.
pub fn scan_source(source: &str) {
    let Ok(universe) = manifests::scan_source(Path::new("src/lib.rs"), source) else {
        return;
    };
    for settings in [
        Settings::default(),
        Settings {
            allow_dangerous_types: true,
            max_desc_len: Some(3),
        },
    ] {
        let _ = manifests::outputs(&universe, &settings, "manager-role");
    }
}
