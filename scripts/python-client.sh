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
stop_server
finish
