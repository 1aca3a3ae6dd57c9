#!/usr/bin/env bash
# Fetches the CRD corpus pinned in hack/corpus/crds.pins through the Go module proxy (`go mod
# download`, into the Go module cache under $OPERATOR_GEN_CACHE, default
# $HOME/.cache/operator-gen) and copies each CRD file into $OPERATOR_GEN_CACHE/corpus/crds/NAME/,
# one directory per project. Does nothing when the copy is as the pins and this script say
# (a stamp). The corpus is never vendored into the repository.
# Prints the corpus directory as its last line of stdout.
#
# usage: hack/corpus/crds.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${OPERATOR_GEN_CACHE:-$HOME/.cache/operator-gen}
out="$cache_root/corpus/crds"
pins="$here/crds.pins"
export GOMODCACHE=${GOMODCACHE:-$cache_root/go/mod}
export GOFLAGS=-modcacherw
export GOTOOLCHAIN=local

log() { printf 'corpus: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
command -v go >/dev/null 2>&1 || die "go not found on PATH (install Go 1.26 or newer)"

stamp=$(cat "$pins" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)
if [[ -f $out/.stamp && $(cat "$out/.stamp") == "$stamp" ]]; then
	echo "$out"
	exit 0
fi

work=$(mktemp -d "$cache_root/corpus-XXXXXX" 2>/dev/null || { mkdir -p "$cache_root" && mktemp -d "$cache_root/corpus-XXXXXX"; })
trap 'rm -rf "$work"' EXIT
scratch=$(mktemp -d)
trap 'rm -rf "$work" "$scratch"' EXIT
count=0
while read -r name module version dirs; do
	[[ -z ${name:-} || $name == \#* ]] && continue
	# outside any module, so no go.mod decides what is downloaded
	dir=$(cd "$scratch" && go mod download -json "$module@$version" | grep '"Dir"' | cut -d'"' -f4) ||
		die "cannot download $module@$version"
	[[ -n $dir && -d $dir ]] || die "$module@$version has no directory in the module cache"
	mkdir -p "$work/$name"
	IFS=, read -ra subdirs <<<"$dirs"
	for sub in "${subdirs[@]}"; do
		[[ -d $dir/$sub ]] || die "$module@$version has no $sub: fix hack/corpus/crds.pins"
		for f in "$dir/$sub"/*.yaml; do
			grep -q '^kind: CustomResourceDefinition' "$f" || continue
			target="$work/$name/$(basename "$f")"
			[[ -e $target ]] && die "$name: two CRD files named $(basename "$f"): fix hack/corpus/crds.pins"
			cp "$f" "$target"
			chmod 644 "$target"
			count=$((count + 1))
		done
	done
done <"$pins"
log "$count CRD files from $(grep -cv '^\(#\|$\)' "$pins") projects"
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$work" "$out"
echo "$stamp" >"$out/.stamp"
echo "$out"
