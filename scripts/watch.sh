#!/usr/bin/env bash
# `kubectl get -w` against kubefake prints the changes another kubectl makes, as against a real
# cluster.
source "$(dirname "$0")/lib.sh"

start_server --crds fixtures/crds

kubectl --cache-dir "$cache" get crontabs -w --output-watch-events >"$work/watch.out" 2>&1 &
watcher=$!
# Give kubectl time to list and start watching. If it is slower, the object shows up in its
# initial list instead, which --output-watch-events also prints as ADDED: the output is the same.
sleep 0.5

expect "create" 0 'crontab.stable.example.com/my-new-cron-object created' \
  -- apply -f fixtures/objects/my-crontab.yaml
expect "patch" 0 'crontab.stable.example.com/my-new-cron-object patched' \
  -- patch ct my-new-cron-object --type merge -p '{"spec":{"image":"v2"}}'
expect "delete" 0 'crontab.stable.example.com "my-new-cron-object" deleted' \
  -- delete ct my-new-cron-object

for _ in $(seq 1 100); do
  grep -q DELETED "$work/watch.out" 2>/dev/null && break
  sleep 0.05
done
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true

check "kubectl get crontabs -w saw every change" \
'EVENT      NAME                 AGE
ADDED      my-new-cron-object   0s
MODIFIED   my-new-cron-object   0s
DELETED    my-new-cron-object   0s' \
"$(cat "$work/watch.out")"

stop_server
finish
