#!/usr/bin/env bash
# The npm package as a user gets it: packs `kubefake` and `@kubefake/linux-x64` from the built
# binary (scripts/npm-pack.sh), installs both tarballs with @kubernetes/client-node into a new
# project, checks `npx kubefake serve`, then runs tests/clients/javascript's suites there: test/
# with Node's test runner (the fixture, CRUD, watch, informer, a custom resource), vitest/ with
# Vitest and jest/ with Jest (`kubefake/vitest` and `kubefake/jest`). Node 22 (which
# @kubernetes/client-node 2 and Vitest need) comes from npm's `node` package in
# tests/clients/javascript, whose lock file pins the client, Vitest and Jest.
source "$(dirname "$0")/lib.sh"
tests="$root/tests/clients/javascript"
node22="$tests/node_modules/node/bin"
if [ ! -x "$node22/node" ] || [ ! -d "$tests/node_modules/@kubernetes/client-node" ]; then
  echo "javascript-package.sh: Node 22 and the client are not installed; run: npm ci --prefix tests/clients/javascript" >&2
  exit 2
fi
# The versions tests/clients/javascript/package.json pins (npm ci put them in npm's cache).
pinned() { sed -n "s/.*\"$1\": \"\(.*\)\".*/\1/p" "$tests/package.json"; }
client_version=$(pinned '@kubernetes\/client-node')
vitest_version=$(pinned vitest)
jest_version=$(pinned jest)

started=$(date +%s)
"$root/scripts/npm-pack.sh" "$bin" "$work/pack" >/dev/null
mkdir "$work/app"
printf '{ "private": true, "type": "module" }\n' >"$work/app/package.json"
step=$((step + 1))
if (cd "$work/app" && npm install --prefer-offline --no-audit --no-fund --loglevel=error \
    "$work"/pack/kubefake-*.tgz "@kubernetes/client-node@$client_version" \
    "vitest@$vitest_version" "jest@$jest_version" >"$work/npm.log" 2>&1); then
  echo "ok   $step. npm install kubefake (and @kubefake/linux-x64) from the packed tarballs"
else
  failures=$((failures + 1))
  echo "FAIL $step. npm install of the packed tarballs"
  sed 's/^/    /' "$work/npm.log"
  finish
fi
cd "$work/app"
unset KUBEFAKE_BIN

check "npx kubefake --version" "kubefake $(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)" \
  "$(npx --no-install kubefake --version 2>/dev/null)"

# `npx kubefake serve` as a user runs it: ready, served, and stopped as Ctrl-C in a terminal or a
# CI timeout stops it, by a signal to its process group (npx, its shell, the launcher, kubefake).
setsid npx --no-install kubefake serve --kubeconfig "$work/npx-kubeconfig" >"$work/npx.out" 2>&1 &
npx_pid=$!
for _ in $(seq 1 200); do
  grep -q '^KUBECONFIG=' "$work/npx.out" 2>/dev/null && break
  sleep 0.05
done
check "npx kubefake serve, then kubectl get namespace default" "default" \
  "$(kubectl --kubeconfig "$work/npx-kubeconfig" get namespace default -o name 2>&1 | sed 's|^namespace/||')"
kill -TERM -- "-$npx_pid"
wait "$npx_pid" || true
port=$(sed -n 's/^KUBEFAKE_URL=.*:\([0-9]*\)$/\1/p' "$work/npx.out")
still="still serving"
for _ in $(seq 1 100); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then still="port closed"; break; fi
  sleep 0.05
done
check "SIGTERM to npx's process group stops the server" "port closed, stopped" \
  "$still, $(grep -c 'kubefake.*stopped' "$work/npx.out" | sed 's/^1$/stopped/')"

for suite in test vitest jest shared; do cp -r "$tests/$suite" "$work/app/$suite"; done
# run_suite NAME COMMAND...: runs one runner's suite with Node 22 and the repository's CRDs.
run_suite() {
  local name=$1
  shift
  step=$((step + 1))
  if PATH="$node22:$PATH" KUBEFAKE_CRDS="$root/fixtures/crds" "$@" 2>&1 | tee "$work/$name.log" | sed 's/^/    /'; [ "${PIPESTATUS[0]}" = 0 ]; then
    echo "ok   $step. $name (Node $("$node22/node" --version)) against the installed package"
  else
    failures=$((failures + 1))
    echo "FAIL $step. $name against the installed package"
  fi
}
run_suite "node --test" node --test --test-reporter=spec 'test/*.test.mjs'
run_suite "vitest" env NO_COLOR=1 node node_modules/vitest/vitest.mjs run --dir vitest
# Jest runs ES modules (the client is one) under Node's VM modules flag.
run_suite "jest" node --experimental-vm-modules node_modules/jest/bin/jest.js --config jest/jest.config.json
echo "javascript-package.sh: $(($(date +%s) - started)) s (pack, install, tests)"
finish
