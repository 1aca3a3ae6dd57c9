#!/usr/bin/env bash
# Checks the layering of one or more crates: no module cycle (a module that reaches, directly or
# through others, a module that reaches back to it) and no function outside test code longer
# than 100 lines (or --max-fn-lines N). Test items (`#[cfg(test)]`) are left out. Prints what
# it finds; exits 1 when a crate fails.
# usage: hack/check-layers.sh [--max-fn-lines N] [--allow-long PATH]... CRATE_DIR...   e.g. hack/check-layers.sh runtime cli codegen
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="${CARGO_TARGET_DIR:-$repo/target}/hack"
mkdir -p "$out"
bin="$out/check-layers"
if [[ ! -x "$bin" || "$repo/hack/check-layers.rs" -nt "$bin" ]]; then
	rustc --edition 2024 -O -o "$bin" "$repo/hack/check-layers.rs"
fi
exec "$bin" "$@"
