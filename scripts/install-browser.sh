#!/usr/bin/env bash
# Install Debian's chromium, the headless browser the drift report's HTML test opens drift.html in
# (tests/unit/plugins/callback/test_drift_report_html.py), as root on Debian.
# Not root or no apt: says so and installs nothing (the browser test then skips).
# Usage: scripts/install-browser.sh [--installed]
#   --installed  only exit 0 when chromium is installed, 1 otherwise
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

installed() {
  dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q 'install ok installed'
}

case "${1:-}" in
  --installed) installed; exit ;;
  -h | --help) sed -n '2,6p' "${BASH_SOURCE[0]}"; exit 0 ;;
  "") ;;
  *) die "unknown argument: $1" ;;
esac

if installed; then
  log "chromium already installed"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  log "not root or no apt-get: not installing chromium (the HTML report's browser test will skip)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
log "installing chromium"
apt-get update -q
# With recommends, as the browser test was proven with (fonts, the headless shell it needs).
apt-get install -y -q chromium >/dev/null
