#!/usr/bin/env bash
# Builds kube-apiserver and etcd from the Go module proxy and caches the binaries
# outside the repository, keyed by version, so each machine builds them once.
#
#   bash tests/setup/build-real-cluster.sh        # prints the cache directory
#
# Env: KUBE_VERSION (default v1.35.4), ETCD_VERSION (default v3.5.35),
#      REFWATCH_CACHE (default ~/.cache/refwatch).
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.35.4}
ETCD_VERSION=${ETCD_VERSION:-v3.5.35}
CACHE=${REFWATCH_CACHE:-$HOME/.cache/refwatch}
OUT="$CACHE/real-cluster/kube-$KUBE_VERSION-etcd-$ETCD_VERSION"
mkdir -p "$OUT"

log() { echo "[build-real-cluster] $*" >&2; }
# shellcheck source=build-kube-command.sh
source "$(dirname "$0")/build-kube-command.sh"

if ! command -v go >/dev/null 2>&1; then
  echo "SKIPPED: real cluster: no Go toolchain on PATH (install Go >= 1.25)" >&2
  exit 3
fi

# kube-apiserver: built by build-kube-command.sh's wrapper module.
build_kube_apiserver() {
  local bin="$OUT/kube-apiserver"
  if [ -x "$bin" ]; then log "kube-apiserver $KUBE_VERSION cached at $bin"; return; fi
  build_kube_command kube-apiserver "$bin"
}

# etcd: same wrapper approach; etcd's server module is its main package.
build_etcd() {
  local bin="$OUT/etcd"
  if [ -x "$bin" ]; then log "etcd $ETCD_VERSION cached at $bin"; return; fi
  local work; work=$(mktemp -d)
  cat > "$work/go.mod" <<MOD
module refwatch.dev/realcluster/etcd
go 1.25.0
require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
  cat > "$work/tools.go" <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
  log "compiling etcd $ETCD_VERSION"
  (cd "$work" && GOFLAGS=-mod=mod go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2)
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$bin.tmp.$$" go.etcd.io/etcd/server/v3)
  mv "$bin.tmp.$$" "$bin"
  rm -rf "$work"
  log "etcd built: $bin"
}

build_etcd
build_kube_apiserver
echo "$OUT"
