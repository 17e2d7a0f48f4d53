#!/usr/bin/env bash
# The npm package as a user gets it: packs `kubefake` and `@kubefake/linux-x64` from the built
# binary (scripts/npm-pack.sh), installs both tarballs with @kubernetes/client-node into a new
# project, checks `npx kubefake serve`, then runs tests/clients/javascript/test with Node's test
# runner there (the fixture, CRUD, watch, informer, a custom resource). Node 22 (which
# @kubernetes/client-node 2 needs) comes from npm's `node` package in tests/clients/javascript.
source "$(dirname "$0")/lib.sh"
tests="$root/tests/clients/javascript"
node22="$tests/node_modules/node/bin"
if [ ! -x "$node22/node" ] || [ ! -d "$tests/node_modules/@kubernetes/client-node" ]; then
  echo "javascript-package.sh: Node 22 and the client are not installed; run: npm ci --prefix tests/clients/javascript" >&2
  exit 2
fi
client_version=$(sed -n 's/.*"@kubernetes\/client-node": "\(.*\)".*/\1/p' "$tests/package.json")

started=$(date +%s)
"$root/scripts/npm-pack.sh" "$bin" "$work/pack" >/dev/null
mkdir "$work/app"
printf '{ "private": true, "type": "module" }\n' >"$work/app/package.json"
step=$((step + 1))
if (cd "$work/app" && npm install --prefer-offline --no-audit --no-fund --loglevel=error \
    "$work"/pack/kubefake-*.tgz "@kubernetes/client-node@$client_version" >"$work/npm.log" 2>&1); then
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

cp -r "$tests/test" "$work/app/test"
step=$((step + 1))
if PATH="$node22:$PATH" KUBEFAKE_CRDS="$root/fixtures/crds" node --test --test-reporter=spec 2>&1 | tee "$work/node-test.log" | sed 's/^/    /'; [ "${PIPESTATUS[0]}" = 0 ]; then
  echo "ok   $step. node --test (Node $("$node22/node" --version)) against the installed package"
else
  failures=$((failures + 1))
  echo "FAIL $step. node --test against the installed package"
fi
echo "javascript-package.sh: $(($(date +%s) - started)) s (pack, install, tests)"
finish
