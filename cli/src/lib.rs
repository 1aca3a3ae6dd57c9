//! The `operator-gen` command line: scaffolding commands and the manifests source scan.
