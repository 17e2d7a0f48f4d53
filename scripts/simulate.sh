#!/usr/bin/env bash
# The simulated cluster (`kubefake serve --simulate`) with kubectl: nodes, a Deployment rolled
# out, updated, rolled back and scaled, and its pods scheduled and running, as `kubectl` shows
# them on a small real cluster (names, IPs and ages normalised).
source "$(dirname "$0")/lib.sh"

start_server --simulate

# expect_sed NAME EXIT_CODE EXPECTED SED_SCRIPT -- kubectl ARGS...: expect, after SED_SCRIPT
# normalises what normalise cannot (generated names, addresses).
expect_sed() {
  local name=$1 want_rc=$2 want=$3 script=$4
  shift 5
  local got rc=0
  got=$(kubectl --cache-dir "$cache" "$@" 2>&1) || rc=$?
  got=$(printf '%s\n' "$got" | sed -E "$script")
  if [ "$rc" != "$want_rc" ]; then
    got="$got
(exit $rc, want $want_rc)"
  fi
  check "$name: kubectl $*" "$want" "$got"
}

pods_wide='s/web-[a-z0-9]+-[a-z0-9]{5}/<pod>/; s/10\.244\.[0-9]+\.[0-9]+/<ip>/; s/ +/ /g'

expect_sed "get nodes" 0 \
'NAME STATUS ROLES AGE VERSION
kubefake-node-1 Ready <none> <age> v1.36.0
kubefake-node-2 Ready <none> <age> v1.36.0
kubefake-node-3 Ready <none> <age> v1.36.0' \
  's/ +/ /g' -- get nodes

expect "create deployment" 0 'deployment.apps/web created' \
  -- create deployment web --image=nginx:1.27 --replicas=3
expect "rollout status" 0 'deployment "web" successfully rolled out' \
  -- rollout status deployment/web --timeout=10s
expect_sed "get deployment" 0 \
'NAME READY UP-TO-DATE AVAILABLE AGE
web 3/3 3 3 <age>' \
  's/ +/ /g' -- get deployment web

expect "set image" 0 'deployment.apps/web image updated' \
  -- set image deployment/web nginx=nginx:1.28
expect "rollout status after the image change" 0 'deployment "web" successfully rolled out' \
  -- rollout status deployment/web --timeout=10s
expect "replica sets after the image change" 0 \
'IMAGE        DESIRED   REVISION
nginx:1.27   0         1
nginx:1.28   3         2' \
  -- get rs --sort-by=.spec.template.spec.containers[0].image \
  -o 'custom-columns=IMAGE:.spec.template.spec.containers[0].image,DESIRED:.spec.replicas,REVISION:.metadata.annotations.deployment\.kubernetes\.io/revision'
expect "rollout history" 0 \
'deployment.apps/web 
REVISION  CHANGE-CAUSE
1         <none>
2         <none>
' \
  -- rollout history deployment/web

expect "rollout undo" 0 'deployment.apps/web rolled back' \
  -- rollout undo deployment/web
expect "rollout status after the undo" 0 'deployment "web" successfully rolled out' \
  -- rollout status deployment/web --timeout=10s
expect "replica sets after the undo" 0 \
'IMAGE        DESIRED   REVISION
nginx:1.27   3         3
nginx:1.28   0         2' \
  -- get rs --sort-by=.spec.template.spec.containers[0].image \
  -o 'custom-columns=IMAGE:.spec.template.spec.containers[0].image,DESIRED:.spec.replicas,REVISION:.metadata.annotations.deployment\.kubernetes\.io/revision'

expect "scale" 0 'deployment.apps/web scaled' -- scale deployment web --replicas=5
expect "wait for Available" 0 'deployment.apps/web condition met' \
  -- wait --for=condition=Available deployment/web --timeout=10s
expect_sed "pods -o wide" 0 \
'NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES
<pod> 1/1 Running 0 <age> <ip> kubefake-node-1 <none> <none>
<pod> 1/1 Running 0 <age> <ip> kubefake-node-1 <none> <none>
<pod> 1/1 Running 0 <age> <ip> kubefake-node-2 <none> <none>
<pod> 1/1 Running 0 <age> <ip> kubefake-node-2 <none> <none>
<pod> 1/1 Running 0 <age> <ip> kubefake-node-3 <none> <none>' \
  "$pods_wide" -- get pods -o wide --sort-by=.spec.nodeName

stop_server
finish
