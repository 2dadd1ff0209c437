# -*- coding: utf-8 -*-
"""What a real PostgreSQL cluster allocates, asked of its own server: postgres -C while it is stopped,
SHOW through its socket while it runs; both the same count (the throwaway cluster of the db_effect
server test; skipped without PostgreSQL's server, a failure once scripts/test.sh installed it)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.state import engine_memory
from ansible_collections.dbhost.tuning.tests.unit.helpers import run
from ansible_collections.dbhost.tuning.tests.unit.plugins.module_utils.plans.db_effect.test_plan_postgresql_server import (  # noqa: F401, E501 (the fixture)
    cluster)

__all__ = ['cluster']   # the fixture, taken from the db_effect server test


def test_the_servers_own_count_stopped_and_running(cluster):
    asked = cluster.huge_pages_needed()
    stopped = engine_memory.read('postgresql', '/', cluster.data, run)
    assert stopped == {'pages': asked, 'source': 'engine: postgres -C shared_memory_size_in_huge_pages -D %s = %d '
                                                 'huge pages' % (cluster.data, asked)}
    cluster.start()
    running = engine_memory.read('postgresql', '/', cluster.data, run)
    assert running['pages'] == asked
    assert running['source'] == 'engine: SHOW shared_memory_size_in_huge_pages (%s runs) = %d huge pages' % (
        cluster.data, asked)
    assert os.path.isfile(os.path.join(cluster.data, 'postmaster.pid'))
