#!/usr/bin/env bash
# Regenerates testdata/differential from one list (hack/twins/main.go): the Go API package and
# its Rust twin, then controller-gen's CRDs for the Go side as testdata/differential/golden.json.
# Needs Go and controller-gen (hack/tools/build.sh); Go modules come from the module proxy the
# first time and from $OPERATOR_GEN_CACHE/go/mod afterwards.
#
# usage: hack/twins/generate.sh [OUT]   (default testdata/differential; the differential test
#        writes into a temporary OUT to check the committed files are current)
# CONTROLLER_GEN names the controller-gen binary; by default hack/tools/build.sh provides it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cache_root=${OPERATOR_GEN_CACHE:-$HOME/.cache/operator-gen}
export GOMODCACHE=${GOMODCACHE:-$cache_root/go/mod}
export GOCACHE=${GOCACHE:-$cache_root/go/build}
export GOFLAGS="-modcacherw" GOTOOLCHAIN=local CGO_ENABLED=0

# k8s-openapi's source at the version Cargo.lock pins, from cargo's registry cache
k8s_openapi_version=$(sed -n '/^name = "k8s-openapi"$/{n;s/^version = "\(.*\)"$/\1/p;}' "$root/Cargo.lock")
[[ -n $k8s_openapi_version ]] || { echo "twins: error: Cargo.lock pins no k8s-openapi" >&2; exit 1; }
find_openapi() { compgen -G "${CARGO_HOME:-$HOME/.cargo}/registry/src/*/k8s-openapi-$k8s_openapi_version" | head -n1; }
openapi=$(find_openapi || true)
if [[ -z $openapi ]]; then
	(cd "$root" && cargo fetch --locked)
	openapi=$(find_openapi)
fi

out=${1:-$root/testdata/differential}
mkdir -p "$out"
out=$(cd "$out" && pwd)
(cd "$here" && go run . -k8s-openapi "$openapi" -out "$out")
# the Rust twin is a module of the test crate: formatted as `cargo fmt` leaves it
rustfmt --edition 2024 "$out"/rust/src/*.rs

controller_gen=${CONTROLLER_GEN:-$(bash "$root/hack/tools/build.sh" controller-gen | tail -n1)/controller-gen}
crds=$(mktemp -d)
trap 'rm -rf "$crds"' EXIT
(cd "$out/go" && GOPROXY=off GOFLAGS=-mod=mod "$controller_gen" crd paths=./... output:crd:dir="$crds")
(cd "$here" && go run . golden "$crds" "$out/golden.json")
echo "twins: wrote $out" >&2
