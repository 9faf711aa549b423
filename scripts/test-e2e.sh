#!/usr/bin/env bash
# Runs the Playwright suite in Debian's chromium (not a browser Playwright
# downloads). Extra arguments go to `playwright test`.
set -uo pipefail
cd "$(dirname "$0")/.."

chromium=$(bash tests/setup/install-chromium.sh)
rc=$?
if [ $rc -ne 0 ]; then
  # install-chromium.sh has printed "SKIPPED: e2e: ..." when it exits 3.
  if [ $rc -eq 3 ] && [ "${CI:-}" != true ]; then exit 0; fi
  exit 1
fi

# playwright.config.ts launches this executable.
export REFWATCH_CHROMIUM="$chromium"
exec npx playwright test "$@"
