//! Fuzz target: any UTF-8 text as a crate root through the source scan and, when it scans, every
//! manifests emitter (CRDs, RBAC, webhooks); diagnostics are fine, panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use operator_gen::{manifests, scan};
use operator_gen_codegen::schema::Settings;
use std::path::Path;

fuzz_target!(|source: &str| {
    let Ok(universe) = scan::scan_source(Path::new("src/lib.rs"), source) else {
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
});
