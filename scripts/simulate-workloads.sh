#!/usr/bin/env bash
# The simulated cluster's batch and stateful workloads with kubectl (`kubefake serve --simulate`):
# `kubectl create job` and `wait --for=condition=complete`, a Job that fails past its backoff
# limit (`wait --for=condition=failed`), a Job from a CronJob's template, a StatefulSet's pods and
# claims and its `rollout status` through a new template, and a DaemonSet's. Every controller step
# happens before the request that caused it returns, so nothing here waits on a clock.
source "$(dirname "$0")/lib.sh"

start_server --simulate

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
