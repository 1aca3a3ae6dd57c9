#!/usr/bin/env bash
# Time the cold `cargo build` of a freshly generated project: `init` and `create api` with the
# given operator-gen binary in a temp dir, built with an empty CARGO_TARGET_DIR. Prints the wall
# seconds, how many crates were compiled, and whether syn and k8s-openapi were compiled and how
# often. usage: hack/cold-build.sh [operator-gen binary] (default: target/debug/operator-gen)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$repo/target/debug/operator-gen}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/cold-build"
cd "$work/cold-build"
"$bin" init --quiet
"$bin" create api --group ship --version v1 --kind Frigate --yes --quiet
start=$(date +%s.%N)
CARGO_TARGET_DIR="$work/target" cargo build --quiet --message-format=json >"$work/build.json"
end=$(date +%s.%N)
units=$(grep -c '"reason":"compiler-artifact"' "$work/build.json")
count() { grep '"reason":"compiler-artifact"' "$work/build.json" | grep -c "\"name\":\"$1\"" || true; }
printf 'cold build: %.0f s, %s crates compiled, syn %s time(s), k8s-openapi %s time(s), operator-gen-codegen %s time(s)\n' \
	"$(echo "$end - $start" | bc)" "$units" "$(count syn)" "$(count k8s_openapi)" "$(count operator_gen_codegen)"
