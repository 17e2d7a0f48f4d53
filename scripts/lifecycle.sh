#!/usr/bin/env bash
# Object lifecycle with kubectl: the /scale subresource, namespace deletion that finishes, and
# CRD deletion with objects left in it.
source "$(dirname "$0")/lib.sh"

start_server --crds fixtures/subresources

expect "create a CronTab with replicas" 0 'crontab.stable.example.com/my-new-cron-object created' \
  -- apply -f fixtures/subresources/my-crontab.yaml
expect "kubectl scale" 0 'crontab.stable.example.com/my-new-cron-object scaled' \
  -- scale --replicas=5 crontabs/my-new-cron-object
expect "spec.replicas follows" 0 '5' \
  -- get crontabs my-new-cron-object -o 'jsonpath={.spec.replicas}'
expect "scale with a precondition that holds" 0 'crontab.stable.example.com/my-new-cron-object scaled' \
  -- scale --current-replicas=5 --replicas=2 crontabs/my-new-cron-object
expect "scale with a stale precondition" 1 'error: Expected replicas to be 5, was 2' \
  -- scale --current-replicas=5 --replicas=1 crontabs/my-new-cron-object

expect "create a namespace" 0 'namespace/doomed created' -- create namespace doomed
expect "objects in it" 0 'crontab.stable.example.com/my-new-cron-object created' \
  -- apply -n doomed -f fixtures/subresources/my-crontab.yaml
expect "delete the namespace (kubectl waits for it)" 0 'namespace "doomed" deleted' \
  -- delete namespace doomed
expect "the namespace is gone" 1 'Error from server (NotFound): namespaces "doomed" not found' \
  -- get namespace doomed
expect "default cannot be deleted" 1 'Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted' \
  -- delete namespace default

expect "delete the CRD with an object left in it" 0 \
  'customresourcedefinition.apiextensions.k8s.io "crontabs.stable.example.com" deleted' \
  -- delete crd crontabs.stable.example.com
expect "the CRD is gone" 1 \
  'Error from server (NotFound): customresourcedefinitions.apiextensions.k8s.io "crontabs.stable.example.com" not found' \
  -- get crd crontabs.stable.example.com

stop_server
finish
