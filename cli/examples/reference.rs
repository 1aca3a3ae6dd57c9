//! Writes the book's generated reference pages (the command and marker references) into
//! `docs/src/reference/` of the workspace, or into the directory given as the only argument.
//! `hack/docs/reference.sh` runs it; not part of the installed CLI.

use std::path::PathBuf;

use operator_gen::reference;

fn main() {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(reference::DIR)
        });
    for (name, text) in reference::pages() {
        let path = dir.join(name);
        let same = std::fs::read_to_string(&path).is_ok_and(|old| old == text);
        if same {
            println!("unchanged {}", path.display());
            continue;
        }
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
        println!("wrote {}", path.display());
    }
}
