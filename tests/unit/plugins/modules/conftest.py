# -*- coding: utf-8 -*-
"""Run a module's main() with given arguments and return its JSON result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest


@pytest.fixture
def run_module(capsys):
    from ansible.module_utils.testing import patch_module_args

    def run(module, args, check_mode=False, diff=False):
        args = dict(args)
        args['_ansible_check_mode'] = check_mode
        args['_ansible_diff'] = diff
        with patch_module_args(args):
            with pytest.raises(SystemExit):
                module.main()
        out = capsys.readouterr().out
        return json.loads(out)
    return run
