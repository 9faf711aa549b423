#!/usr/bin/env bash
# install-example-controller.sh DEST [ROOT]
# Installs the example controller the way a controller author does: build ROOT's lib (default: this
# repository) → npm pack → a fresh copy of examples/controller in DEST/controller → npm install the tarball →
# tsc against the shipped declarations. Prints the installed controller's directory on its last line.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
dest=${1:?usage: install-example-controller.sh DEST [ROOT]}
root=${2:-$here}
fail() { echo "FAILED: installing the example controller: $*" >&2; exit 1; }

mkdir -p "$dest"
(cd "$root" && npm run build:lib --silent) >&2 || fail "npm run build:lib in $root"
(cd "$root" && npm pack -w lib --pack-destination "$dest" --silent) >"$dest/pack.out" || fail "npm pack -w lib"
tarball="$dest/$(tail -1 "$dest/pack.out")"
[ -f "$tarball" ] || fail "npm pack printed no tarball ($(cat "$dest/pack.out"))"

app="$dest/controller"
mkdir -p "$app"
tar -C "$here/examples/controller" --exclude=node_modules --exclude=dist -cf - . | tar -C "$app" -xf -
cp "$tarball" "$app/refwatch.tgz"
(cd "$app" && npm install --prefer-offline --no-audit --no-fund --loglevel=error) >&2 || fail "npm install in $app"
(cd "$app" && npx --no-install tsc -p tsconfig.json) >&2 || fail "the example does not type-check against the shipped declarations"
echo "$app"
