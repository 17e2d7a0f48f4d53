#!/usr/bin/env bash
# kubectl apply, client-side and server-side: re-apply is a no-op, another field manager
# conflicts, --force-conflicts takes over.
source "$(dirname "$0")/lib.sh"

start_server --crds fixtures/validation
sed 's/replicas: 5/replicas: 7/' fixtures/validation/my-crontab.yaml >"$work/other.yaml"

expect "client-side apply" 0 'crontab.stable.example.com/my-new-cron-object created' \
  -- apply -f fixtures/validation/my-crontab.yaml
expect "client-side re-apply is unchanged" 0 'crontab.stable.example.com/my-new-cron-object unchanged' \
  -- apply -f fixtures/validation/my-crontab.yaml
expect "delete" 0 'crontab.stable.example.com "my-new-cron-object" deleted' \
  -- delete -f fixtures/validation/my-crontab.yaml

expect "server-side apply" 0 'crontab.stable.example.com/my-new-cron-object serverside-applied' \
  -- apply --server-side -f fixtures/validation/my-crontab.yaml
rv1=$(kubectl --cache-dir "$cache" get ct my-new-cron-object -o 'jsonpath={.metadata.resourceVersion}')
expect "server-side apply again" 0 'crontab.stable.example.com/my-new-cron-object serverside-applied' \
  -- apply --server-side -f fixtures/validation/my-crontab.yaml
rv2=$(kubectl --cache-dir "$cache" get ct my-new-cron-object -o 'jsonpath={.metadata.resourceVersion}')
check "re-apply is a no-op (same resourceVersion)" "$rv1" "$rv2"

expect "a conflicting manager" 1 \
'error: Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas
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
  -- apply --server-side --field-manager=other -f "$work/other.yaml"
expect "--force-conflicts takes over" 0 'crontab.stable.example.com/my-new-cron-object serverside-applied' \
  -- apply --server-side --field-manager=other --force-conflicts -f "$work/other.yaml"
expect "the forced value is stored" 0 '7' \
  -- get ct my-new-cron-object -o 'jsonpath={.spec.replicas}'
expect "server-side apply of a CRD" 0 \
  'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com serverside-applied' \
  -- apply --server-side -f fixtures/validation/resourcedefinition.yaml

stop_server
finish
