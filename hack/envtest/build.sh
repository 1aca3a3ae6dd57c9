#!/usr/bin/env bash
# Builds etcd and kube-apiserver from the Go module proxy (through the wrapper
# modules beside this script) into a KUBEBUILDER_ASSETS-style directory
# holding `etcd`, `kube-apiserver` and `kubectl`, and prints that directory as
# its last line of stdout.
#
# usage: hack/envtest/build.sh [DIR]
#   DIR defaults to $ENVTEST_ASSETS_DIR, else <cache root>/envtest/<k8s-version>
#
# `operator-gen envtest use` embeds the same wrapper modules, builds the same way into the same
# directory and writes the same stamp, so the two share one cache.
#
# environment:
#   OPERATOR_GEN_CACHE     cache root (default $XDG_CACHE_HOME/operator-gen, else
#                          $HOME/.cache/operator-gen)
#   GOMODCACHE, GOCACHE    respected when set; else under the cache root
#   ENVTEST_BUILD_KUBECTL  1 builds kubectl even when the machine has one
#   ENVTEST_FORCE          1 rebuilds even when the stamp matches
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kube_mod="$here/kubernetes"
etcd_mod="$here/etcd"

log() { printf 'envtest: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null 2>&1 || die "go not found on PATH (install Go 1.26 or newer)"

mod_version() { # module path, go.mod file
	awk -v m="$1" '{ i = ($1 == "require") ? 2 : 1 } $i == m && $(i + 1) ~ /^v/ { print $(i + 1); exit }' "$2"
}
k8s_version=$(mod_version k8s.io/kubernetes "$kube_mod/go.mod")
etcd_version=$(mod_version go.etcd.io/etcd/server/v3 "$etcd_mod/go.mod")
[[ -n $k8s_version ]] || die "no k8s.io/kubernetes require in $kube_mod/go.mod"
[[ -n $etcd_version ]] || die "no go.etcd.io/etcd/server/v3 require in $etcd_mod/go.mod"
minor=${k8s_version#v1.}
minor=${minor%%.*}

cache_root=${OPERATOR_GEN_CACHE:-${XDG_CACHE_HOME:+$XDG_CACHE_HOME/operator-gen}}
cache_root=${cache_root:-$HOME/.cache/operator-gen}
out=${1:-${ENVTEST_ASSETS_DIR:-$cache_root/envtest/${k8s_version#v}}}
export GOMODCACHE=${GOMODCACHE:-$cache_root/go/mod}
export GOCACHE=${GOCACHE:-$cache_root/go/build}
export CGO_ENABLED=0
# -modcacherw keeps the module cache deletable with plain rm -rf
export GOFLAGS="${GOFLAGS:-} -mod=readonly -modcacherw -trimpath"

want_kubectl_build=${ENVTEST_BUILD_KUBECTL:-0}
machine_kubectl=""
if [[ $want_kubectl_build != 1 ]]; then
	machine_kubectl=$(command -v kubectl || true)
fi

# the stamp names everything the binaries are built from
stamp=$(
	{
		printf 'k8s=%s etcd=%s kubectl=%s\n' "$k8s_version" "$etcd_version" "${machine_kubectl:-built}"
		cat "$kube_mod/go.mod" "$kube_mod/go.sum" "$kube_mod"/*/main.go
		cat "$etcd_mod/go.mod" "$etcd_mod/go.sum" "$etcd_mod/main.go"
		go env GOVERSION
	} | sha256sum | cut -d' ' -f1
)

if [[ ${ENVTEST_FORCE:-0} != 1 && -x $out/etcd && -x $out/kube-apiserver && -x $out/kubectl \
	&& -f $out/.stamp && $(cat "$out/.stamp") == "$stamp" ]]; then
	log "up to date: kube-apiserver $k8s_version, etcd $etcd_version in $out"
	printf '%s\n' "$out"
	exit 0
fi

mkdir -p "$out"
rm -f "$out/.stamp"
work=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT

start=$SECONDS
log "building etcd $etcd_version"
(cd "$etcd_mod" && go build -ldflags '-s -w' -o "$work/etcd" .)

log "building kube-apiserver $k8s_version (a cold build takes a long while)"
version_flags="-X k8s.io/component-base/version.gitVersion=$k8s_version"
version_flags+=" -X k8s.io/component-base/version.gitMajor=1"
version_flags+=" -X k8s.io/component-base/version.gitMinor=$minor"
version_flags+=" -X k8s.io/component-base/version.gitTreeState=clean"
(cd "$kube_mod" && go build -ldflags "-s -w $version_flags" -o "$work/kube-apiserver" ./kube-apiserver)

if [[ -n $machine_kubectl ]]; then
	log "using the machine's kubectl at $machine_kubectl"
	ln -sf "$machine_kubectl" "$work/kubectl"
else
	log "building kubectl $k8s_version"
	(cd "$kube_mod" && go build -ldflags "-s -w $version_flags" -o "$work/kubectl" ./kubectl)
fi

for bin in etcd kube-apiserver kubectl; do
	mv -f "$work/$bin" "$out/$bin"
done
printf '%s\n' "$stamp" >"$out/.stamp"
log "built in $((SECONDS - start))s into $out"
printf '%s\n' "$out"
