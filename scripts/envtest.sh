#!/usr/bin/env bash
# controller-runtime's envtest on kubefake: `kubefake envtest-assets DIR` writes the
# kube-apiserver, etcd and kubectl that envtest starts, and the kubebuilder-style suite in
# tests/envtest (its own Go module: a two-version CRD with a conversion webhook, a validating
# webhook, a reconciler owning a Deployment and a ConfigMap, its ClusterRole checked through a
# ServiceAccount token, client-go's clientset, informers and protobuf) runs unchanged with
# KUBEBUILDER_ASSETS=DIR; its package serve is the client-go example that starts `kubefake serve`
# itself ($KUBEFAKE_BIN), for tests without envtest. Prints the suite's wall time; exits non-zero when a test fails.
# Needs Go (the version tests/envtest/go.mod names) and its modules (`.ci/run` downloads them).
set -euo pipefail

if ! command -v go >/dev/null 2>&1; then
  echo "$(basename "$0"): go is not on PATH; the envtest suite is a Go module (tests/envtest)" >&2
  exit 2
fi

source "$(dirname "${BASH_SOURCE[0]}")/kubefake-bin.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bin" envtest-assets "$work/assets" >/dev/null
for asset in kube-apiserver etcd; do
  if [ ! -x "$work/assets/$asset" ]; then
    echo "$(basename "$0"): kubefake envtest-assets wrote no $asset" >&2
    exit 1
  fi
done

# Compile first, so that the wall time below is the suite's, not the Go compiler's.
(cd tests/envtest && go vet ./... && go test -count=1 -exec true ./... >/dev/null)

began=$(date +%s.%N)
rc=0
(
  cd tests/envtest
  KUBEBUILDER_ASSETS="$work/assets" KUBEFAKE_BIN="$bin" timeout 300 go test ./... -count=1 -v -timeout 240s
) || rc=$?
ended=$(date +%s.%N)
wall=$(awk -v a="$began" -v b="$ended" 'BEGIN { printf "%.2f", b - a }')

if [ "$rc" -ne 0 ]; then
  echo "$(basename "$0"): the envtest suite failed (exit $rc) after ${wall}s on kubefake"
  exit 1
fi
echo "$(basename "$0"): the envtest suite passed in ${wall}s on kubefake"
