//! Derive macros of operator-gen, a thin shim over `operator-gen-codegen`.
