#!/usr/bin/env bash
# Runs the test suite (`cargo test --workspace --locked`, extra arguments passed on) and then
# says what it ran and what it skipped, from the records the tests themselves leave under
# <target>/operator-gen/test-record/ (see envtest/src/ci.rs): how many tests ran against a real
# kube-apiserver, the scaffolded operator end to end, cargo-generate, the Go peers and mdBook, and every
# skip with its reason and the command that installs what was missing. Exits with cargo's status.
#
# usage: hack/test.sh [cargo test arguments...]
set -uo pipefail
cd "$(dirname "$0")/.."

target=${CARGO_TARGET_DIR:-target}
record="$target/operator-gen/test-record"
rm -rf "$record"

# every package the lock names, for every target: tests that run `cargo metadata --offline` need
# them all, and a build fetches only what this platform compiles
cargo fetch --locked --quiet || exit $?
cargo test --workspace --locked "$@"
status=$?

echo
echo "test record ($record):"
for category in apiserver operator-e2e cargo-generate go-peers mdbook; do
	dir="$record/ran/$category"
	count=0
	[ -d "$dir" ] && count=$(find "$dir" -type f | wc -l)
	printf '  ran against %-15s %3d test(s)\n' "$category:" "$count"
	if [ "$count" -gt 0 ]; then
		find "$dir" -type f -exec cat {} + | sort | sed 's/^/      /'
	fi
done
skips=0
[ -d "$record/skips" ] && skips=$(find "$record/skips" -type f | wc -l)
printf '  skipped: %d\n' "$skips"
if [ "$skips" -gt 0 ]; then
	find "$record/skips" -type f -exec cat {} + | sort | sed 's/^/    /'
fi
exit "$status"
