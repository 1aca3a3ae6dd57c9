#!/usr/bin/env bash
# Regenerates codegen/src/known/k8s.json, the table of Kubernetes types: starts the test
# kube-apiserver with every API group served, fetches its /openapi/v3 documents, reads the Go
# sources of the same release from the Go module cache the apiserver was built from, and
# transforms them as controller-gen transforms Go types (tests/src/k8s_types.rs). The test
# tests/tests/manifests/k8s_types.rs runs the same build and fails when the committed table differs.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=/dev/null
source hack/envtest/ensure.sh
UPDATE_GOLDENS=1 cargo test -p operator-gen-tests --test manifests --locked k8s_types::
