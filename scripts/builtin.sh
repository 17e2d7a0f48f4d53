#!/usr/bin/env bash
# Built-in kinds with kubectl: the create generators, get all and -o wide, describe with Events,
# client-side apply (strategic merge patch) around an edit, server-side apply and its conflicts,
# scale, explain, cluster-info, rollout status. kubefake runs no controller manager and no
# scheduler, so what is compared is what a real apiserver alone prints: Deployments never get
# ReplicaSets or pods (READY 0/N), pods stay Pending on no node, status.observedGeneration is
# never set. (A real cluster's controller manager would also create each namespace's `default`
# ServiceAccount, which `kubectl run` relies on; kubefake admits the pod as if it existed.)
source "$(dirname "$0")/lib.sh"

start_server

# expect_sed NAME EXIT_CODE EXPECTED SED_SCRIPT -- kubectl ARGS...: expect, after SED_SCRIPT
# normalises what normalise cannot (generated names, dates).
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

# jsonpath OBJECT PATH: one field, for building manifests.
jsonpath() {
  kubectl --cache-dir "$cache" get "$1" -o "jsonpath=$2"
}

# --- The create generators.
expect "create configmap" 0 'configmap/app-config created' \
  -- create configmap app-config --from-literal=mode=production --from-literal=level=info
expect "create secret generic" 0 'secret/app-secret created' \
  -- create secret generic app-secret --from-literal=password=s3cr3t
expect "create deployment" 0 'deployment.apps/web created' \
  -- create deployment web --image=nginx:1.27
expect "create service clusterip" 0 'service/web created' \
  -- create service clusterip web --clusterip=10.96.0.20 --tcp=80:8080
expect "create serviceaccount" 0 'serviceaccount/builder created' \
  -- create serviceaccount builder
expect "run a pod" 0 'pod/nginx created' \
  -- run nginx --image=nginx:1.27 --labels=app=nginx
cat >"$work/replicaset.yaml" <<'EOF'
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: frontend
spec:
  replicas: 2
  selector:
    matchLabels:
      tier: frontend
  template:
    metadata:
      labels:
        tier: frontend
    spec:
      containers:
      - name: php
        image: php:8.3
EOF
expect "create -f a ReplicaSet" 0 'replicaset.apps/frontend created' \
  -- create -f "$work/replicaset.yaml"

# --- get all and -o wide.
expect "get all: kinds' sections, the bootstrap kubernetes Service" 0 \
'NAME        READY   STATUS    RESTARTS   AGE
pod/nginx   0/1     Pending   0          0s

NAME                 TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE
service/kubernetes   ClusterIP   10.96.0.1    <none>        443/TCP   0s
service/web          ClusterIP   10.96.0.20   <none>        80/TCP    0s

NAME                  READY   UP-TO-DATE   AVAILABLE   AGE
deployment.apps/web   0/1     0            0           0s

NAME                       DESIRED   CURRENT   READY   AGE
replicaset.apps/frontend   2         0         0       0s' \
  -- get all
expect "get pods,deploy,svc,cm,secret -o wide" 0 \
'NAME        READY   STATUS    RESTARTS   AGE   IP       NODE     NOMINATED NODE   READINESS GATES
pod/nginx   0/1     Pending   0          0s    <none>   <none>   <none>           <none>

NAME                  READY   UP-TO-DATE   AVAILABLE   AGE   CONTAINERS   IMAGES       SELECTOR
deployment.apps/web   0/1     0            0           0s    nginx        nginx:1.27   app=web

NAME                 TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE   SELECTOR
service/kubernetes   ClusterIP   10.96.0.1    <none>        443/TCP   0s    <none>
service/web          ClusterIP   10.96.0.20   <none>        80/TCP    0s    app=web

NAME                         DATA   AGE
configmap/app-config         2      0s
configmap/kube-root-ca.crt   1      0s

NAME                TYPE     DATA   AGE
secret/app-secret   Opaque   1      0s' \
  -- get pods,deploy,svc,cm,secret -o wide
expect "get serviceaccounts (the controller's default beside ours)" 0 \
'NAME      AGE
builder   0s
default   0s' \
  -- get serviceaccounts

# --- Events: core/v1 Events pointing at the Deployment and the Pod; describe finds them by
# involvedObject (name, namespace, kind, uid).
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cat >"$work/events.yaml" <<EOF
apiVersion: v1
kind: Event
metadata:
  name: web.scaled
involvedObject:
  apiVersion: apps/v1
  kind: Deployment
  name: web
  namespace: default
  uid: $(jsonpath deployment/web '{.metadata.uid}')
reason: ScalingReplicaSet
message: Scaled up replica set web-7d4b9c8f5 from 0 to 1
type: Normal
source:
  component: deployment-controller
firstTimestamp: "$now"
lastTimestamp: "$now"
count: 1
---
apiVersion: v1
kind: Event
metadata:
  name: nginx.scheduling
involvedObject:
  apiVersion: v1
  kind: Pod
  name: nginx
  namespace: default
  uid: $(jsonpath pod/nginx '{.metadata.uid}')
reason: FailedScheduling
message: "0/0 nodes are available: no nodes available to schedule pods."
type: Warning
source:
  component: default-scheduler
firstTimestamp: "$now"
lastTimestamp: "$now"
count: 3
EOF
expect "create -f core/v1 Events" 0 \
'event/web.scaled created
event/nginx.scheduling created' \
  -- create -f "$work/events.yaml"
expect_sed "describe deployment shows its Events" 0 \
'Name:                   web
Namespace:              default
CreationTimestamp:      <date>
Labels:                 app=web
Annotations:            <none>
Selector:               app=web
Replicas:               1 desired | 0 updated | 0 total | 0 available | 0 unavailable
StrategyType:           RollingUpdate
MinReadySeconds:        0
RollingUpdateStrategy:  25% max unavailable, 25% max surge
Pod Template:
  Labels:  app=web
  Containers:
   nginx:
    Image:         nginx:1.27
    Port:          <none>
    Host Port:     <none>
    Environment:   <none>
    Mounts:        <none>
  Volumes:         <none>
  Node-Selectors:  <none>
  Tolerations:     <none>
Events:
  Type    Reason             Age   From                   Message
  ----    ------             ----  ----                   -------
  Normal  ScalingReplicaSet  0s    deployment-controller  Scaled up replica set web-7d4b9c8f5 from 0 to 1' \
  's/^(CreationTimestamp: +).*/\1<date>/' \
  -- describe deployment web
expect_sed "describe pod: admission's defaults and its Events" 0 \
'Name:             nginx
Namespace:        default
Priority:         0
Service Account:  default
Node:             <none>
Labels:           app=nginx
Annotations:      <none>
Status:           Pending
IP:               
IPs:              <none>
Containers:
  nginx:
    Image:        nginx:1.27
    Port:         <none>
    Host Port:    <none>
    Environment:  <none>
    Mounts:
      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-<x> (ro)
Volumes:
  kube-api-access-<x>:
    Type:                    Projected (a volume that contains injected data from multiple sources)
    TokenExpirationSeconds:  3607
    ConfigMapName:           kube-root-ca.crt
    Optional:                false
    DownwardAPI:             true
QoS Class:                   BestEffort
Node-Selectors:              <none>
Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s
Events:
  Type     Reason            Age              From               Message
  ----     ------            ----             ----               -------
  Warning  FailedScheduling  0s (x3 over <age>)  default-scheduler  0/0 nodes are available: no nodes available to schedule pods.' \
  's/kube-api-access-[a-z0-9]{5}/kube-api-access-<x>/; s/over [0-9]+s\)/over <age>)/' \
  -- describe pod nginx
expect "get events" 0 \
'LAST SEEN   TYPE      REASON              OBJECT           MESSAGE
0s          Warning   FailedScheduling    pod/nginx        0/0 nodes are available: no nodes available to schedule pods.
0s          Normal    ScalingReplicaSet   deployment/web   Scaled up replica set web-7d4b9c8f5 from 0 to 1' \
  -- get events
expect "get events -o wide" 0 \
'LAST SEEN   TYPE      REASON              OBJECT           SUBOBJECT   SOURCE                  MESSAGE                                                         FIRST SEEN   COUNT   NAME
0s          Warning   FailedScheduling    pod/nginx                    default-scheduler       0/0 nodes are available: no nodes available to schedule pods.   0s           3       nginx.scheduling
0s          Normal    ScalingReplicaSet   deployment/web               deployment-controller   Scaled up replica set web-7d4b9c8f5 from 0 to 1                 0s           1       web.scaled' \
  -- get events -o wide
expect "kubectl events --for (an involvedObject field selector)" 0 \
'LAST SEEN   TYPE     REASON              OBJECT           MESSAGE
0s          Normal   ScalingReplicaSet   Deployment/web   Scaled up replica set web-7d4b9c8f5 from 0 to 1' \
  -- events --for deployment/web

# --- Client-side apply (a strategic merge patch computed from last-applied, the live object and
# the file), an edit, and a re-apply: containers and env merge by name; what only the edit added
# stays, what the file dropped goes.
cat >"$work/app.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels:
    app: app
spec:
  replicas: 2
  selector:
    matchLabels:
      app: app
  template:
    metadata:
      labels:
        app: app
    spec:
      containers:
      - name: web
        image: nginx:1.27
        env:
        - name: MODE
          value: production
        - name: LOG_LEVEL
          value: info
      - name: sidecar
        image: busybox:1.36
        command: ["sleep", "infinity"]
EOF
sed -e 's/nginx:1.27/nginx:1.28/' -e 's/value: production/value: staging/' \
  -e 's/name: LOG_LEVEL/name: FEATURE/' -e 's/value: info/value: "on"/' "$work/app.yaml" >"$work/app2.yaml"
containers='{range .spec.template.spec.containers[*]}{.name}={.image}{range .env[*]} {.name}:{.value}{end}{"\n"}{end}'
expect "client-side apply" 0 'deployment.apps/app created' -- apply -f "$work/app.yaml"
expect "client-side re-apply is unchanged" 0 'deployment.apps/app unchanged' -- apply -f "$work/app.yaml"
KUBE_EDITOR="sed -i -e 's/busybox:1.36/busybox:1.37/' -e '/- name: LOG_LEVEL/i\\        - name: EDITED\\n          value: \"yes\"'" \
  expect "edit: an env var added, the sidecar's image changed" 0 'deployment.apps/app edited' -- edit deployment app
expect "the edit is stored" 0 \
'web=nginx:1.27 MODE:production EDITED:yes LOG_LEVEL:info
sidecar=busybox:1.37' \
  -- get deployment app -o "jsonpath=$containers"
expect "re-apply with a change" 0 'deployment.apps/app configured' -- apply -f "$work/app2.yaml"
expect "merged by name: the edit's env var kept, the dropped one deleted, the file's image wins" 0 \
'web=nginx:1.28 MODE:staging EDITED:yes FEATURE:on
sidecar=busybox:1.36' \
  -- get deployment app -o "jsonpath=$containers"
expect "generation counts the three changes" 0 '3' -- get deployment app -o 'jsonpath={.metadata.generation}'

# --- Server-side apply: a second field manager conflicts, --force-conflicts takes the fields.
sed -e 's/name: app$/name: ssa/' -e 's/app: app/app: ssa/' "$work/app.yaml" >"$work/ssa.yaml"
sed -e 's/replicas: 2/replicas: 4/' -e 's/nginx:1.27/nginx:1.28/' "$work/ssa.yaml" >"$work/ssa2.yaml"
expect "server-side apply" 0 'deployment.apps/ssa serverside-applied' -- apply --server-side -f "$work/ssa.yaml"
expect "server-side apply again" 0 'deployment.apps/ssa serverside-applied' -- apply --server-side -f "$work/ssa.yaml"
expect "a second field manager conflicts" 1 \
'error: Apply failed with 2 conflicts: conflicts with "kubectl":
- .spec.replicas
- .spec.template.spec.containers[name="web"].image
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the `--force-conflicts` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'"'"'ll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts' \
  -- apply --server-side --field-manager=other -f "$work/ssa2.yaml"
expect "--force-conflicts takes over" 0 'deployment.apps/ssa serverside-applied' \
  -- apply --server-side --field-manager=other --force-conflicts -f "$work/ssa2.yaml"
expect "the forced values are stored" 0 '4 nginx:1.28' \
  -- get deployment ssa -o 'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}'
expect "the fields moved to the new manager" 0 \
'kubectl: replicas=[] image=[]
other: replicas=[{}] image=[{}]' \
  -- get deployment ssa --show-managed-fields -o 'jsonpath={range .metadata.managedFields[*]}{.manager}: replicas=[{.fieldsV1.f:spec.f:replicas}] image=[{.fieldsV1.f:spec.f:template.f:spec.f:containers.k:\{"name":"web"\}.f:image}]{"\n"}{end}'

# --- scale (the scale subresource), and no controller acts on it.
expect "scale" 0 'deployment.apps/web scaled' -- scale deployment web --replicas=3
expect "the scaled replicas" 0 '3' -- get deploy web -o 'jsonpath={.spec.replicas}'
expect "READY shows 0/3: nothing creates pods" 0 \
'NAME   READY   UP-TO-DATE   AVAILABLE   AGE
web    0/3     0            0           0s' \
  -- get deploy web

# --- rollout status: with no controller status.observedGeneration stays unset, so kubectl waits
# for the spec to be observed until its timeout.
expect "rollout status times out" 1 \
'Waiting for deployment spec update to be observed...
error: timed out waiting for the condition' \
  -- rollout status deployment/web --timeout=1s

# --- explain, from the published OpenAPI v3 documents.
# (sed, not head: head would leave kubectl a broken pipe.)
got=$(kubectl --cache-dir "$cache" explain deployment.spec 2>&1 | sed -n 1,24p)
check "kubectl explain deployment.spec (first lines)" \
'GROUP:      apps
KIND:       Deployment
VERSION:    v1

FIELD: spec <DeploymentSpec>


DESCRIPTION:
    Specification of the desired behavior of the Deployment.
    DeploymentSpec is the specification of the desired behavior of the
    Deployment.
    
FIELDS:
  minReadySeconds	<integer>
    Minimum number of seconds for which a newly created pod should be ready
    without any of its container crashing, for it to be considered available.
    Defaults to 0 (pod will be considered available as soon as it is ready)

  paused	<boolean>
    Indicates that the deployment is paused.

  progressDeadlineSeconds	<integer>
    The maximum time in seconds for a deployment to make progress before it is
    considered to be failed. The deployment controller will continue to process' "$got"
expect "kubectl explain pods.spec.containers.image" 0 \
'KIND:       Pod
VERSION:    v1

FIELD: image <string>


DESCRIPTION:
    Container image name. More info:
    https://kubernetes.io/docs/concepts/containers/images This field is optional
    to allow higher level config management to default or override container
    images in workload controllers like Deployments and StatefulSets.
    
' \
  -- explain pods.spec.containers.image

# --- The aggregator's local APIServices, one per built-in group-version.
expect_sed "get apiservices" 0 \
'NAME             SERVICE   AVAILABLE   AGE
v1.apps          Local     True        <age>
v2.autoscaling   Local     True        <age>' \
  's/[0-9][0-9]*s$/<age>/' \
  -- get apiservices v1.apps v2.autoscaling

# --- cluster-info: no kube-system Service carries kubernetes.io/cluster-service=true.
expect_sed "cluster-info" 0 \
'Kubernetes control plane is running at <url>

To further debug and diagnose cluster problems, use '"'"'kubectl cluster-info dump'"'"'.' \
  "s#$KUBEFAKE_URL#<url>#" \
  -- cluster-info

stop_server
finish
