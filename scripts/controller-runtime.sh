#!/usr/bin/env bash
# controller-runtime's own test suite on kubefake: the Go module sigs.k8s.io/controller-runtime
# v0.24.1 ships its tests, and those of its client, cache, builder, controller, webhook, envtest
# and manager packages (Ginkgo suites and plain Go tests, most of them starting envtest) run
# unchanged from a copy of the module, with KUBEBUILDER_ASSETS pointing at what
# `kubefake envtest-assets DIR` writes, so every envtest control plane they start is kubefake.
# Besides the specs controller-runtime marks pending, only the tests named in `skip` below do
# not run, for the reason given there. Prints the suite's wall time and how many specs passed
# and failed; on a failure prints the failed specs and the end of each failed package's output,
# keeps the full log, and exits non-zero. Needs Go (the version controller-runtime's go.mod
# names) and the module with its dependencies in the module cache (`.ci/run` downloads them).
set -euo pipefail

name=$(basename "$0")
module=sigs.k8s.io/controller-runtime
version=v0.24.1
packages=(
  ./pkg/client/... ./pkg/cache/... ./pkg/builder/... ./pkg/controller/...
  ./pkg/webhook/... ./pkg/envtest/... ./pkg/manager/... ./pkg/internal/controller/...
)
# Skipped by name (go test -skip: one anchored regexp per level of the test name):
# pkg/client/apiutil's TestApiMachinery and TestLazyRestMapperProvider run their subtests
# aggregatedDiscovery=false on an envtest with DownloadBinaryAssets = true, which downloads the
# v1.28.0 kube-apiserver and etcd from raw.githubusercontent.com (to run the real apiserver with
# the AggregatedDiscoveryEndpoint feature gate off); the test machines have no network. Their
# aggregatedDiscovery=true subtests run on kubefake. No other package has tests of these names.
skip='^(TestApiMachinery|TestLazyRestMapperProvider)$/^aggregatedDiscovery=false$'
# Ginkgo specs skipped by name (-ginkgo.skip, which every package's test binary accepts, as
# controller-runtime's own hack/test-all.sh relies on): pkg/cache's "should allow for get
# informer to be cancelled" asks GetInformer for a new informer with an already cancelled
# context and expects a timeout; GetInformer only waits, and so only fails, when the informer has
# not synced by the time it checks, which assumes the informer's first LIST takes longer than
# the call that started it. kubefake answers that LIST in well under a millisecond, so the
# informer sometimes syncs first (about one run in four on 2 cores) and the spec then fails; it
# tests the client's timing, not the server's answers.
ginkgo_skip='should allow for get informer to be cancelled'

if ! command -v go >/dev/null 2>&1; then
  echo "$name: go is not on PATH; controller-runtime's suite is a Go module ($module)" >&2
  exit 2
fi

source "$(dirname "${BASH_SOURCE[0]}")/kubefake-bin.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bin" envtest-assets "$work/assets" >/dev/null
for asset in kube-apiserver etcd kubectl; do
  if [ ! -x "$work/assets/$asset" ]; then
    echo "$name: kubefake envtest-assets wrote no $asset" >&2
    exit 1
  fi
done

# The module as the module cache holds it (read-only there), copied, since its tests may write.
dir=$(go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
if [ -z "$dir" ] || [ ! -f "$dir/go.mod" ]; then
  echo "$name: go mod download found no $module@$version" >&2
  exit 1
fi
cp -R "$dir" "$work/controller-runtime"
chmod -R u+w "$work/controller-runtime"
cd "$work/controller-runtime"

# Compile first, so that the wall time below is the suite's, not the Go compiler's.
log=$(mktemp -t controller-runtime.XXXXXX.log)
began=$(date +%s.%N)
if ! go test -count=1 -exec true "${packages[@]}" >"$log" 2>&1; then
  cat "$log"
  rm -f "$log"
  echo "$name: controller-runtime $version's tests do not compile"
  exit 1
fi
ended=$(date +%s.%N)
echo "$name: compiled controller-runtime $version's tests in $(awk -v a="$began" -v b="$ended" 'BEGIN { printf "%.1f", b - a }')s"

began=$(date +%s.%N)
rc=0
env -u USE_EXISTING_CLUSTER GINKGO_NO_COLOR=TRUE KUBEBUILDER_ASSETS="$work/assets" \
  timeout 660 go test -count=1 -v -timeout 10m -skip "$skip" "${packages[@]}" \
  -args -ginkgo.skip="$ginkgo_skip" >"$log" 2>&1 || rc=$?
ended=$(date +%s.%N)
wall=$(awk -v a="$began" -v b="$ended" 'BEGIN { printf "%.1f", b - a }')

# Counts, per package: the Ginkgo summaries' "N Passed | M Failed", and the plain Go tests that
# have no subtests (the Go tests running a Ginkgo suite are not counted again). A package that
# failed without a failing spec or test (a panic, a timeout, a failed BeforeSuite) counts as one
# failure.
sed -i 's/\x1b\[[0-9;]*[A-Za-z]//g' "$log"
read -r passed failed ginkgo gotests < <(awk '
  function flush(pkgfailed,   n, k, top, leaf) {
    for (n in status) {
      top = n; sub(/\/.*/, "", top)
      if (top in runner) continue
      leaf = 1
      for (k in status) if (index(k, n "/") == 1) { leaf = 0; break }
      if (!leaf) continue
      if (status[n] == "PASS") { gopass++ } else if (status[n] == "FAIL") { gofail++; pkgfails++ }
    }
    if (pkgfailed && pkgfails == 0) other++
    pkgfails = 0
    delete status; delete runner
  }
  /^=== RUN / { if ($3 !~ /\//) current = $3 }
  /^Ran [0-9]+ of [0-9]+ Specs/ { runner[current] = 1 }
  /[0-9]+ Passed \| [0-9]+ Failed/ {
    match($0, /[0-9]+ Passed/); gpass += substr($0, RSTART, RLENGTH - 7)
    match($0, /[0-9]+ Failed/); f = substr($0, RSTART, RLENGTH - 7); gfail += f; pkgfails += f
  }
  /^[[:space:]]*--- (PASS|FAIL|SKIP): / { status[$3] = substr($2, 1, length($2) - 1) }
  /^ok[[:space:]]+sigs\.k8s\.io\// { flush(0) }
  /^FAIL[[:space:]]+sigs\.k8s\.io\// { flush(1) }
  END { printf "%d %d %d %d\n", gpass + gopass, gfail + gofail + other, gpass, gopass }
' "$log")

if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
  # The Ginkgo report of each failed spec (the first 20, 40 lines each), then the end of each
  # failed package's output (which has its failed Go tests, a panic's first lines or Ginkgo's
  # summary of failures), then every failure line; the full log stays in $log.
  awk '
    function report(   i) {
      if (shown++ < 20) {
        for (i = 1; i <= n && i <= 40; i++) print buf[i]
        if (n > 40) print "  ... (" n - 40 " more lines in the log)"
        print "------------------------------"
      } else hidden++
    }
    /^------------------------------$/ { if (n > 0 && buf[1] ~ /\[(FAILED|PANICKED|TIMEDOUT|INTERRUPTED)\]/) report(); n = 0; next }
    { buf[++n] = $0 }
    END { if (hidden) print "... and " hidden " more failed specs in the log" }
  ' "$log"
  awk '
    { out[++n] = $0 }
    /^FAIL[[:space:]]+sigs\.k8s\.io\// {
      print "== the end of the output of " $2 ":"
      for (i = (n > 40 ? n - 39 : 1); i <= n; i++) print out[i]
    }
    /^(ok|FAIL|\?)[[:space:]]+sigs\.k8s\.io\// { n = 0 }
    END { if (n > 1) { print "== the end of the log:"; for (i = (n > 40 ? n - 39 : 1); i <= n; i++) print out[i] } }
  ' "$log"
  echo "== the failures (the full log is $log):"
  grep -E '^[[:space:]]*\[FAIL\]|^[[:space:]]*--- FAIL|^FAIL|^panic:|test timed out|^[[:space:]]*\[(PANICKED|TIMEDOUT|INTERRUPTED)\]' "$log" | awk '!seen[$0]++' || true
  if [ "$rc" -eq 124 ]; then
    echo "$name: go test did not finish within 660s"
  fi
  echo "$name: controller-runtime $version: $passed specs passed, $failed failed (go test exit $rc), in ${wall}s on kubefake"
  exit 1
fi
rm -f "$log"
echo "$name: controller-runtime $version: $passed specs passed ($ginkgo Ginkgo specs, $gotests Go tests), $failed failed, in ${wall}s on kubefake"
