#!/usr/bin/env bash
# Builds Helm from the Go module proxy and caches it outside the repository by
# version, like build-kubectl.sh. Helm's module has no replace directives, so
# `go install module@version` builds it as released.
#
#   bash tests/setup/build-helm.sh        # prints the path of the helm binary
#
# Env: HELM_VERSION (default v3.22.0), REFWATCH_CACHE (default ~/.cache/refwatch).
# Exits 3 with "SKIPPED: helm: ..." when there is no Go toolchain.
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-v3.22.0}
CACHE=${REFWATCH_CACHE:-$HOME/.cache/refwatch}
OUT="$CACHE/helm/$HELM_VERSION"
BIN="$OUT/helm"

log() { echo "[build-helm] $*" >&2; }

case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) [ -x /usr/local/go/bin/go ] && PATH="$PATH:/usr/local/go/bin" ;; esac
if ! command -v go >/dev/null 2>&1; then
  echo "SKIPPED: helm: no Go toolchain on PATH (install Go >= 1.26)" >&2
  exit 3
fi

if [ -x "$BIN" ]; then
  log "helm $HELM_VERSION cached at $BIN"
  echo "$BIN"
  exit 0
fi

mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The Kubernetes version `helm template` and `helm lint` assume is derived from
# Helm's client-go, as Helm's Makefile does (client-go v0.37 -> 1.37); without it
# a source build assumes 1.20 and refuses charts that need a newer cluster.
gomod=$(cd "$work" && go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
client_go=$(awk '$1 == "k8s.io/client-go" {print $2}' "$gomod")
k8s_minor=$(echo "$client_go" | cut -d. -f2)
[ -n "$k8s_minor" ] || { echo "[build-helm] cannot read k8s.io/client-go's version from $gomod" >&2; exit 1; }
log "compiling helm $HELM_VERSION (a few minutes on 2 cores; default Kubernetes 1.$k8s_minor)"
# version.version is what `helm version` prints; without it a source build says v3.x-dev.
(cd "$work" && CGO_ENABLED=0 GOBIN="$work/bin" GOFLAGS=-mod=mod go install -trimpath \
   -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
     -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$k8s_minor \
     -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$k8s_minor" \
   "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2)
mv "$work/bin/helm" "$BIN.tmp.$$"
mv "$BIN.tmp.$$" "$BIN"
log "helm built: $BIN"
echo "$BIN"
