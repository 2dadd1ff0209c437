#!/usr/bin/env bash
# Run every test of the collection; installs what it needs first (as root on
# Debian 12: podman, base images, .venv). Stages, in order:
#   unit       pytest tests/unit tests/integration (the kill test starts the
#              modules as processes on fake trees; no container)
#   sanity     scripts/check_layout.py, scripts/gen_docs.py --check (generated docs
#              up to date), then ansible-test sanity (Python 3.11) on a
#              copy of the git-tracked files
#   lint       ansible-lint --profile production on roles/ and playbooks/
#   molecule   molecule test -s NAME for every molecule/*/molecule.yml
#   vm         the reboot scenario on a two-node NUMA VM (qemu TCG): scripts/vmlab.py
#              run-scenario builds the Debian 12 image (cached in .cache/vmlab), boots
#              it, tunes, reboots and checks from the real system (docs/vmlab.md);
#              hard timeout DBHOST_VM_TIMEOUT seconds (default 2700: the image build and one boot
#              for the reboot, TuneD and effect phases took 1980 s at a load average of 7-10)
# The unit stage first installs postgresql and mariadb-server (scripts/
# install-db-servers.sh) for the tests that start real servers.
# Usage: scripts/test.sh [STAGE...]     (default: all stages)
#   STAGE is unit, sanity, lint, molecule, molecule:NAME (one scenario) or vm;
#   DBHOST_TEST_STAGES="unit lint" does the same as arguments.
# Prints one line per stage and ends with "N passed, N failed"; exits
# non-zero when any stage (set-up included) failed.
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$DBHOST_ROOT" || exit 1

if [ "$#" -eq 0 ] && [ -n "${DBHOST_TEST_STAGES:-}" ]; then
  # shellcheck disable=SC2086  # a space-separated list on purpose
  set -- $DBHOST_TEST_STAGES
fi
[ "$#" -gt 0 ] || set -- unit sanity lint molecule vm
case " $* " in *" -h "* | *" --help "*) sed -n '2,20p' "${BASH_SOURCE[0]}"; exit 0 ;; esac

selected=()
for stage in "$@"; do
  case "$stage" in
    unit | sanity | lint | vm) selected+=("$stage") ;;
    molecule)
      while read -r scenario; do selected+=("molecule:$scenario"); done < <(molecule_scenarios)
      ;;
    molecule:?*)
      [ -f "molecule/${stage#molecule:}/molecule.yml" ] || die "no scenario molecule/${stage#molecule:}/molecule.yml"
      selected+=("$stage")
      ;;
    *) die "unknown stage: $stage (unit, sanity, lint, molecule, molecule:NAME, vm)" ;;
  esac
done

summary=()
passed=0
failed=0

# run_stage NAME FUNCTION: runs FUNCTION in a subshell with `set -e`, records the outcome.
run_stage() {
  local name="$1" start rc line
  shift
  log "===== $name"
  start=$(date +%s)
  (set -e; "$@")
  rc=$?
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    line="PASS  $name ($(($(date +%s) - start)) s)"
  else
    failed=$((failed + 1))
    line="FAIL  $name ($(($(date +%s) - start)) s, exit $rc)"
  fi
  summary+=("$line")
  log "===== $line"
  return "$rc"
}

skip_stage() {
  failed=$((failed + 1))
  summary+=("FAIL  $1 (not run: $2)")
  log "===== FAIL  $1 (not run: $2)"
}

stage_setup_venv() {
  bash scripts/venv.sh --test
}

stage_setup_containers() {
  bash scripts/install-test-deps.sh
}

# postgresql and mariadb-server for the real-server unit tests (their services
# are neither started nor enabled; the tests start throwaway servers).
stage_setup_db_servers() {
  bash scripts/install-db-servers.sh
}

# chromium for the drift report's HTML test (drift.html opened in a real headless browser).
stage_setup_browser() {
  bash scripts/install-browser.sh
}

stage_unit() {
  [ -d tests/unit ] || { log "no tests/unit folder"; return 1; }
  [ -d tests/integration ] || { log "no tests/integration folder"; return 1; }
  # One run: pytest takes the first folder's pytest.ini (the import mode) for both.
  python -m pytest tests/unit tests/integration
}

# ansible-test puts pip into each sanity virtual environment with a get-pip
# script it downloads from ci-files.testing.ansible.com, which may be
# unreachable (only PyPI is needed otherwise). When it cannot be downloaded,
# cache a stand-in that bootstraps pip from the interpreter's own ensurepip and
# upgrades it to the pinned version from a wheel fetched here beforehand (the
# stand-in runs with a scrubbed environment, where the old bundled pip may not
# trust this machine's CA).
seed_pip_bootstrap() {
  local site version cache wheels
  site="$(python -c 'import ansible_test, os; print(os.path.dirname(ansible_test.__file__))')"
  version="$(sed -n "s/^ *pip='\([0-9.]*\)',\{0,1\}$/\1/p" "$site/_internal/python_requirements.py" | head -n 1)"
  [ -n "$version" ] || { log "pip version of ansible-test not found; not seeding"; return 0; }
  cache="$HOME/.ansible/test/cache/get_pip_${version//./_}.py"
  wheels="$HOME/.ansible/test/cache/pip-$version-wheel"
  [ -s "$cache" ] && return 0
  mkdir -p "$(dirname "$cache")"
  if python - "https://ci-files.testing.ansible.com/ansible-test/get-pip-$version.py" "$cache" <<'PY' 2>/dev/null; then
import shutil, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=15) as response, open(sys.argv[2] + '.tmp', 'wb') as out:
    shutil.copyfileobj(response, out)
shutil.move(sys.argv[2] + '.tmp', sys.argv[2])
PY
    log "cached ansible-test's pip $version bootstrap script"
    return 0
  fi
  rm -f "$cache.tmp"
  log "ci-files.testing.ansible.com unreachable: caching an ensurepip-based pip $version bootstrap for ansible-test"
  quiet_pip python -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheels" "pip==$version"
  cat >"$cache" <<PY
"""Stand-in for get-pip.py (ci-files.testing.ansible.com unreachable): bootstrap
pip from this interpreter's ensurepip, then install what was asked from $wheels."""
import ensurepip
import subprocess
import sys

ensurepip.bootstrap(upgrade=True)
arguments = [arg for arg in sys.argv[1:] if arg not in ('--no-setuptools', '--no-wheel')]
sys.exit(subprocess.call([sys.executable, '-m', 'pip', 'install', '--no-index', '--find-links', '$wheels'] + arguments))
PY
}

stage_sanity() {
  local work copy
  # Outside the checkout: inside it, ansible-test would ask git which files to
  # test and git ignores .cache. ansible-test must run from
  # .../ansible_collections/NS/NAME; only what git tracks is copied (working-tree
  # content), so that .venv/.cache and stray files stay out.
  work="$(mktemp -d "${TMPDIR:-/tmp}/dbhost-sanity.XXXXXX")"
  # shellcheck disable=SC2064  # expand now: $work is local
  trap "rm -rf '$work'" EXIT
  copy="$work/ansible_collections/dbhost/tuning"
  mkdir -p "$copy"
  git ls-files -z | while IFS= read -r -d '' path; do
    [ -e "$path" ] || [ -L "$path" ] || continue
    mkdir -p "$copy/$(dirname "$path")"
    cp -P "$path" "$copy/$path"
  done
  if [ -s tests/sanity/ignore-2.19.txt ]; then
    log "tests/sanity/ignore-2.19.txt must stay empty"
    return 1
  fi
  # The layers of module_utils, what each folder of plugins/ may import, no import
  # cycle, no file over 500 lines and no function over 80 (docs/DEVELOPING.md,
  # "The layers").
  python3 scripts/check_layout.py
  # The generated documentation (modules' options, RETURN and fragment lists, roles'
  # argument_specs defaults and README tables) up to date with its sources: exits 1
  # naming each file out of date (docs/DEVELOPING.md, "Generated documentation").
  python3 scripts/gen_docs.py --check
  seed_pip_bootstrap
  cd "$copy"
  # --venv: the sanity tools get their own virtual environments with the exact
  # versions ansible-test pins, instead of mixing them into .venv.
  ansible-test sanity --venv --python 3.11 --requirements --color no
}

stage_lint() {
  local targets=() dir
  for dir in roles playbooks; do [ -d "$dir" ] && targets+=("$dir/"); done
  [ "${#targets[@]}" -gt 0 ] || { log "no roles/ or playbooks/ to lint"; return 1; }
  # --offline: Galaxy may be unreachable; the collections come from .cache/collections.
  # ANSIBLE_HOME in the cache: ansible-lint otherwise resolves dbhost.tuning from a copy
  # of the collection installed in ~/.ansible/collections by any earlier run, possibly of
  # another checkout, which may lack a module this one has.
  ANSIBLE_HOME="$DBHOST_CACHE/lint-home" ansible-lint --offline --profile production "${targets[@]}"
}

stage_molecule() {
  molecule test -s "$1"
}

stage_setup_vm() {
  bash scripts/install-test-deps.sh --vm
}

# One VM, named ci: a qemu left by an interrupted run of the same name is stopped first.
# timeout signals the whole group; vmlab.py stops its VM on SIGTERM (qemu runs in a
# session of its own, killed by its pid), and SIGKILL follows a minute later.
stage_vm() {
  timeout --kill-after=60 "${DBHOST_VM_TIMEOUT:-2700}" python3 scripts/vmlab.py run-scenario --name ci
}

# The host-global sysctls the scenarios may touch: remember the host's values
# before any container starts (systemd booting in a privileged container
# already raises fs.file-max) and put them back after every scenario.
declare -A host_sysctls=()
save_host_sysctls() {
  local key
  while read -r key; do
    host_sysctls[$key]="$(sysctl -n "$key" 2>/dev/null)" || true
  done < <(host_global_sysctls)
}
restore_host_sysctls() {
  local key now
  for key in "${!host_sysctls[@]}"; do
    [ -n "${host_sysctls[$key]}" ] || continue
    now="$(sysctl -n "$key" 2>/dev/null)" || continue
    if [ "$now" != "${host_sysctls[$key]}" ]; then
      log "restoring host $key: $now -> ${host_sysctls[$key]}"
      sysctl -q -w "$key=${host_sysctls[$key]}" || log "could not restore host $key"
    fi
  done
}

venv_ok=1
containers_ok=1
run_stage setup-venv stage_setup_venv || venv_ok=0
case " ${selected[*]} " in
  *" unit "*)
    run_stage setup-db-servers stage_setup_db_servers || true
    # Installed: the real-server tests must run, and fail instead of skipping.
    if [ "$(id -u)" -eq 0 ] && bash scripts/install-db-servers.sh --installed; then
      export DBHOST_REQUIRE_DB_SERVERS=1
    fi
    run_stage setup-browser stage_setup_browser || true
    if [ "$(id -u)" -eq 0 ] && bash scripts/install-browser.sh --installed; then
      export DBHOST_REQUIRE_BROWSER=1
    fi
    ;;
esac
case " ${selected[*]} " in
  *" molecule:"*) run_stage setup-containers stage_setup_containers || containers_ok=0 ;;
esac
vm_ok=1
case " ${selected[*]} " in
  *" vm "*) run_stage setup-vm stage_setup_vm || vm_ok=0 ;;
esac

for stage in "${selected[@]}"; do
  if [ "$venv_ok" = 0 ]; then
    skip_stage "$stage" "setup-venv failed"
    continue
  fi
  case "$stage" in
    unit) run_stage unit stage_unit ;;
    sanity) run_stage sanity stage_sanity ;;
    lint) run_stage lint stage_lint ;;
    vm)
      if [ "$vm_ok" = 0 ]; then
        skip_stage vm "setup-vm failed"
        continue
      fi
      run_stage vm stage_vm
      ;;
    molecule:*)
      if [ "$containers_ok" = 0 ]; then
        skip_stage "$stage" "setup-containers failed"
        continue
      fi
      [ "${#host_sysctls[@]}" -gt 0 ] || save_host_sysctls
      run_stage "$stage" stage_molecule "${stage#molecule:}"
      restore_host_sysctls
      ;;
  esac
done

echo
echo "Summary:"
printf '  %s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
