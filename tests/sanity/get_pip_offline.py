# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-in for the get-pip bootstrap script that ansible-test downloads from
ci-files.testing.ansible.com, a host these test machines cannot reach.

ansible-test runs it inside each fresh sanity virtualenv (created without pip) with
get-pip's arguments: pip's install options, the packages to install, and
--no-setuptools / --no-wheel. It bootstraps pip with the standard library's ensurepip,
then installs the requested packages (pip==N pinned by ansible-test) from the package index.
scripts/test.sh copies it to ~/.ansible/test/cache/get_pip_<version>.py.
"""

from __future__ import absolute_import, division, print_function

import subprocess
import sys

GET_PIP_ONLY = ('--no-setuptools', '--no-wheel')


def main():
    arguments = [argument for argument in sys.argv[1:] if argument not in GET_PIP_ONLY]
    subprocess.check_call([sys.executable, '-m', 'ensurepip', '--default-pip'])
    subprocess.check_call([sys.executable, '-m', 'pip', 'install'] + arguments)


if __name__ == '__main__':
    main()
