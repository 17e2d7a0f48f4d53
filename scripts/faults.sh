#!/usr/bin/env bash
# Fault injection and the request log from the command line: `kubefake faults` makes kubectl
# meet a 503 and a 409; `kubefake requests` shows what kubectl did, and so does the audit log
# of `--audit-log-path`.
source "$(dirname "$0")/lib.sh"

start_server --audit-log-path "$work/audit.log"

id=$("$bin" faults add '{"match": {"verb": "get", "resource": "namespaces", "name": "default"},
  "action": {"code": 503, "message": "injected"}, "times": 1}')
check "kubefake faults add prints the rule's id" 'fault-1' "$id"
expect "the next read meets the fault" 1 'Error from server (ServiceUnavailable): injected' \
  -- get namespace default
expect "the one after it is served" 0 'NAME      STATUS   AGE
default   Active   0s' \
  -- get namespace default
check "kubefake faults list counts the firing" '1 2' \
  "$("$bin" faults list | python3 -c 'import json,sys; f=json.load(sys.stdin)["items"][0]; print(f["fired"], f["matched"])')"

"$bin" faults add '{"match": {"verb": "update", "resource": "configmaps"}, "action": {"conflict": true}}' >/dev/null
kubectl --cache-dir "$cache" create configmap c --from-literal=k=v >/dev/null
kubectl --cache-dir "$cache" get configmap c -o json >"$work/c.json"
expect "an update meets the conflict" 1 'Error from server (Conflict): error when replacing "STDIN": Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again' \
  -- replace -f - <"$work/c.json"
"$bin" faults delete --all >/dev/null
expect "after kubefake faults delete --all the update goes through" 0 'configmap/c replaced' \
  -- replace -f - <"$work/c.json"

check "kubefake requests filters the log" \
'get namespaces default 503 fault-1
get namespaces default 200 -' \
  "$("$bin" requests verb=get resource=namespaces 'userAgent=kubectl*' |
     python3 -c 'import json,sys
for line in sys.stdin:
    r = json.loads(line); print(r["verb"], r["resource"], r["name"], r["code"], r.get("fault", "-"))')"
check "kubefake requests counts kubectl's writes" '3' \
  "$("$bin" requests writes=true namespace=default | wc -l | tr -d ' ')"
check "kubefake requests --clear empties it" 'cleared 0' \
  "$("$bin" requests --clear >/dev/null; "$bin" requests --clear)"

# The writer thread writes every 20 ms: a moment after the last request the file has it.
sleep 0.5
check "the audit log has kubectl's reads of namespace default as audit events" \
'audit.k8s.io/v1 Metadata ResponseComplete get namespaces default 503 system:admin
audit.k8s.io/v1 Metadata ResponseComplete get namespaces default 200 system:admin' \
  "$(python3 -c 'import json,sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    ref = e.get("objectRef", {})
    if e["verb"] == "get" and ref.get("resource") == "namespaces" and e["userAgent"].startswith("kubectl"):
        print(e["apiVersion"], e["level"], e["stage"], e["verb"], ref["resource"], ref["name"],
              e["responseStatus"]["code"], e["user"]["username"])' "$work/audit.log")"

stop_server
finish
