#!/usr/bin/env bash
# What kubectl prints: server-side Tables with printer columns, -o wide, categories, the
# built-in columns of namespaces and CRDs.
source "$(dirname "$0")/lib.sh"

start_server --crds fixtures/printer-columns --objects fixtures/printer-columns/my-crontab.yaml

expect "printer columns" 0 \
'NAME                 SPEC        REPLICAS   AGE
my-new-cron-object   * * * * *   1          0s' \
  -- get crontab my-new-cron-object
expect "-o wide adds priority > 0 columns" 0 \
'NAME                 SPEC        REPLICAS   AGE   IMAGE
my-new-cron-object   * * * * *   1          0s    my-awesome-cron-image' \
  -- get ct -o wide
expect "kubectl get all (category all, with the bootstrap kubernetes Service)" 0 \
'NAME                 TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE
service/kubernetes   ClusterIP   10.96.0.1    <none>        443/TCP   0s

NAME                                            SPEC        REPLICAS   AGE
crontab.stable.example.com/my-new-cron-object   * * * * *   1          0s' \
  -- get all
expect "case-insensitive names" 0 \
'NAME                 SPEC        REPLICAS   AGE
my-new-cron-object   * * * * *   1          0s' \
  -- get CRONTABS
expect "namespaces print STATUS" 0 \
'NAME              STATUS   AGE
default           Active   0s
kube-node-lease   Active   0s
kube-public       Active   0s
kube-system       Active   0s' \
  -- get namespaces
crd_out=$(kubectl --cache-dir "$cache" get crd 2>&1 | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z/<time>/')
check "CRDs print CREATED AT" \
'NAME                          CREATED AT
crontabs.stable.example.com   <time>' "$crd_out"

expect "kubectl explain from the published OpenAPI" 0 \
'GROUP:      stable.example.com
KIND:       CronTab
VERSION:    v1

FIELD: spec <Object>


DESCRIPTION:
    <empty>
FIELDS:
  cronSpec	<string>
    <no description>

  image	<string>
    <no description>

  replicas	<integer>
    <no description>

' \
  -- explain crontab.spec

stop_server
finish
