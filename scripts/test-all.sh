#!/usr/bin/env bash
# npm test: every tier in turn — unit, integration (embedded and real cluster), the example controller
# installed from the packed library, end-to-end, and a 3-minute soak.
# A tier that cannot provision its component prints "SKIPPED: <tier>: <why>"; under CI=true that fails the run.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
run() {
  local name=$1; shift
  printf '\n==> %s\n' "$name"
  if ! "$@"; then
    echo "FAILED: $name"
    status=1
  fi
}
run "typecheck" npx tsc --noEmit -p tsconfig.json
run "lint" npm run lint
run "unit tests" npx vitest run --project unit
run "integration tests" bash scripts/test-integration.sh
run "example controller (installs the packed library; both clusters)" bash scripts/test-example-controller.sh
run "end-to-end tests" bash scripts/test-e2e.sh
# The soak's leftovers are asserted at any length; its RSS slope only from 30 minutes (README: Soak).
run "soak (3 minutes)" npm run soak -- --minutes 3
if [ "$status" -ne 0 ]; then echo "npm test: some tiers failed"; else echo "npm test: every tier passed"; fi
exit "$status"
