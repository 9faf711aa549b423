#!/usr/bin/env bash
# Builds kubectl from the Go module proxy with build-kube-command.sh, as
# build-real-cluster.sh builds kube-apiserver,
# and caches it outside the repository by version.
#
#   bash tests/setup/build-kubectl.sh        # prints the path of the kubectl binary
#
# Env: KUBE_VERSION (default v1.35.4), REFWATCH_CACHE (default ~/.cache/refwatch).
# Exits 3 with "SKIPPED: kubectl: ..." when there is no Go toolchain.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.35.4}
CACHE=${REFWATCH_CACHE:-$HOME/.cache/refwatch}
OUT="$CACHE/kubectl/$KUBE_VERSION"
BIN="$OUT/kubectl"
mkdir -p "$OUT"

log() { echo "[build-kubectl] $*" >&2; }
# shellcheck source=build-kube-command.sh
source "$(dirname "$0")/build-kube-command.sh"

case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) [ -x /usr/local/go/bin/go ] && PATH="$PATH:/usr/local/go/bin" ;; esac
if ! command -v go >/dev/null 2>&1; then
  echo "SKIPPED: kubectl: no Go toolchain on PATH (install Go >= 1.25)" >&2
  exit 3
fi

if [ -x "$BIN" ]; then
  log "kubectl $KUBE_VERSION cached at $BIN"
  echo "$BIN"
  exit 0
fi

build_kube_command kubectl "$BIN"
echo "$BIN"
