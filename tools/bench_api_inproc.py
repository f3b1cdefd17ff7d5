"""Benchmark (not a test): the API app's CPU per migrate and per
confirmResize request in this process, through the whole WSGI pipeline
(cors, the middleware, Flask, the views, SQLite), with oslo.messaging's
fake driver in place of the broker and no tornado loop: the API's own
share of a request, steadier on a busy machine than tools/bench_api.py
(which measures the real server end to end).

    PYTHONPATH=. .venv/bin/python tools/bench_api_inproc.py [--servers 150]
        [--rounds 3] [--profile]

Each round migrates every server, puts it in RESIZED with a finished
migration (written directly), confirms it and puts it back to ACTIVE;
only the requests are timed (process CPU). --profile prints cProfile's
top functions (the costs then include cProfile's own). To compare with
another commit, run it with PYTHONPATH on a worktree of that commit,
interleaved with runs on this one.
"""
import argparse
import cProfile
import os
import pstats
import sys
import time
import uuid

import sqlalchemy as sa
import testtools

from nova_moves.db import api as db_api
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}
_RESIZED = sa.text("UPDATE instances SET vm_state = 'resized', "
                   "task_state = NULL WHERE uuid = :u")
_FINISHED = sa.text(
    "INSERT INTO migrations (uuid, instance_uuid, migration_type, status, "
    "source_compute, source_node, dest_compute, dest_node, created_at, "
    "deleted, hidden, cross_cell_move) VALUES (:m, :u, 'migration', "
    "'finished', 'h1', 'h1', 'h2', 'h2', CURRENT_TIMESTAMP, 0, 0, 0)")
_ACTIVE = sa.text("UPDATE instances SET vm_state = 'active', "
                  "task_state = NULL")


class _Stack(testtools.TestCase):
    """The unit tests' fixtures (a SQLite database at head, the fake
    transport, the app's test client), outside a test run."""

    def test_nothing(self):
        pass


def _burst(client, ids, body, expect, profiler):
    start = time.process_time()
    if profiler:
        profiler.enable()
    for server_id in ids:
        response = client.post('/v2.1/servers/%s/action' % server_id,
                               json=body, headers=ADMIN)
        if response.status_code != expect:
            raise RuntimeError(response.get_data())
    if profiler:
        profiler.disable()
    return time.process_time() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--servers', type=int, default=150)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--profile', action='store_true')
    args = parser.parse_args(argv)
    import nova_moves
    print('nova_moves from %s; machine load %s' % (
        os.path.dirname(nova_moves.__file__),
        ' '.join('%.1f' % x for x in os.getloadavg())), flush=True)
    stack = _Stack('test_nothing')
    stack.setUp()
    try:
        client = nm_fixtures.app_client(stack, 'h1', 'h2')
        flavor = nm_fixtures.flavor()
        ids = [db_api.instance_create({
            'display_name': 'vm%d' % i, 'user_id': 'u',
            'project_id': 'admin', 'vm_state': 'active', 'task_state': None,
            'host': 'h1', 'node': 'h1', 'power_state': 1, 'flavor': flavor,
            'image_ref': 'img'})['uuid'] for i in range(args.servers)]
        engine = db_api.get_engine(True)
        profiler = cProfile.Profile() if args.profile else None
        migrate = confirm = 0.0
        for _round in range(args.rounds):
            migrate += _burst(client, ids, {'migrate': None}, 202, profiler)
            with engine.begin() as conn:
                for server_id in ids:
                    conn.execute(_RESIZED, {'u': server_id})
                    conn.execute(_FINISHED, {'u': server_id,
                                             'm': str(uuid.uuid4())})
            confirm += _burst(client, ids, {'confirmResize': None}, 204,
                              profiler)
            with engine.begin() as conn:
                conn.execute(_ACTIVE)
        count = args.rounds * args.servers
        print('in-process API CPU ms per request: migrate %.3f, '
              'confirmResize %.3f (%d requests each)' % (
                  1000.0 * migrate / count, 1000.0 * confirm / count, count))
        if profiler:
            stats = pstats.Stats(profiler)
            stats.sort_stats('tottime').print_stats(40)
            stats.sort_stats('cumulative').print_stats(80)
    finally:
        stack.doCleanups()
    return 0


if __name__ == '__main__':
    sys.exit(main())
