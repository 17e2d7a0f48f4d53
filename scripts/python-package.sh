#!/usr/bin/env bash
# The Python package (scripts/python): builds the wheel with maturin, the `kubefake` binary inside
# it, installs it into a fresh virtualenv and runs tests/clients/python there with pytest
# (the plugin's fixtures, marker and ini options, the quickstart of README, a kopf operator).
# The wheel is built in the dev profile: cargo reuses the debug build the other scripts use and
# only links and strips the binary, instead of a release build of the whole crate.
# Needs what scripts/python/requirements.txt pins (installed by .ci/run); downloads nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset KUBEFAKE_BIN   # the fixtures must find the binary the wheel installed
for module in maturin pytest kopf kubernetes; do
  if ! python3 -c "import $module" 2>/dev/null; then
    echo "python-package.sh: the Python package '$module' is missing (pip install -r scripts/python/requirements.txt)" >&2
    exit 2
  fi
done

started=$(date +%s%N)
(cd "$root/scripts/python" && python3 -m maturin build --quiet --offline --profile dev \
  --compatibility linux --out "$work/wheels")
built=$(date +%s%N)
wheel=$(ls "$work"/wheels/kubefake-*.whl)
echo "python-package.sh: built $(basename "$wheel") ($(( $(stat -c %s "$wheel") / 1048576 )) MiB) in $(( (built - started) / 1000000 )) ms"

# The venv sees the pinned packages .ci/run installed; the wheel's own dependencies must resolve
# from them (no index). The venv gets no pip of its own (the outer pip installs into it: 5 s less).
python3 -m venv --without-pip --system-site-packages "$work/venv"
python3 -m pip --python "$work/venv/bin/python" install --quiet --disable-pip-version-check --no-index "$wheel"
installed=$("$work/venv/bin/python" -c "import kubefake; print(kubefake.find_kubefake_bin())")
case "$installed" in
  "$work/venv/"*) ;;
  *) echo "python-package.sh: the plugin found $installed, not the wheel's binary" >&2; exit 1 ;;
esac

# README's Python quickstart is the tested file, as it is (its first comment line aside).
python3 - "$root" <<'PY'
import pathlib, sys
root = pathlib.Path(sys.argv[1])
quickstart = (root / "tests/clients/python/test_quickstart.py").read_text().split("\n", 1)[1].lstrip("\n")
if "```python\n" + quickstart + "```" not in (root / "README.md").read_text():
    sys.exit("python-package.sh: README's Python quickstart differs from tests/clients/python/test_quickstart.py")
PY

cd "$root/tests/clients/python"
"$work/venv/bin/python" -m pytest -q -s
echo "python-package.sh: done in $(( ($(date +%s%N) - started) / 1000000 )) ms"
