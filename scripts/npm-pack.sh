#!/usr/bin/env bash
# npm-pack.sh BINARY OUTDIR [PLATFORM]: packs the npm packages for one platform from a built
# kubefake binary: `kubefake` (the launcher and the test fixture, from scripts/npm/kubefake) and
# `@kubefake/PLATFORM` (the binary, with the os and cpu fields that make npm install only the one
# that fits). PLATFORM is Node's `<process.platform>-<process.arch>` (default linux-x64); each
# platform is packed on its own from its own binary, then all are published with `npm publish`.
# Writes OUTDIR/kubefake-VERSION.tgz and OUTDIR/kubefake-PLATFORM-VERSION.tgz.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BINARY OUTDIR [PLATFORM]" >&2
  exit 2
fi
binary=$1 out=$2 platform=${3:-linux-x64}
here=$(cd "$(dirname "$0")" && pwd)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/../Cargo.toml" | head -1)
for manifest in "$here/npm/kubefake/package.json" "$here/npm/platform/package.json"; do
  if ! grep -q "\"version\": \"$version\"" "$manifest"; then
    echo "$0: $manifest does not have the crate's version $version" >&2
    exit 1
  fi
done
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

cp -r "$here/npm/kubefake" "$stage/kubefake"
cp "$here/../README.md" "$stage/kubefake/README.md"

mkdir -p "$stage/platform/bin"
exe=kubefake
case $platform in win32-*) exe=kubefake.exe ;; esac
# Debug symbols are of no use to a package's users and are most of a debug build's size.
strip -o "$stage/platform/bin/$exe" "$binary" 2>/dev/null || cp "$binary" "$stage/platform/bin/$exe"
chmod +x "$stage/platform/bin/$exe"
sed -e "s/PLATFORM/$platform/g" -e "s/\"OS\"/\"${platform%%-*}\"/" -e "s/\"CPU\"/\"${platform#*-}\"/" \
  "$here/npm/platform/package.json" >"$stage/platform/package.json"
printf '# @kubefake/%s\n\nThe kubefake binary for %s. Install `kubefake`, which depends on it.\n' \
  "$platform" "$platform" >"$stage/platform/README.md"

(cd "$stage/kubefake" && npm pack --silent --pack-destination "$out" >/dev/null)
(cd "$stage/platform" && npm pack --silent --pack-destination "$out" >/dev/null)
ls "$out/kubefake-$version.tgz" "$out/kubefake-$platform-$version.tgz"
