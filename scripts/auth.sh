#!/usr/bin/env bash
# kubectl's auth commands against `kubefake serve` (HTTPS, RBAC, the kubeconfig's admin in
# system:masters): whoami, can-i with and without --as, RBAC granting a user what a Role says,
# the 403 a real cluster prints, and a service account token from `kubectl create token`.
source "$(dirname "$0")/lib.sh"

start_server

expect "who the kubeconfig's user is" 0 \
'ATTRIBUTE   VALUE
Username    system:admin
Groups      [system:masters system:authenticated]' \
-- auth whoami

expect "whom --as makes a request" 0 \
'ATTRIBUTE   VALUE
Username    jane
Groups      [dev system:authenticated]' \
-- auth whoami --as jane --as-group dev

expect "the admin may do anything" 0 \
"Warning: resource 'nodes' is not namespace scoped

yes" \
-- auth can-i delete nodes

expect "jane may not list pods yet" 1 \
'no' \
-- auth can-i list pods --as jane

kubectl --cache-dir "$cache" create role pod-reader --verb=get,list,watch --resource=pods >/dev/null
kubectl --cache-dir "$cache" create rolebinding jane-reads-pods --role=pod-reader --user=jane >/dev/null

expect "a Role and RoleBinding let her" 0 \
'yes' \
-- auth can-i list pods --as jane

expect "everything she may do here" 0 \
'Resources                                       Non-Resource URLs   Resource Names   Verbs
selfsubjectreviews.authentication.k8s.io        []                  []               [create]
selfsubjectaccessreviews.authorization.k8s.io   []                  []               [create]
selfsubjectrulesreviews.authorization.k8s.io    []                  []               [create]
pods                                            []                  []               [get list watch]
                                                [/api/*]            []               [get]
                                                [/api]              []               [get]
                                                [/apis/*]           []               [get]
                                                [/apis]             []               [get]
                                                [/healthz]          []               [get]
                                                [/healthz]          []               [get]
                                                [/livez]            []               [get]
                                                [/livez]            []               [get]
                                                [/openapi/*]        []               [get]
                                                [/openapi]          []               [get]
                                                [/readyz]           []               [get]
                                                [/readyz]           []               [get]
                                                [/version/]         []               [get]
                                                [/version/]         []               [get]
                                                [/version]          []               [get]
                                                [/version]          []               [get]' \
-- auth can-i --list --as jane

expect "in their namespace only" 1 \
'Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "kube-system"' \
-- get pods --as jane -n kube-system

expect "and not to write" 1 \
'no' \
-- auth can-i create pods --as jane

kubectl --cache-dir "$cache" create serviceaccount bot >/dev/null
token=$(kubectl --cache-dir "$cache" create token bot)
kubectl config set-credentials bot --token "$token" >/dev/null

expect "a service account token authenticates" 0 \
'ATTRIBUTE   VALUE
Username    system:serviceaccount:default:bot' \
-- auth whoami --user bot -o jsonpath='{"ATTRIBUTE   VALUE\nUsername    "}{.status.userInfo.username}'

expect "and has no rights of its own" 1 \
'no' \
-- auth can-i get configmaps --user bot

stop_server
finish
