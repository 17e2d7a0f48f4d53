#!/usr/bin/env bash
# A custom resource served in two versions, with kubectl: writes through the deprecated v1 warn
# and are stored in v2 (pruned by v2's schema), `kubectl get <plural>.<version>.<group>` reads each
# version, printer columns are the version's own.
source "$(dirname "$0")/lib.sh"

start_server

expect "create the CRD" 0 \
'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created' \
-- create -f fixtures/versions/crontabs.yaml

expect "create through the deprecated v1" 0 \
'Warning: stable.example.com/v1 CronTab is deprecated; use stable.example.com/v2 CronTab
crontab.stable.example.com/nightly created' \
-- create -f fixtures/versions/crontab-v1.yaml

expect "kubectl get crontabs (v2, the preferred version, with its column)" 0 \
'NAME      SCHEDULE
nightly   0 3 * * *' \
-- get crontabs

expect "kubectl get crontabs.v1.stable.example.com: pruned by v2 when stored" 0 \
'Warning: stable.example.com/v1 CronTab is deprecated; use stable.example.com/v2 CronTab
stable.example.com/v1 {"cronSpec":"0 3 * * *"}' \
-- get crontabs.v1.stable.example.com nightly -o 'jsonpath={.apiVersion} {.spec}'

expect "kubectl get crontabs.v2.stable.example.com" 0 \
'stable.example.com/v2 {"cronSpec":"0 3 * * *"}' \
-- get crontabs.v2.stable.example.com nightly -o 'jsonpath={.apiVersion} {.spec}'

expect "storedVersions" 0 \
'["v2"]' \
-- get crd crontabs.stable.example.com -o 'jsonpath={.status.storedVersions}'

stop_server
finish
