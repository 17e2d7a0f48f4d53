# Shared by the kubectl scripts: start `kubefake serve`, compare kubectl output with what a real
# cluster prints, stop cleanly. Source it; it sets `set -euo pipefail`.
set -euo pipefail

if ! command -v kubectl >/dev/null 2>&1; then
  echo "$(basename "$0"): kubectl is not on PATH; install kubectl >= 1.30 (the machine image ships 1.32)" >&2
  exit 2
fi

# The machine image's kubectl is gcloud's dispatcher: it runs the kubectl matching the server's
# version and its default (1.32) when it ships none that close, so a server reporting 1.36
# would change which kubectl prints the expected output. Use the newest versioned kubectl the
# dispatcher ships instead, whatever version the server reports.
dispatcher_dir=$(dirname "$(readlink -f "$(command -v kubectl)")")
newest_kubectl=$(ls "$dispatcher_dir"/kubectl.1.* 2>/dev/null | sort -V | tail -1 || true)
if [ -n "$newest_kubectl" ]; then
  kubectl() { "$newest_kubectl" "$@"; }
fi

source "$(dirname "${BASH_SOURCE[0]}")/kubefake-bin.sh"

work=$(mktemp -d)
cache="$work/cache"
server_pid=
failures=0
step=0

cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  jobs -p | xargs -r kill 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# start_server [serve flags...]: starts kubefake, exports KUBECONFIG and KUBEFAKE_URL.
start_server() {
  # A previous server's output must not pass for this one's before the shell truncates it.
  rm -f "$work/stdout" "$work/stderr"
  "$bin" serve --port 0 --kubeconfig "$work/kubeconfig" "$@" >"$work/stdout" 2>"$work/stderr" &
  server_pid=$!
  for _ in $(seq 1 200); do
    grep -q '^KUBECONFIG=' "$work/stdout" 2>/dev/null && break
    sleep 0.05
  done
  if ! grep -Eq '^KUBEFAKE_URL=https?://127.0.0.1:' "$work/stdout"; then
    echo "kubefake serve did not report its URL" >&2
    cat "$work/stdout" "$work/stderr" >&2
    exit 1
  fi
  export KUBECONFIG="$work/kubeconfig"
  KUBEFAKE_URL=$(sed -n 's/^KUBEFAKE_URL=//p' "$work/stdout")
  export KUBEFAKE_URL
}

# normalise: ages, timestamps, uids and resourceVersions differ run to run.
normalise() {
  sed -E \
    -e 's/(^| )[0-9]+(s|m|m[0-9]+s|h|h[0-9]+m|d|d[0-9]+h)( |$)/\1<age>\3/g' \
    -e 's/(creationTimestamp: )"[^"]+"/\1"<time>"/' \
    -e 's/(resourceVersion: )"[0-9]+"/\1"<rv>"/' \
    -e 's/(uid: )[0-9a-f-]{36}/\1<uid>/'
}

# check NAME EXPECTED ACTUAL: compares normalised texts.
check() {
  local name=$1 want got
  want=$(printf '%s\n' "$2" | normalise)
  got=$(printf '%s\n' "$3" | normalise)
  step=$((step + 1))
  if [ "$got" != "$want" ]; then
    failures=$((failures + 1))
    echo "FAIL $step. $name"
    diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | sed 's/^/    /' || true
  else
    echo "ok   $step. $name"
  fi
}

# expect NAME EXIT_CODE EXPECTED_OUTPUT -- kubectl ARGS...
expect() {
  local name=$1 want_rc=$2 want=$3
  shift 4
  local got rc=0
  got=$(kubectl --cache-dir "$cache" "$@" 2>&1) || rc=$?
  if [ "$rc" != "$want_rc" ]; then
    got="$got
(exit $rc, want $want_rc)"
  fi
  check "$name: kubectl $*" "$want" "$got"
}

# stop_server: SIGTERM, and it must exit 0 promptly.
stop_server() {
  kill -TERM "$server_pid"
  local stopped=false
  for _ in $(seq 1 100); do
    if ! kill -0 "$server_pid" 2>/dev/null; then stopped=true; break; fi
    sleep 0.05
  done
  local rc=0
  $stopped && { wait "$server_pid" || rc=$?; }
  step=$((step + 1))
  if $stopped && [ "$rc" = 0 ]; then
    echo "ok   $step. kubefake stops cleanly on SIGTERM"
  else
    failures=$((failures + 1))
    echo "FAIL $step. kubefake did not stop cleanly on SIGTERM"
  fi
  server_pid=
}

# finish: the script's verdict.
finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$(basename "$0"): $failures of $step step(s) differ from a real cluster"
    exit 1
  fi
  echo "$(basename "$0"): all $step steps match a real cluster"
}
