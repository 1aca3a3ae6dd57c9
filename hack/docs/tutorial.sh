#!/usr/bin/env bash
# Builds the book's tutorial project, docs/tutorial/project/, from operator-gen commands and the
# tutorial's own code: scaffolds a project with the commands the chapters show, copies the files
# the tutorial writes (docs/tutorial/code/, each .rs file under the project's license header) over
# the scaffold, then generates the manifests and the Helm chart. The result is committed;
# tests/tests/project/tutorial.rs runs this script again and fails when the two differ.
#
# usage: hack/docs/tutorial.sh [dir]   (default: docs/tutorial/project, replaced)
# OPERATOR_GEN names the operator-gen binary to run (default: built from this checkout).
# Needs make and kubectl (for `make build-installer`, which renders config/default).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd -P)"
out="${1:-$repo/docs/tutorial/project}"
code="$repo/docs/tutorial/code"

if [ -e "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -f "$out/PROJECT" ]; then
	echo "tutorial: error: $out is neither empty nor a project; pass another directory" >&2
	exit 1
fi
if [ -z "${OPERATOR_GEN:-}" ]; then
	cargo build -q --manifest-path "$repo/Cargo.toml" -p operator-gen --bin operator-gen
	OPERATOR_GEN="${CARGO_TARGET_DIR:-$repo/target}/debug/operator-gen"
fi
OPERATOR_GEN="$(cd "$(dirname "$OPERATOR_GEN")" && pwd)/$(basename "$OPERATOR_GEN")"
# the license headers carry this year, whatever the year of the run
export OPERATOR_GEN_YEAR=2026
# the scan cache goes to a scratch target directory, not into the project
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export CARGO_TARGET_DIR="$scratch/target"

rm -rf "$out"
mkdir -p "$out"
cd "$out"
run() {
	echo "+ operator-gen $*"
	"$OPERATOR_GEN" --quiet "$@"
}

# the project, its API and its webhooks (chapters "Overview" to "Defaulting and validating webhooks")
run init --domain tutorial.operator-gen.io --project-name cronjob --runtime-path "$repo"
run create api --group batch --version v1 --kind CronJob --resource --controller
run create webhook --group batch --version v1 --kind CronJob --defaulting --programmatic-validation
# the second version, converted through v1 (chapter "A second version, with conversion")
run create api --group batch --version v2 --kind CronJob --resource --controller=false
run create webhook --group batch --version v1 --kind CronJob --conversion --spoke v2

# the code the tutorial writes, over the scaffold
(cd "$code" && find . -type f | sort) | while read -r file; do
	mkdir -p "$(dirname "$file")"
	case "$file" in
	*.rs) cat hack/boilerplate.rs.txt "$code/$file" >"$file" ;;
	*) cp "$code/$file" "$file" ;;
	esac
done

# the manifests, and the Helm chart from config/default (chapter "Deploying")
run manifests
echo "+ make build-installer"
make --no-print-directory -s build-installer OPERATOR_GEN="$OPERATOR_GEN" >/dev/null
run edit --plugins helm

# operator-gen's crates come from this checkout, named relative to the project, so the
# committed project builds wherever the checkout is
rel="$(realpath -m --relative-to="$repo/docs/tutorial/project" "$repo")"
sed -i "s|{ path = \"$repo/|{ path = \"$rel/|" .cargo/config.toml
echo "tutorial: wrote $out"
