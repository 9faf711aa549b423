#!/usr/bin/env bash
# npm test: every tier in turn — unit, integration (embedded and real cluster), the example controller
# installed from the packed library, end-to-end, and a 3-minute soak.
# A tier that cannot provision its component prints "SKIPPED: <tier>: <why>"; under CI=true that fails the run.
# The test tiers also write JSON reports to REFWATCH_TEST_REPORTS; the last lines name every test that failed.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
failed=()
REFWATCH_TEST_REPORTS=$(mktemp -d)
export REFWATCH_TEST_REPORTS
trap 'rm -rf "$REFWATCH_TEST_REPORTS"' EXIT
run() {
  local name=$1; shift
  printf '\n==> %s\n' "$name"
  if ! "$@"; then
    echo "FAILED: $name"
    failed+=("$name")
    status=1
  fi
}
run "typecheck" npx tsc --noEmit -p tsconfig.json
run "lint" npm run lint
run "unit tests" npx vitest run --project unit --reporter=default --reporter=json \
  --outputFile="$REFWATCH_TEST_REPORTS/unit.json"
run "integration tests" bash scripts/test-integration.sh
run "example controller (installs the packed library; both clusters)" bash scripts/test-example-controller.sh
run "end-to-end tests" bash scripts/test-e2e.sh
# The soak's leftovers are asserted at any length; its RSS slope only from 30 minutes (README: Soak).
run "soak (3 minutes)" npm run soak -- --minutes 3
if [ "$status" -ne 0 ]; then
  echo
  echo "npm test: some tiers failed: ${failed[*]}"
  node --import tsx scripts/failed-tests.ts "$REFWATCH_TEST_REPORTS"
else
  echo "npm test: every tier passed"
fi
exit "$status"
