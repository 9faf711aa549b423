#!/usr/bin/env bash
# Builds kubectl from the Go module proxy, the same way build-real-cluster.sh
# builds kube-apiserver (a wrapper module pinning every k8s.io staging module),
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

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
staging="v0.${KUBE_VERSION#v1.}"
log "fetching k8s.io/kubernetes@$KUBE_VERSION module metadata"
gomod=$(cd "$work" && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
{
  echo "module refwatch.dev/tools/kubectl"
  echo "go 1.25.0"
  echo "require k8s.io/kubernetes $KUBE_VERSION"
  grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}'
} > "$work/go.mod"
cat > "$work/tools.go" <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kubectl"
GO
log "resolving modules"
(cd "$work" && GOFLAGS=-mod=mod go get "k8s.io/kubernetes/cmd/kubectl@$KUBE_VERSION" >&2)
log "compiling kubectl $KUBE_VERSION (a few minutes on 2 cores)"
(cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w \
   -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION \
   -X k8s.io/component-base/version.gitMajor=1 \
   -X k8s.io/component-base/version.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2) \
   -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION" \
   -o "$BIN.tmp.$$" k8s.io/kubernetes/cmd/kubectl)
mv "$BIN.tmp.$$" "$BIN"
log "kubectl built: $BIN"
echo "$BIN"
