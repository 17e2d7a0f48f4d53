# Sourced by the client scripts: sets `root` (the repository, also the working directory) and
# `bin` (the kubefake binary: $KUBEFAKE_BIN, or a debug build made now).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=${KUBEFAKE_BIN:-}
if [ -z "$bin" ]; then
  cargo build --quiet --bin kubefake
  bin="${CARGO_TARGET_DIR:-$root/target}/debug/kubefake"
fi
