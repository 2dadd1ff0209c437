#!/usr/bin/env bash
# The drift check (playbooks/drift.yml: one host_state call per host, no fact gathering)
# against the floor (gather_facts + one ping), side by side in one run, at 1, 10 and 50
# hosts: aliases of this machine on the local connection, with the main job's profile
# (inventory/this_host.yml: kernel_params, shared_memory, block_queue). Check mode only:
# nothing on the machine changes. Prints wall and CPU seconds (ansible-playbook and all
# its children, from /usr/bin/time) and the ratios. Not a test: the machine is shared.
#   bash bench/floor_bench.sh [HOSTS...]      (default: 1 10 50)
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
bash "$DBHOST_ROOT/scripts/venv.sh" >/dev/null
command -v /usr/bin/time >/dev/null || apt-get install -y -qq time >/dev/null
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ANSIBLE_LOCALHOST_WARNING=false
printf -- '- hosts: all\n  gather_facts: true\n  tasks:\n    - ansible.builtin.ping:\n' >"$work/floor.yml"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
[ "$#" -gt 0 ] || set -- 1 10 50
echo "| hosts | play | wall s | CPU s | wall / floor | CPU / floor |"
echo "|---|---|---|---|---|---|"
for n in "$@"; do
  "$DBHOST_VENV/bin/python" - "$n" "$DBHOST_ROOT/inventory/this_host.yml" "$work/inv.yml" "$DBHOST_VENV/bin/python" <<'PY'
import sys, yaml
count, source, target, python = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
profile = yaml.safe_load(open(source))['all']['vars']
hosts = dict(('h%03d' % i, {'ansible_connection': 'local', 'ansible_python_interpreter': python}) for i in range(count))
yaml.safe_dump({'all': {'hosts': hosts, 'vars': profile}}, open(target, 'w'))
PY
  declare -A wall=() cpu=()
  for play in floor drift; do
    file="$work/floor.yml"; [ "$play" = drift ] && file="$DBHOST_ROOT/playbooks/drift.yml"
    /usr/bin/time -f '%e %U %S' -o "$work/time" ansible-playbook -i "$work/inv.yml" "$file" \
      -e dbhost_drift_report_only=true >/dev/null
    read -r w u s <"$work/time"
    wall[$play]="$w"; cpu[$play]="$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')"
  done
  for play in floor drift; do
    echo "| $n | $play | ${wall[$play]} | ${cpu[$play]} | $(ratio "${wall[$play]}" "${wall[floor]}") | $(ratio "${cpu[$play]}" "${cpu[floor]}") |"
  done
done
