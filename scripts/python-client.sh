#!/usr/bin/env bash
# The official Python client (pip package `kubernetes`) against `kubefake serve`.
source "$(dirname "$0")/lib.sh"
if ! python3 -c "import kubernetes" 2>/dev/null; then
  echo "python-client.sh: the Python package 'kubernetes' is missing (pip install kubernetes)" >&2
  exit 2
fi
start_server
step=$((step + 1))
if python3 "$root/scripts/python_client.py" "$KUBECONFIG"; then
  echo "ok   $step. the Python client works unchanged"
else
  failures=$((failures + 1))
  echo "FAIL $step. the Python client"
fi
# `kubefake dump` against the same server: the one document of a ConfigMap kubectl created.
kubectl --cache-dir "$cache" create configmap from-kubectl --from-literal=v=1 >/dev/null
dumped=$("$bin" dump --kubeconfig "$KUBECONFIG" -n default --resource configmaps |
  awk 'BEGIN { RS = "---\n" } /name: from-kubectl/ { printf "---\n%s", $0 }')
check "kubefake dump -n default --resource configmaps" '---
apiVersion: v1
data:
  v: "1"
kind: ConfigMap
metadata:
  creationTimestamp: "<time>"
  name: from-kubectl
  namespace: default
  resourceVersion: "<rv>"
  uid: <uid>' "$dumped"
stop_server
finish
