//! The `operator-gen` command line: scaffolding commands and the manifests source scan.

// the scan and the emitters allocate many small values on several threads at once; mimalloc's
// per-thread heaps serve them faster than the system allocator
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(operator_gen::cli::run_from(std::env::args_os()));
}
