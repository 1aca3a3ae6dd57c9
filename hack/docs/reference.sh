#!/usr/bin/env bash
# Rewrites the book's generated reference pages from their sources:
#   docs/src/reference/commands.md  from the CLI's clap definitions (cli/src/cli.rs)
#   docs/src/reference/markers.md   from the marker registry (codegen/src/markers/)
# Run it after changing a command, a flag or a marker; tests/tests/cli/book.rs fails while a page is
# stale.
#
# usage: hack/docs/reference.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo run --quiet --locked -p operator-gen --example reference -- docs/src/reference
