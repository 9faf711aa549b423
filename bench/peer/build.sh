#!/usr/bin/env bash
# Builds the peer benchmark's Go binary (controller-runtime and a raw client-go
# watch) and caches it outside the repository, keyed by a hash of go.mod,
# go.sum and the Go sources, so each machine builds each version once.
#
#   bash bench/peer/build.sh        # prints the path of the binary
#
# Env: REFWATCH_CACHE (default ~/.cache/refwatch).
# Exits 3 with "SKIPPED: peer: ..." when there is no Go toolchain.
set -euo pipefail
cd "$(dirname "$0")"

CACHE=${REFWATCH_CACHE:-$HOME/.cache/refwatch}
log() { echo "[build-peer] $*" >&2; }

case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) [ -x /usr/local/go/bin/go ] && PATH="$PATH:/usr/local/go/bin" ;; esac
if ! command -v go >/dev/null 2>&1; then
  echo "SKIPPED: peer: no Go toolchain on PATH (install Go >= 1.25)" >&2
  exit 3
fi

hash=$(cat go.mod go.sum $(ls *.go | LC_ALL=C sort) | sha256sum | cut -c1-16)
OUT="$CACHE/peer/$hash"
BIN="$OUT/peer"
if [ -x "$BIN" ]; then
  log "peer binary cached at $BIN"
  echo "$BIN"
  exit 0
fi
mkdir -p "$OUT"
log "compiling the peer binary (controller-runtime; a few minutes on 2 cores the first time)"
CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -o "$BIN.tmp.$$" .
mv "$BIN.tmp.$$" "$BIN"
log "peer binary built: $BIN"
echo "$BIN"
