#!/usr/bin/env bash
# Install the database servers that the real-server unit tests start throwaway
# instances of (tests/unit/plugins/modules/test_db_parameter_postgresql_server.py
# and test_db_parameter_mysql_server.py), as root on Debian:
#   postgresql      initdb, pg_ctl and psql under /usr/lib/postgresql/*/bin, user postgres
#   mariadb-server  mariadbd, mariadb-install-db, the mariadb client, user mysql
# The packages' own services are not left running or enabled: the tests make
# their own data directories, sockets and ports. No main PostgreSQL cluster is
# created (postgresql-common's create_main_cluster = false during the install).
# Packages that were already installed, and their services, are left as they are.
# Not root or no apt: says so and installs nothing (the tests then skip).
# Usage: scripts/install-db-servers.sh [--installed]
#   --installed  only exit 0 when both are installed, 1 otherwise
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

packages=(postgresql mariadb-server)
services=(postgresql.service mariadb.service)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

all_installed() {
  local pkg
  for pkg in "${packages[@]}"; do
    installed "$pkg" || return 1
  done
}

case "${1:-}" in
  --installed) all_installed; exit ;;
  -h | --help) sed -n '2,14p' "${BASH_SOURCE[0]}"; exit 0 ;;
  "") ;;
  *) die "unknown argument: $1" ;;
esac

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  log "not root or no apt-get: not installing ${packages[*]} (the real-server unit tests will skip)"
  exit 0
fi

missing=()
for pkg in "${packages[@]}"; do
  installed "$pkg" || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
  log "packages already installed: ${packages[*]}"
  exit 0
fi

# While installing: no service is started (policy-rc.d, which invoke-rc.d and
# deb-systemd-invoke ask) and postgresql-common makes no main cluster. Both are
# removed afterwards; an existing policy-rc.d is kept and obeyed.
policy=/usr/sbin/policy-rc.d
no_cluster=/etc/postgresql-common/createcluster.d/00-dbhost-no-main-cluster.conf
cleanup=()
finish() {
  local path
  for path in "${cleanup[@]}"; do rm -f "$path"; done
}
trap finish EXIT
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# scripts/install-db-servers.sh: start no service while installing\nexit 101\n' >"$policy"
  chmod 0755 "$policy"
  cleanup+=("$policy")
fi
if [ ! -e "$no_cluster" ]; then
  mkdir -p "$(dirname "$no_cluster")"
  printf '# scripts/install-db-servers.sh: no main cluster while installing\ncreate_main_cluster = false\n' >"$no_cluster"
  cleanup+=("$no_cluster")
fi

log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null

# The packages enable their services; on a host booted with systemd, stop (in case)
# and disable those of the packages installed now.
if [ -d /run/systemd/system ]; then
  for index in "${!packages[@]}"; do
    case " ${missing[*]} " in
      *" ${packages[$index]} "*)
        systemctl disable --now --quiet "${services[$index]}" 2>/dev/null || true
        log "${services[$index]}: $(systemctl is-enabled "${services[$index]}" 2>/dev/null || true)," \
          "$(systemctl is-active "${services[$index]}" 2>/dev/null || true)"
        ;;
    esac
  done
fi
all_installed || die "${packages[*]} not all installed"
