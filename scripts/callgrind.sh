#!/usr/bin/env bash
# Server instructions per request, per verb and per stage, counted by callgrind (repeatable on a
# noisy machine: same binary, same input, same count). Usage: scripts/callgrind.sh [N] [--functions]
# N requests per verb and kind (default 200); --functions adds each phase's costliest functions;
# --server PATH serves with another build of the driver (target/release/deps/callgrind-*), to
# compare two commits with the same workload.
# See scripts/bench_callgrind.rs for the workload and the stages.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 1; }
exec cargo bench --bench callgrind -- "$@"
