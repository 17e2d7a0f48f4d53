#!/usr/bin/env bash
# The "Validating Admission Policy" page's walkthrough with kubectl: a policy limiting
# Deployments to 5 replicas, a Deny binding for `environment: test` namespaces and a Warn binding
# for `environment: staging` ones.
source "$(dirname "$0")/lib.sh"

start_server

expect "create the policy" 0 \
'validatingadmissionpolicy.admissionregistration.k8s.io/demo-policy.example.com created' \
-- create -f fixtures/policy/policy.yaml

expect "bind it with Deny" 0 \
'validatingadmissionpolicybinding.admissionregistration.k8s.io/demo-binding-test.example.com created' \
-- create -f fixtures/policy/binding-deny.yaml

expect "bind it with Warn" 0 \
'validatingadmissionpolicybinding.admissionregistration.k8s.io/demo-binding-warn.example.com created' \
-- create -f fixtures/policy/binding-warn.yaml

for env in test staging; do
  kubectl --cache-dir "$cache" create namespace "$env" >/dev/null
  kubectl --cache-dir "$cache" label namespace "$env" "environment=$env" >/dev/null
done

expect "6 replicas are refused in a test namespace" 1 \
'The deployments "nginx" is invalid: : ValidatingAdmissionPolicy '"'"'demo-policy.example.com'"'"' with binding '"'"'demo-binding-test.example.com'"'"' denied request: failed expression: object.spec.replicas <= 5' \
-- create -n test -f fixtures/policy/deployment.yaml

expect "and warned about in a staging namespace" 0 \
'Warning: Validation failed for ValidatingAdmissionPolicy '"'"'demo-policy.example.com'"'"' with binding '"'"'demo-binding-warn.example.com'"'"': failed expression: object.spec.replicas <= 5
deployment.apps/nginx created' \
-- create -n staging -f fixtures/policy/deployment.yaml

expect "other namespaces are not selected" 0 \
'deployment.apps/nginx created' \
-- create -n default -f fixtures/policy/deployment.yaml

stop_server
finish
