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

if ! command -v go >/dev/null 2>&1; then
  echo "SKIPPED: real cluster: no Go toolchain on PATH (install Go >= 1.25)" >&2
  exit 3
fi

# kube-apiserver: a wrapper module that requires k8s.io/kubernetes and pins each
# staging module (k8s.io/<name>) to the matching v0.Y.Z release, because the
# kubernetes go.mod replaces them with ./staging paths that a dependent cannot use.
build_kube_apiserver() {
  local bin="$OUT/kube-apiserver"
  if [ -x "$bin" ]; then log "kube-apiserver $KUBE_VERSION cached at $bin"; return; fi
  local work; work=$(mktemp -d)
  local staging="v0.${KUBE_VERSION#v1.}"
  log "fetching k8s.io/kubernetes@$KUBE_VERSION module metadata"
  local gomod
  gomod=$(cd "$work" && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module refwatch.dev/realcluster/kubeapiserver"
    echo "go 1.25.0"
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}'
  } > "$work/go.mod"
  cat > "$work/tools.go" <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
  log "resolving modules (first time only; this downloads a few hundred MB)"
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true)
  (cd "$work" && GOFLAGS=-mod=mod go get "k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION" >&2)
  log "compiling kube-apiserver $KUBE_VERSION (several minutes on 2 cores)"
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w \
     -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION \
     -X k8s.io/component-base/version.gitMajor=1 \
     -X k8s.io/component-base/version.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2)" \
     -o "$bin.tmp.$$" k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$bin.tmp.$$" "$bin"
  rm -rf "$work"
  log "kube-apiserver built: $bin"
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
