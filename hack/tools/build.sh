#!/usr/bin/env bash
# Builds the Go peers the differential tests and benchmarks use as judges, from the Go module
# proxy, into $OPERATOR_GEN_CACHE/tools/bin (default $HOME/.cache/operator-gen/tools/bin):
#   controller-gen v0.21.0, helm v3.19.0, kubebuilder v4.15.0, flect-pluralize (flect v1.0.3,
#   the program beside this script). Each is rebuilt only when its stamp is missing or stale.
# Prints the bin directory as its last line of stdout.
#
# usage: hack/tools/build.sh [TOOL ...]   (default: all four)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${OPERATOR_GEN_CACHE:-$HOME/.cache/operator-gen}
bin="$cache_root/tools/bin"
export GOMODCACHE=${GOMODCACHE:-$cache_root/go/mod}
export GOCACHE=${GOCACHE:-$cache_root/go/build}
export CGO_ENABLED=0
export GOFLAGS="-modcacherw -trimpath"
mkdir -p "$bin"

log() { printf 'tools: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
command -v go >/dev/null 2>&1 || die "go not found on PATH (install Go 1.26 or newer)"

CONTROLLER_GEN_VERSION=v0.21.0
HELM_VERSION=v3.19.0
KUBEBUILDER_VERSION=v4.15.0

# fresh NAME STAMP: true when $bin/NAME exists and was built from STAMP
fresh() { [[ -x $bin/$1 && -f $bin/.$1.stamp && $(cat "$bin/.$1.stamp") == "$2" ]]; }
stamp() { printf '%s\n' "$2" >"$bin/.$1.stamp"; }

build_controller_gen() {
	local s="controller-gen $CONTROLLER_GEN_VERSION $(go env GOVERSION)"
	fresh controller-gen "$s" && return 0
	log "building controller-gen $CONTROLLER_GEN_VERSION"
	GOBIN="$bin" go install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_GEN_VERSION"
	stamp controller-gen "$s"
}

build_helm() {
	local s="helm $HELM_VERSION $(go env GOVERSION)"
	fresh helm "$s" && return 0
	log "building helm $HELM_VERSION"
	GOBIN="$bin" go install -ldflags "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
		"helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
	stamp helm "$s"
}

build_kubebuilder() {
	# `go install` of this version fails (the proxy refuses its version list), so download the
	# module, copy it out of the read-only module cache and build it there. kubebuilder reads its
	# version from the build's VCS stamp, so the copy becomes a git repository tagged with it.
	local s="kubebuilder $KUBEBUILDER_VERSION version-stamped $(go env GOVERSION)"
	if ! fresh kubebuilder "$s"; then
		log "building kubebuilder $KUBEBUILDER_VERSION"
		command -v git >/dev/null 2>&1 || die "git not found on PATH (kubebuilder's version stamp needs it)"
		local dir work
		dir=$(cd "$here" && go mod download -json "sigs.k8s.io/kubebuilder/v4@$KUBEBUILDER_VERSION" \
			| sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
		[[ -d $dir ]] || die "go mod download did not give kubebuilder's source directory"
		work=$(mktemp -d)
		cp -R "$dir/." "$work/"
		chmod -R u+w "$work"
		(
			cd "$work"
			export GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z
			git init -q
			git add -A
			git -c user.name=tools -c user.email=tools@localhost commit -qm "kubebuilder $KUBEBUILDER_VERSION"
			git tag "$KUBEBUILDER_VERSION"
			GOFLAGS="$GOFLAGS -buildvcs=true" go build -o "$bin/kubebuilder" .
		)
		rm -rf "$work"
		"$bin/kubebuilder" version | grep -q "$KUBEBUILDER_VERSION" \
			|| die "kubebuilder does not report $KUBEBUILDER_VERSION"
		stamp kubebuilder "$s"
	fi
	warm_kubebuilder_modules
}

# The modules a kubebuilder go/v4 project needs (controller-runtime and its graph), fetched once
# into the module cache by scaffolding one project with the network, so that benchmarks can
# scaffold and load kubebuilder projects offline (GOPROXY=off, see tests/benches/manifests.rs).
warm_kubebuilder_modules() {
	local s="kubebuilder-modules $KUBEBUILDER_VERSION $(go env GOVERSION)"
	[[ -f $bin/.kubebuilder-modules.stamp && $(cat "$bin/.kubebuilder-modules.stamp") == "$s" ]] && return 0
	log "fetching the modules of a kubebuilder $KUBEBUILDER_VERSION project"
	local work
	work=$(mktemp -d)
	mkdir "$work/warm"
	(
		cd "$work/warm"
		"$bin/kubebuilder" init --domain example.com --repo example.com/warm --skip-go-version-check >/dev/null
		"$bin/kubebuilder" create api --group fleet --version v1 --kind Ship --resource --controller --make=false >/dev/null
		go list -deps -test ./... >/dev/null
	)
	rm -rf "$work"
	printf '%s\n' "$s" >"$bin/.kubebuilder-modules.stamp"
}

build_flect() {
	local s
	s="flect $(cat "$here/flect/go.mod" "$here/flect/go.sum" "$here/flect/main.go" | sha256sum | cut -d' ' -f1) $(go env GOVERSION)"
	fresh flect-pluralize "$s" && return 0
	log "building flect-pluralize"
	(cd "$here/flect" && go build -mod=readonly -o "$bin/flect-pluralize" .)
	stamp flect-pluralize "$s"
}

tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || tools=(flect controller-gen kubebuilder helm)
for t in "${tools[@]}"; do
	case $t in
	controller-gen) build_controller_gen ;;
	helm) build_helm ;;
	kubebuilder) build_kubebuilder ;;
	flect) build_flect ;;
	*) die "unknown tool '$t' (known: flect controller-gen kubebuilder helm)" ;;
	esac
done
printf '%s\n' "$bin"
