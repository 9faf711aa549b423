# Sourced by build-real-cluster.sh and build-kubectl.sh; not run on its own.
#
# build_kube_command NAME BIN builds k8s.io/kubernetes/cmd/NAME at $KUBE_VERSION
# into BIN, through a wrapper module that requires k8s.io/kubernetes and pins
# each staging module (k8s.io/<name>) to the matching v0.Y.Z release, because
# the kubernetes go.mod replaces them with ./staging paths that a dependent
# cannot use. It logs through the caller's log().
build_kube_command() {
  local name=$1 bin=$2
  local work; work=$(mktemp -d)
  local staging="v0.${KUBE_VERSION#v1.}"
  log "fetching k8s.io/kubernetes@$KUBE_VERSION module metadata"
  local gomod
  gomod=$(cd "$work" && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module refwatch.dev/tools/$name"
    echo "go 1.25.0"
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}'
  } > "$work/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/%s"\n' "$name" > "$work/tools.go"
  log "resolving modules (first time only; this downloads a few hundred MB)"
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true)
  (cd "$work" && GOFLAGS=-mod=mod go get "k8s.io/kubernetes/cmd/$name@$KUBE_VERSION" >&2)
  log "compiling $name $KUBE_VERSION (several minutes on 2 cores)"
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w \
     -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION \
     -X k8s.io/component-base/version.gitMajor=1 \
     -X k8s.io/component-base/version.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2) \
     -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION" \
     -o "$bin.tmp.$$" "k8s.io/kubernetes/cmd/$name")
  mv "$bin.tmp.$$" "$bin"
  rm -rf "$work"
  log "$name built: $bin"
}
