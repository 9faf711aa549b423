#!/usr/bin/env bash
# Runs the integration suite against the embedded API server, then against a
# real kube-apiserver + etcd built by tests/setup/build-real-cluster.sh.
# Extra arguments go to vitest (e.g. a test file). A tier that cannot be
# provisioned prints "SKIPPED: ..."; under CI=true that is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."

case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) [ -x /usr/local/go/bin/go ] && PATH="$PATH:/usr/local/go/bin" ;; esac

failed=()
# Under npm test (scripts/test-all.sh), a JSON report per cluster, for the failures it lists at the end.
report() { [ -n "${REFWATCH_TEST_REPORTS:-}" ] && echo --reporter=default --reporter=json "--outputFile=$REFWATCH_TEST_REPORTS/integration-$1.json"; }

echo "== integration (embedded)"
REFWATCH_TEST_CLUSTER=embedded npx vitest run --project integration $(report embedded) "$@" || failed+=(embedded)

echo "== integration (real)"
build_log=$(mktemp)
# Progress (stderr) shows live and is kept for the skip reason; stdout is the cache dir.
bash tests/setup/build-real-cluster.sh 2>&1 >/dev/null | tee "$build_log" >&2
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ]; then
  REFWATCH_TEST_CLUSTER=real npx vitest run --project integration $(report real) "$@" || failed+=(real)
else
  why=$(sed -n 's/^SKIPPED: real cluster: //p' "$build_log" | tail -1)
  [ -n "$why" ] || why="tests/setup/build-real-cluster.sh failed with exit code $rc (output above)"
  echo "########################################################################" >&2
  echo "SKIPPED: integration(real): $why" >&2
  echo "########################################################################" >&2
  [ "${CI:-}" = true ] && failed+=("real (skipped under CI)")
fi
rm -f "$build_log"

if [ ${#failed[@]} -gt 0 ]; then
  echo "integration failed: ${failed[*]}" >&2
  exit 1
fi
