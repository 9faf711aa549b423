#!/usr/bin/env bash
# Installs the library the way a controller author does and runs the example controller with it:
# build lib → npm pack → a fresh copy of examples/controller → npm install the tarball → tsc against the
# shipped declarations → node dist/controller.js against the embedded cluster and a real kube-apiserver.
# Each run must print "App shop/web resolved", then stop on SIGTERM with exit code 0.
# A tier that cannot be provisioned prints "SKIPPED: ..."; under CI=true that is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) [ -x /usr/local/go/bin/go ] && PATH="$PATH:/usr/local/go/bin" ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/refwatch-example-controller-XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAILED: example controller: $*" >&2; exit 1; }

echo "== build, pack and install the library into a fresh copy of examples/controller"
app=$(bash scripts/install-example-controller.sh "$work" | tail -1)
[ -d "$app" ] || fail "scripts/install-example-controller.sh (above)"
node --import tsx scripts/check-package.ts "$app/node_modules/refwatch" || fail "the installed package is incomplete (above)"
# The package's executables, as npm links them: `refwatch` and the kubectl plugin name.
for exe in refwatch kubectl-refwatch; do
  "$app/node_modules/.bin/$exe" --help >"$work/$exe-help.txt" 2>&1 || { cat "$work/$exe-help.txt" >&2; fail "the installed $exe executable does not run"; }
  grep -q "explain" "$work/$exe-help.txt" || fail "the installed $exe executable printed no help"
done

# run_on CLUSTER: starts the cluster with the shop scenario, runs the compiled controller with plain node
# until the App resolves, then stops it with SIGTERM and expects a clean exit.
run_on() {
  local cluster=$1 fixture_log="$work/fixture-$1.log" log="$work/controller-$1.log"
  node --import tsx scripts/example-cluster.ts "$cluster" >"$fixture_log" 2>&1 &
  local fixture=$!
  pids+=("$fixture")
  local kubeconfig=""
  for _ in $(seq 1 600); do
    kubeconfig=$(sed -n 's/^KUBECONFIG=//p' "$fixture_log")
    [ -n "$kubeconfig" ] && break
    kill -0 "$fixture" 2>/dev/null || break
    sleep 0.5
  done
  if [ -z "$kubeconfig" ]; then cat "$fixture_log" >&2; echo "the $cluster cluster did not start"; return 1; fi

  KUBECONFIG=$kubeconfig node "$app/dist/controller.js" >"$log" 2>&1 &
  local controller=$!
  local resolved=false
  for _ in $(seq 1 240); do
    grep -q '^App shop/web resolved$' "$log" && { resolved=true; break; }
    kill -0 "$controller" 2>/dev/null || break
    sleep 0.5
  done
  # Kubernetes waits terminationGracePeriodSeconds (30 s) after SIGTERM, then kills: so does this.
  kill -TERM "$controller" 2>/dev/null
  for _ in $(seq 1 60); do kill -0 "$controller" 2>/dev/null || break; sleep 0.5; done
  kill -0 "$controller" 2>/dev/null && { echo "no exit 30 s after SIGTERM: killing it" >>"$log"; kill -KILL "$controller"; }
  wait "$controller"
  local rc=$?
  kill -TERM "$fixture" 2>/dev/null
  wait "$fixture" 2>/dev/null
  pids=("${pids[@]/$fixture}")
  sed "s/^/  [$cluster] /" "$log"
  sed "s/^/  [$cluster] /" "$fixture_log"
  $resolved || { echo "the controller did not resolve App shop/web on the $cluster cluster"; return 1; }
  [ "$rc" -eq 0 ] || { echo "the controller exited with $rc after SIGTERM on the $cluster cluster"; return 1; }
  grep -q '^app-controller stopped$' "$log" || { echo "the controller did not stop gracefully on the $cluster cluster"; return 1; }
}

# test_on MODE [ASSETS]: runs the example's own test suite (node --test, on refwatch/testing) from the installed tarball.
test_on() {
  local mode=$1 assets=${2:-} log="$work/tests-$1.log"
  (cd "$app" && REFWATCH_TEST_CLUSTER=$mode REFWATCH_KUBE_ASSETS=$assets npm test) >"$log" 2>&1
  local rc=$?
  sed "s/^/  [tests $mode] /" "$log" | grep -E '^\s*\[tests [a-z]+\] (not )?ok |# (pass|fail)' || cat "$log"
  [ "$rc" -eq 0 ] || { echo "the example controller's tests failed on the $mode cluster"; return 1; }
}

failed=()
echo "== run on the embedded cluster"
run_on embedded || failed+=(embedded)
echo "== the example controller's tests on refwatch/testing, embedded"
test_on embedded || failed+=("tests embedded")

echo "== run on a real kube-apiserver"
if assets=$(bash tests/setup/build-real-cluster.sh 2>"$work/build.log" | tail -1); then
  run_on real || failed+=(real)
  echo "== the example controller's tests on refwatch/testing, real (REFWATCH_KUBE_ASSETS=$assets)"
  test_on real "$assets" || failed+=("tests real")
else
  cat "$work/build.log" >&2
  why=$(sed -n 's/^SKIPPED: real cluster: //p' "$work/build.log" | tail -1)
  echo "SKIPPED: example controller (real): ${why:-tests/setup/build-real-cluster.sh failed}" >&2
  [ "${CI:-}" = true ] && failed+=("real (skipped under CI)")
fi

if [ ${#failed[@]} -gt 0 ]; then fail "${failed[*]}"; fi
echo "example controller: resolved and stopped cleanly on every cluster, installed from $(tail -1 "$work/pack.out")"
