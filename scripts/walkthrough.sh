#!/usr/bin/env bash
# The "Extend the Kubernetes API with CustomResourceDefinitions" walkthrough, run with a real
# kubectl against `kubefake serve`. Every step's output is compared with what a real cluster
# prints (ages, uids, timestamps and resourceVersions normalised); any difference fails.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

if ! command -v kubectl >/dev/null 2>&1; then
  echo "walkthrough: kubectl is not on PATH; install kubectl >= 1.30 (the machine image ships 1.32)" >&2
  exit 2
fi

bin=${KUBEFAKE_BIN:-}
if [ -z "$bin" ]; then
  cargo build --quiet --bin kubefake
  bin="$here/target/debug/kubefake"
fi

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" serve --port 0 --kubeconfig "$work/kubeconfig" >"$work/stdout" 2>"$work/stderr" &
server_pid=$!
for _ in $(seq 1 200); do
  grep -q '^KUBECONFIG=' "$work/stdout" 2>/dev/null && break
  sleep 0.05
done
if ! grep -q '^KUBEFAKE_URL=http://127.0.0.1:' "$work/stdout"; then
  echo "walkthrough: kubefake serve did not report its URL" >&2
  cat "$work/stdout" "$work/stderr" >&2
  exit 1
fi
export KUBECONFIG="$work/kubeconfig"
cache="$work/cache"

failures=0
step=0

# normalise: ages, timestamps, uids and resourceVersions differ run to run.
normalise() {
  sed -E \
    -e 's/[0-9]+(s|m[0-9]*s?|h[0-9]*m?)$/<age>/' \
    -e 's/(creationTimestamp: )"[^"]+"/\1"<time>"/' \
    -e 's/(resourceVersion: )"[0-9]+"/\1"<rv>"/' \
    -e 's/(uid: )[0-9a-f-]{36}/\1<uid>/'
}

# expect NAME EXIT_CODE EXPECTED_OUTPUT -- kubectl ARGS...
expect() {
  local name=$1 want_rc=$2 want=$3
  shift 4
  step=$((step + 1))
  local got rc=0
  got=$(kubectl --cache-dir "$cache" "$@" 2>&1) || rc=$?
  got=$(printf '%s\n' "$got" | normalise)
  want=$(printf '%s\n' "$want" | normalise)
  if [ "$rc" != "$want_rc" ] || [ "$got" != "$want" ]; then
    failures=$((failures + 1))
    echo "FAIL $step. $name: kubectl $* (exit $rc, want $want_rc)"
    diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | sed 's/^/    /' || true
  else
    echo "ok   $step. $name"
  fi
}

expect "create the CRD" 0 \
'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created' \
-- apply -f fixtures/crds/resourcedefinition.yaml

expect "wait for Established" 0 \
'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com condition met' \
-- wait --for condition=established --timeout=10s crd/crontabs.stable.example.com

expect "create the CronTab" 0 \
'crontab.stable.example.com/my-new-cron-object created' \
-- apply -f fixtures/objects/my-crontab.yaml

for name in crontab ct crontabs CronTab crontabs.stable.example.com; do
  expect "kubectl get $name" 0 \
'NAME                 AGE
my-new-cron-object   0s' \
  -- get "$name"
done

expect "re-apply is unchanged" 0 \
'crontab.stable.example.com/my-new-cron-object unchanged' \
-- apply -f fixtures/objects/my-crontab.yaml

expect "raw YAML" 0 \
'apiVersion: v1
items:
- apiVersion: stable.example.com/v1
  kind: CronTab
  metadata:
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: |
        {"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"annotations":{},"name":"my-new-cron-object","namespace":"default"},"spec":{"cronSpec":"* * * * */5","image":"my-awesome-cron-image"}}
    creationTimestamp: "2021-06-20T07:35:27Z"
    generation: 1
    name: my-new-cron-object
    namespace: default
    resourceVersion: "1326"
    uid: 9aab1d66-628e-41bb-a422-57b8b3b1f5a9
  spec:
    cronSpec: '"'"'* * * * */5'"'"'
    image: my-awesome-cron-image
kind: List
metadata:
  resourceVersion: ""' \
-- get ct -o yaml

expect "api-resources lists it" 0 \
'NAME       SHORTNAMES   APIVERSION              NAMESPACED   KIND
crontabs   ct           stable.example.com/v1   true         CronTab' \
-- api-resources --api-group=stable.example.com

expect "delete the CRD" 0 \
'customresourcedefinition.apiextensions.k8s.io "crontabs.stable.example.com" deleted' \
-- delete -f fixtures/crds/resourcedefinition.yaml

expect "the endpoint is gone" 1 \
'Error from server (NotFound): Unable to list "stable.example.com/v1, Resource=crontabs": the server could not find the requested resource (get crontabs.stable.example.com)' \
-- get crontabs

expect "recreate the CRD" 0 \
'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created' \
-- apply -f fixtures/crds/resourcedefinition.yaml

expect "it starts out empty" 0 \
'No resources found in default namespace.' \
-- get crontabs

# kubectl's typed commands send protobuf bodies; and `kubefake kubeconfig` writes a kubeconfig
# for a running server.
url=$(sed -n 's/^KUBEFAKE_URL=//p' "$work/stdout")
"$bin" kubeconfig --server "$url" --out "$work/generated-kubeconfig"
export KUBECONFIG="$work/generated-kubeconfig"

expect "create a namespace (protobuf body)" 0 \
'namespace/team-a created' \
-- create namespace team-a

expect "objects in it" 0 \
'crontab.stable.example.com/my-new-cron-object created' \
-- apply -n team-a -f fixtures/objects/my-crontab.yaml

expect "delete the namespace" 0 \
'namespace "team-a" deleted' \
-- delete namespace team-a

expect "its content went with it" 0 \
'No resources found' \
-- get crontabs -A

# A clean stop on SIGTERM.
kill -TERM "$server_pid"
stopped=false
for _ in $(seq 1 100); do
  if ! kill -0 "$server_pid" 2>/dev/null; then stopped=true; break; fi
  sleep 0.05
done
if $stopped && wait "$server_pid"; then
  echo "ok   $((step + 1)). kubefake stops cleanly on SIGTERM"
else
  failures=$((failures + 1))
  echo "FAIL $((step + 1)). kubefake did not stop cleanly on SIGTERM"
fi
server_pid=

if [ "$failures" -ne 0 ]; then
  echo "walkthrough: $failures step(s) differ from a real cluster"
  exit 1
fi
echo "walkthrough: all $((step + 1)) steps match a real cluster"
