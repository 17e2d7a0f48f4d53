#!/usr/bin/env bash
# The simulated cluster (`kubefake serve --simulate`) with kubectl: nodes, a Deployment rolled
# out, updated, rolled back and scaled, and its pods scheduled and running, as `kubectl` shows
# them on a small real cluster (names, IPs and ages normalised); then Jobs (`create job`, `wait
# --for=condition=complete`, one failing past its backoff limit, one from a CronJob's template),
# a StatefulSet's ordered pods, claims and `rollout status` through a new template, and a
# DaemonSet's. Every controller step happens before the request that caused it returns, so
# nothing here waits on a clock.
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

# --- Jobs.
expect "create job" 0 'job.batch/pi created' \
  -- create job pi --image=perl:5.34 -- perl -e 'print 1'
expect "wait for the Job to complete" 0 'job.batch/pi condition met' \
  -- wait --for=condition=complete job/pi --timeout=30s
expect "its pod succeeded" 0 'Succeeded' \
  -- get pods -l batch.kubernetes.io/job-name=pi -o 'jsonpath={.items[*].status.phase}'
expect "its conditions, interim first" 0 'SuccessCriteriaMet Complete' \
  -- get job pi -o 'jsonpath={.status.conditions[*].type}'
expect "the pod's tracking finalizer went" 0 '' \
  -- get pods -l batch.kubernetes.io/job-name=pi -o 'jsonpath={.items[*].metadata.finalizers}'

cat >"$work/doomed.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata:
  name: doomed
  annotations:
    simulation.kubefake.io/run: fail
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox:1.36
EOF
expect "create a Job whose pods fail" 0 'job.batch/doomed created' -- apply -f "$work/doomed.yaml"
expect "wait for it to fail" 0 'job.batch/doomed condition met' \
  -- wait --for=condition=failed job/doomed --timeout=30s
expect "why it failed" 0 'BackoffLimitExceeded: Job has reached the specified backoff limit' \
  -- get job doomed -o 'jsonpath={.status.conditions[?(@.type=="Failed")].reason}: {.status.conditions[?(@.type=="Failed")].message}'
expect "each failure counted" 0 '2' -- get job doomed -o 'jsonpath={.status.failed}'

expect "create cronjob" 0 'cronjob.batch/tick created' \
  -- create cronjob tick --image=busybox:1.36 --schedule='0 0 1 1 *' -- date
expect "a Job from its template" 0 'job.batch/manual created' \
  -- create job manual --from=cronjob/tick
expect "which completes" 0 'job.batch/manual condition met' \
  -- wait --for=condition=complete job/manual --timeout=30s

# --- A StatefulSet: ordered pods with claims, then a new template rolled out.
cat >"$work/web.yaml" <<'EOF'
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: nginx
  replicas: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1Gi
EOF
expect "create a StatefulSet" 0 'statefulset.apps/web created' -- apply -f "$work/web.yaml"
expect "rollout status" 0 'partitioned roll out complete: 3 new pods have been updated...' \
  -- rollout status statefulset/web --timeout=30s
expect "its pods" 0 'pod/web-0
pod/web-1
pod/web-2' -- get pods -l app=nginx -o name
expect "their claims" 0 'persistentvolumeclaim/www-web-0
persistentvolumeclaim/www-web-1
persistentvolumeclaim/www-web-2' -- get pvc -o name
expect "a new image" 0 'statefulset.apps/web image updated' \
  -- set image statefulset/web nginx=nginx:1.28
expect "rollout status after the update" 0 'partitioned roll out complete: 3 new pods have been updated...' \
  -- rollout status statefulset/web --timeout=30s
expect "every pod runs the new image" 0 'nginx:1.28 nginx:1.28 nginx:1.28' \
  -- get pods -l app=nginx -o 'jsonpath={.items[*].spec.containers[0].image}'

# --- A DaemonSet: one pod on each of the three nodes.
cat >"$work/agent.yaml" <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: agent:1
EOF
expect "create a DaemonSet" 0 'daemonset.apps/agent created' -- apply -f "$work/agent.yaml"
expect "its rollout status" 0 'daemon set "agent" successfully rolled out' \
  -- rollout status daemonset/agent --timeout=30s
expect "one pod per node" 0 'kubefake-node-1 kubefake-node-2 kubefake-node-3' \
  -- get pods -l app=agent -o 'jsonpath={.items[*].spec.nodeName}' --sort-by=.spec.nodeName

stop_server
finish
