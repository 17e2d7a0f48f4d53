#!/usr/bin/env bash
# The live view (/kubefake/v1/ui/) in a real browser: Debian's headless Chromium driven by
# playwright-core (tests/clients/browser, `npm ci` by .ci/run; no browser download) runs
# tests/clients/browser/live-view.test.mjs twice: against `kubefake serve --http
# --authorization-mode AlwaysAllow`, as docs/live-view.md says to open the page, and through `kubectl
# proxy` in front of the default server (HTTPS and RBAC), as it says to reach it there.
source "$(dirname "$0")/lib.sh"
tests="$root/tests/clients/browser"
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  echo "browser-tests.sh: $chromium is missing; install Debian's chromium (apt-get install chromium chromium-driver)" >&2
  exit 2
fi
if [ ! -d "$tests/node_modules/playwright-core" ]; then
  echo "browser-tests.sh: playwright-core is not installed; run: npm ci --prefix tests/clients/browser" >&2
  exit 2
fi

# run_suite NAME URL: the browser test against the server at URL, bounded in time.
run_suite() {
  step=$((step + 1))
  if (cd "$tests" && KUBEFAKE_URL="$2" CHROMIUM="$chromium" timeout 180 \
      node --test --test-reporter=spec --test-timeout=60000 live-view.test.mjs) >"$work/browser.log" 2>&1; then
    grep -E '^[✔✖]' "$work/browser.log" | sed 's/^/    /'
    echo "ok   $step. live view in headless $("$chromium" --version 2>/dev/null | head -1): $1"
  else
    failures=$((failures + 1))
    echo "FAIL $step. live view in headless Chromium: $1"
    sed 's/^/    /' "$work/browser.log"
  fi
}

started=$(date +%s)
start_server --http --authorization-mode AlwaysAllow
run_suite "kubefake serve --http --authorization-mode AlwaysAllow" "$KUBEFAKE_URL"
stop_server

# Under RBAC a browser has no credentials: kubectl proxy adds the kubeconfig's admin token.
start_server
"${newest_kubectl:-kubectl}" proxy --port=0 >"$work/proxy.out" 2>&1 &
proxy_pid=$!
for _ in $(seq 1 100); do
  grep -q 'Starting to serve on' "$work/proxy.out" 2>/dev/null && break
  sleep 0.05
done
proxy_url="http://$(sed -n 's/^Starting to serve on //p' "$work/proxy.out")"
run_suite "kubectl proxy in front of kubefake serve (HTTPS, RBAC)" "$proxy_url"
kill "$proxy_pid" 2>/dev/null || true
wait "$proxy_pid" 2>/dev/null || true
stop_server
echo "browser-tests.sh: $(($(date +%s) - started)) s"
finish
