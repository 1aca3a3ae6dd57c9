#!/usr/bin/env bash
# Scaffold a demo operator with operator-gen's built-in defaults: `init`, then `create api` for
# one kind, then `manifests`. usage: hack/demo.sh [dir] (default: ./demo-operator)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-demo-operator}"
if [ -e "$dir" ]; then
	echo "demo: error: $dir already exists; pass another directory" >&2
	exit 1
fi
cargo build -q --manifest-path "$repo/Cargo.toml" -p operator-gen
bin="$repo/target/debug/operator-gen"
mkdir -p "$dir"
cd "$dir"
"$bin" init
"$bin" create api --group webapp --version v1 --kind Guestbook --yes
"$bin" manifests
echo "demo: scaffolded $(pwd); its .cargo/config.toml (local, git-ignored) takes operator-gen's crates from $repo"
echo "demo: next: cd $dir && cargo build && kubectl kustomize config/default"
