# Source this file: it builds the envtest binaries when they are missing or stale (see build.sh),
# then exports KUBEBUILDER_ASSETS. A failed build returns non-zero from `source`.
#
# usage: source hack/envtest/ensure.sh
_envtest_out=$(bash "$(dirname "${BASH_SOURCE[0]}")/build.sh") || {
	echo "envtest: error: hack/envtest/build.sh failed; see its output above" >&2
	unset _envtest_out
	return 1
}
export KUBEBUILDER_ASSETS="${_envtest_out##*$'\n'}"
unset _envtest_out
echo "envtest: KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS" >&2
