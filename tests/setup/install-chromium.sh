#!/usr/bin/env bash
# Makes sure Debian's chromium is installed for the end-to-end tier and prints
# its path. Installs it with apt-get when running as root; otherwise reports
# the tier as skipped and exits 3.
set -euo pipefail
CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then echo "$CHROMIUM"; exit 0; fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "SKIPPED: e2e: $CHROMIUM is missing and installing it needs root and apt-get; run: sudo apt-get install chromium fonts-liberation" >&2
  exit 3
fi

echo "[install-chromium] installing chromium from apt" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
apt-get install -y -q --no-install-recommends chromium fonts-liberation >&2
echo "$CHROMIUM"
