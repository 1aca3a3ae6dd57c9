#!/usr/bin/env bash
# Fetches the Go modules of alpha migrate's corpus (corpus.tsv beside this script) from the Go
# module proxy into the module cache under $OPERATOR_GEN_CACHE (default
# $HOME/.cache/operator-gen/go/mod), each at its pinned version; a module already there is not
# fetched again. Nothing is vendored into the repository. Prints each module's directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${OPERATOR_GEN_CACHE:-$HOME/.cache/operator-gen}
export GOMODCACHE=${GOMODCACHE:-$cache_root/go/mod}
export GOFLAGS=-modcacherw
export GOTOOLCHAIN=local
command -v go >/dev/null 2>&1 || { echo "migrate-corpus: error: go not found on PATH" >&2; exit 1; }

grep -v '^#' "$here/corpus.tsv" | cut -f1,2 | sort -u | while IFS=$'\t' read -r module version; do
	[ -n "$module" ] || continue
	dir="$GOMODCACHE/$module@$version"
	if [ ! -d "$dir" ]; then
		echo "migrate-corpus: fetching $module@$version" >&2
		go mod download "$module@$version"
	fi
	echo "$dir"
done
