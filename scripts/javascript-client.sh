#!/usr/bin/env bash
# The official JavaScript client (npm package @kubernetes/client-node, pinned with its lock file in
# scripts/javascript_client/) against `kubefake serve`, with the client's default kubeconfig handling.
# Pinned to 1.4.0, the newest release that runs on Node 20 (the machine's): 2.x needs Node >= 22.19.
source "$(dirname "$0")/lib.sh"
if ! command -v node >/dev/null 2>&1; then
  echo "javascript-client.sh: node is not on PATH; install Node.js >= 20" >&2
  exit 2
fi
if [ ! -d "$root/scripts/javascript_client/node_modules/@kubernetes/client-node" ]; then
  echo "javascript-client.sh: the JavaScript client is not installed; run: npm ci --prefix scripts/javascript_client" >&2
  exit 2
fi
start_server
step=$((step + 1))
if node "$root/scripts/javascript_client/client.mjs" "$KUBECONFIG"; then
  echo "ok   $step. the JavaScript client works unchanged"
else
  failures=$((failures + 1))
  echo "FAIL $step. the JavaScript client"
fi
stop_server
finish
