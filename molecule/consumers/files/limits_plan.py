# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the collection's resource_limits plan (the code behind dbhost.tuning.resource_limits) in
check mode inside a test container, and print its result as JSON.

    limits_plan.py COLLECTIONS_DIR BASE64_JSON

COLLECTIONS_DIR holds ansible_collections/dbhost/tuning/plugins (copied in by the verifier);
BASE64_JSON decodes to the plan's options (limits_list, service, service_limits, comparison...).
Commands (systemctl show) run as the module runs them: argument lists, no shell.
"""

import base64
import json
import subprocess
import sys


def runner(argv):
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    return done.returncode, done.stdout, done.stderr


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    sys.path.insert(0, argv[0])
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.resource_limits import ResourceLimits
    options = json.loads(base64.b64decode(argv[1]).decode('utf-8'))
    plan = ResourceLimits(check_mode=True, runner=runner, **options)
    print(json.dumps(plan.run().as_dict()))


if __name__ == '__main__':
    main(sys.argv[1:])
