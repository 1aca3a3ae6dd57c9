//! Rebuilds the CLI when a file under `templates/` is added, removed or changed, so the
//! embedded template tree never goes stale.

fn main() {
    println!("cargo:rerun-if-changed=../templates");
    println!("cargo:rerun-if-changed=build.rs");
}
