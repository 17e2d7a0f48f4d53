#!/usr/bin/env bash
# Every client script (kubectl, the Python client and package (pytest, kopf), the JavaScript
# client, the npm package, the live view in headless Chromium and fabric8 for Java), each against a fresh `kubefake serve`, then controller-runtime's envtest
# suite and the client-go example (tests/envtest, Go), then controller-runtime v0.24.1's own test suite on envtest.
# Exits non-zero if any differs from what a real cluster prints or does.
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --bin kubefake || exit 1
status=0
for script in scripts/readme-quickstarts.sh scripts/walkthrough.sh scripts/watch.sh scripts/lifecycle.sh scripts/printing.sh scripts/schema.sh scripts/apply.sh scripts/versions.sh scripts/admission.sh scripts/policy.sh scripts/builtin.sh scripts/simulate.sh scripts/auth.sh scripts/faults.sh scripts/python-client.sh scripts/python-package.sh scripts/javascript-client.sh scripts/javascript-package.sh scripts/browser-tests.sh scripts/java-client.sh scripts/envtest.sh scripts/controller-runtime.sh; do
  echo "== $script"
  bash "$script" || status=1
done
exit $status
