# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the collection's resource_limits plan (the code behind dbhost.tuning.resource_limits) in
check mode inside a test container, and print its result as JSON.

    limits_plan.py COLLECTIONS_DIR BASE64_JSON

COLLECTIONS_DIR holds ansible_collections/dbhost/tuning/plugins (copied in by the verifier);
BASE64_JSON decodes to the module's options (limits, service, service_limits, comparison...).
Commands (systemctl show) run as the module runs them: argument lists, no shell.
"""

import base64
import collections
import json
import subprocess
import sys


def runner(argv):
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    return done.returncode, done.stdout, done.stderr


# The module's defaults of the options the verifier leaves out (state/registry.py's spec of resource_limits).
# The container has no Ansible, which registry.py needs for its checks, so the plan is made here as
# registry.plan makes it: an options object and a context (check mode through its gate, the runner).
DEFAULTS = dict(limits=[], limits_file='/etc/security/limits.d/90-dbhost-tuning.conf', service=None, service_limits=None,
                dropin_name='90-dbhost-tuning.conf', projects=[],
                comparison='exact', root='/', backup=False, fail_on_shadowed=True, fail_on_drift=False)


class Context(object):
    def __init__(self, gate):
        self.gate, self.runner, self.db_runner, self.system_name = gate, runner, runner, None
        self.check_mode = gate.check_mode
        self.bin_path = lambda name, required=False: None


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    sys.path.insert(0, argv[0])
    from ansible_collections.dbhost.tuning.plugins.module_utils.engine.gate import Gate
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.resource_limits import ResourceLimits
    given = json.loads(base64.b64decode(argv[1]).decode('utf-8'))
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        sys.exit('not an option of resource_limits: %s' % ', '.join(unknown))
    options = collections.namedtuple('resource_limits_options', sorted(DEFAULTS))(**dict(DEFAULTS, **given))
    plan = ResourceLimits(options, Context(Gate(True)))
    print(json.dumps(plan.run().as_dict()))


if __name__ == '__main__':
    main(sys.argv[1:])
