#!/usr/bin/env bash
# fabric8 kubernetes-client (Maven Central) against `kubefake serve`: the JUnit 5 module in
# tests/clients/java (CRUD, server-side apply, an informer, a custom resource, the README
# quickstart, start-to-ready time), offline: .ci/run has fetched its dependencies and plugins.
source "$(dirname "$0")/lib.sh"
for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "java-client.sh: $tool is not on PATH; install a JDK >= 17 and Maven" >&2
    exit 2
  fi
done
step=$((step + 1))
if KUBEFAKE_BIN="$bin" KUBEFAKE_CRDS="$root/fixtures/crds" \
    mvn -o -B -ntp -f "$root/tests/clients/java/pom.xml" test >"$work/mvn.log" 2>&1; then
  grep -E 'Tests run|median|BUILD' "$work/mvn.log" | sed 's/^/    /'
  echo "ok   $step. fabric8 kubernetes-client: $(sed -n 's/.*\(Tests run: [0-9]*, Failures: [0-9]*, Errors: [0-9]*, Skipped: [0-9]*\)$/\1/p' "$work/mvn.log" | tail -1)"
else
  failures=$((failures + 1))
  echo "FAIL $step. fabric8 kubernetes-client (mvn -o test in tests/clients/java)"
  grep -v '^\[INFO\] *$' "$work/mvn.log" | tail -80 | sed 's/^/    /'
fi
finish
