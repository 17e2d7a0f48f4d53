#!/usr/bin/env bash
# The "Extend the Kubernetes API with CustomResourceDefinitions" walkthrough, run with a real
# kubectl against `kubefake serve`. Every step's output is compared with what a real cluster
# prints (ages, uids, timestamps and resourceVersions normalised); any difference fails.
source "$(dirname "$0")/lib.sh"

# A token of our own, and the serving certificate written to a directory we know, for the
# kubeconfig generated further down.
printf 'walkthrough-token,walker,walker-uid,"system:masters"\n' >"$work/tokens.csv"
start_server --token-auth-file "$work/tokens.csv" --cert-dir "$work/certs"

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
# for a running server, given a token it accepts and the CA of its certificate.
"$bin" kubeconfig --server "$KUBEFAKE_URL" --token walkthrough-token \
  --certificate-authority "$work/certs/apiserver.crt" --out "$work/generated-kubeconfig"
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

stop_server
finish
