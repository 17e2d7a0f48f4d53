#!/usr/bin/env bash
# A create against a GET through one keep-alive connection, measured from outside the process
# with wrk (the issue's method): `kubefake serve` (release, jemalloc, plain HTTP, AlwaysAllow) on
# a random port, then rounds of GET of one ConfigMap and of creates with unique names, each
# round ROUND seconds on one connection. Prints each round and the medians' ratio, and the
# server's CPU time per request (user and system, from /proc), which says how much of a
# request's time is the server's own work rather than the loopback and the client.
# Usage: scripts/wrk.sh [ROUNDS] [ROUND_SECONDS]   (defaults 3 and 3; needs wrk: apt-get install wrk)
# KUBEFAKE_BIN=path serves with another build (another commit's, to compare).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "wrk.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
rounds=${1:-3}
seconds=${2:-3}
bin=${KUBEFAKE_BIN:-}
if [ -z "$bin" ]; then
  cargo build --quiet --release --features jemalloc --bin kubefake
  bin=target/release/kubefake
fi
work=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" serve --http --authorization-mode AlwaysAllow --port 0 \
  --kubeconfig "$work/kubeconfig" >"$work/out" 2>/dev/null &
server_pid=$!
for _ in $(seq 100); do grep -q KUBEFAKE_URL "$work/out" && break; sleep 0.1; done
url=$(grep -o 'KUBEFAKE_URL=[^ ]*' "$work/out" | cut -d= -f2)
collection=/api/v1/namespaces/default/configmaps
object() { # the bench's ConfigMap: two keys
  printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"},"data":{"mode":"fast","level":"3"}}' "$1"
}
curl -sf -o /dev/null -H 'Content-Type: application/json' -d "$(object seed)" "$url$collection"

# Each round's creates take names of their own (the round in the prefix), so none is a 409.
cat >"$work/create.lua" <<EOF
local n = 0
local prefix = os.getenv("WRK_PREFIX")
request = function()
  n = n + 1
  local body = string.format('$(object '%s-%d')', prefix, n)
  return wrk.format("POST", "$collection", {["Content-Type"] = "application/json"}, body)
end
EOF

# Requests per second of a wrk run, refusing a run with failed requests.
rate() {
  local out
  out=$(cat)
  if grep -q 'Non-2xx' <<<"$out"; then
    echo "wrk.sh: requests failed: $out" >&2
    exit 1
  fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}
# The server's CPU time so far (user + system), in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
tick_us=$((1000000 / $(getconf CLK_TCK)))
# The server's CPU microseconds per request of a run: ticks before, ticks after, req/s.
cpu_per_request() { awk -v t="$(($2 - $1))" -v r="$3" -v s="$seconds" -v u="$tick_us" 'BEGIN {print t * u / (r * s)}'; }
gets=()
creates=()
get_cpus=()
create_cpus=()
for round in $(seq "$rounds"); do
  t0=$(ticks)
  get=$(wrk -t1 -c1 -d"${seconds}s" "$url$collection/seed" | rate)
  t1=$(ticks)
  create=$(WRK_PREFIX="r$round" wrk -t1 -c1 -d"${seconds}s" -s "$work/create.lua" "$url" | rate)
  t2=$(ticks)
  get_cpu=$(cpu_per_request "$t0" "$t1" "$get")
  create_cpu=$(cpu_per_request "$t1" "$t2" "$create")
  printf 'round %d: GET %8.0f/s (server CPU %5.1f us)   create %8.0f/s (server CPU %5.1f us)\n' \
    "$round" "$get" "$get_cpu" "$create" "$create_cpu"
  gets+=("$get")
  creates+=("$create")
  get_cpus+=("$get_cpu")
  create_cpus+=("$create_cpu")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
get=$(median "${gets[@]}")
create=$(median "${creates[@]}")
awk -v g="$get" -v c="$create" -v gc="$(median "${get_cpus[@]}")" -v cc="$(median "${create_cpus[@]}")" 'BEGIN {
  printf "median: GET %.0f/s (%.1f us), create %.0f/s (%.1f us): a create costs %.2fx a GET\n",
    g, 1e6 / g, c, 1e6 / c, g / c
  printf "median server CPU per request: GET %.1f us, create %.1f us (%.2fx)\n", gc, cc, cc / gc }'
