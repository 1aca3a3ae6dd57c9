#!/usr/bin/env bash
# Prints the directory of etcd, kube-apiserver and kubectl for KUBEBUILDER_ASSETS as its last
# line of stdout. It runs this checkout's `operator-gen envtest use` (cli/src/commands/envtest.rs),
# the product's one builder: it takes the binaries from the per-user cache when their stamp is
# fresh, else from setup-envtest's directories, else builds them from the Go module proxy
# through the wrapper modules beside this script (which the command embeds).
#
# usage: hack/envtest/build.sh [--k8s-version VERSION]
#
# environment, read by the command:
#   OPERATOR_GEN_CACHE     cache root (default $XDG_CACHE_HOME/operator-gen, else
#                          $HOME/.cache/operator-gen); the binaries go to <root>/envtest/<version>
#   GOMODCACHE, GOCACHE    respected when set; else under the cache root
#   ENVTEST_BUILD_KUBECTL  1 builds kubectl even when the machine has one
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
command -v cargo >/dev/null 2>&1 || {
	echo "envtest: error: cargo not found on PATH; install Rust, then run this again" >&2
	exit 1
}
cd "$root"
cargo run --quiet --locked -p operator-gen -- envtest use "$@"
