//! The `operator-gen` command line: scaffolding commands and the manifests source scan.

fn main() {
    std::process::exit(operator_gen::cli::run_from(std::env::args_os()));
}
