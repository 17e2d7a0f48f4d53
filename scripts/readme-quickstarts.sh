#!/usr/bin/env bash
# README's JavaScript, Java and Go quickstarts are the files CI runs: each file (for Go, its
# startKubefake helper) must appear in README.md or a page of docs/ (the Vitest and Jest ones are
# in docs/clients.md) exactly as it is, so an edit to one without the other fails here.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import glob, sys
pages = {name: open(name).read() for name in ["README.md"] + sorted(glob.glob("docs/*.md"))}
go = open("tests/envtest/serve/serve_test.go").read()
snippets = {
    "tests/clients/javascript/test/quickstart.test.mjs":
        open("tests/clients/javascript/test/quickstart.test.mjs").read(),
    "tests/clients/javascript/vitest/quickstart.test.mjs":
        open("tests/clients/javascript/vitest/quickstart.test.mjs").read(),
    "tests/clients/javascript/jest/quickstart.test.mjs":
        open("tests/clients/javascript/jest/quickstart.test.mjs").read(),
    "tests/clients/java/src/test/java/dev/kubefake/QuickstartTest.java":
        open("tests/clients/java/src/test/java/dev/kubefake/QuickstartTest.java").read(),
    "tests/envtest/serve/serve_test.go (startKubefake)":
        go[go.index("// startKubefake runs"):go.index("\nfunc TestConfigMapCRUDAndWatch")],
}
stale = [name for name, text in snippets.items()
         if not any(text.strip() in page for page in pages.values())]
for name in stale:
    print(f"FAIL neither README.md nor docs/*.md holds {name} as it is")
if stale:
    sys.exit(1)
print(f"ok   README.md and docs/*.md hold the {len(snippets)} quickstart files CI runs")
PY
