# shellcheck shell=bash
# Prepare the VM as a PostgreSQL host before tune.yml (run as root on the VM by
# tests/vm/run_scenario.py, through SSH). Idempotent.
#   - the data disk /dev/vdb: ext4, listed in /etc/fstab (plain "defaults": direct_io adds
#     its options) and mounted at /var/lib/postgresql, the cluster 15/main moved onto it;
#   - the lab's SSH key also for the postgres user, so that a real login (sshd's PAM
#     session, pam_limits) can be measured: `ulimit -l` of a postgres login;
#   - prints shared_memory_size of the cluster with the scenario's shared_buffers
#     (postgres -C, the server stopped), the size shared_memory sizes huge pages for.
set -euo pipefail
shared_buffers="$1"
data=/var/lib/postgresql

timeout 600 systemctl is-system-running --wait >/dev/null || true
# MariaDB (in the image for tests/vm/effect_phase.py) runs only when that phase starts it.
systemctl disable --now --quiet mariadb.service 2>/dev/null || true
if ! blkid -s TYPE -o value /dev/vdb 2>/dev/null | grep -qx ext4; then
  mkfs.ext4 -q -L pgdata /dev/vdb
fi
if ! grep -q '^/dev/vdb[[:space:]]' /etc/fstab; then
  systemctl stop postgresql.service 'postgresql@*'
  mkdir -p /mnt/pgdata
  mount /dev/vdb /mnt/pgdata
  cp -a "$data/." /mnt/pgdata/
  umount /mnt/pgdata
  rmdir /mnt/pgdata
  find "$data" -mindepth 1 -delete
  printf '/dev/vdb\t%s\text4\tdefaults\t0\t2\n' "$data" >>/etc/fstab
  systemctl daemon-reload
  mount "$data"
fi
install -d -o postgres -g postgres -m 0700 "$data/.ssh"
install -o postgres -g postgres -m 0600 /root/.ssh/authorized_keys "$data/.ssh/authorized_keys"

systemctl stop postgresql@15-main.service
cd /
runuser -u postgres -- /usr/lib/postgresql/15/bin/postgres -D "$data/15/main" \
  -c config_file=/etc/postgresql/15/main/postgresql.conf -c "shared_buffers=$shared_buffers" \
  -C shared_memory_size
systemctl start postgresql@15-main.service
