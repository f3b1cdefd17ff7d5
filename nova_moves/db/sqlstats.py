"""SQL statements and transactions counted inside the processes, for the
cost benchmark (tools/bench_cost.py).

Off unless the environment has NOVA_MOVES_SQL_STATS=1 and the process
has ``[DEFAULT] rpc_stats_dir``: then every engine counts its statements
by verb (kind 'sql': SELECT, INSERT, UPDATE, DELETE, BEGIN...) and its
transactions (kind 'sqltx': commit, rollback) in the process's rpcstats
file, next to its RPC counts. An environment variable and not an option
because it is a measuring aid, not something to deploy with; when off,
no listener is attached, so it costs nothing. NOVA_MOVES_SQL_STATS=trace
also appends every statement (one line) to <rpc_stats_dir>/<name>.sql,
to see which code a count comes from.
"""
import os
import time

import sqlalchemy as sa

from nova_moves import conf
from nova_moves import rpcstats

ENV = 'NOVA_MOVES_SQL_STATS'


def enabled():
    return os.environ.get(ENV, '') not in ('', '0')


def attach(engine):
    if not enabled():
        return
    recorder = rpcstats.get_recorder(conf.CONF.rpc_stats_dir,
                                     conf.CONF.host)
    if recorder is None:
        return

    trace = None
    if os.environ.get(ENV) == 'trace':
        trace = open(recorder.path[:-len('.json')] + '.sql', 'a',
                     buffering=1)

    @sa.event.listens_for(engine, 'before_cursor_execute')
    def _before(conn, cursor, statement, parameters, context, many):
        conn.info['sqlstats_start'] = time.monotonic()

    @sa.event.listens_for(engine, 'after_cursor_execute')
    def _after(conn, cursor, statement, parameters, context, many):
        start = conn.info.pop('sqlstats_start', None)
        verb = statement.lstrip().split(None, 1)[0].upper() \
            if statement.strip() else '?'
        recorder.record('sql', verb, time.monotonic() - start
                        if start else 0.0)
        if trace is not None:
            trace.write(' '.join(statement.split()) + '\n')

    @sa.event.listens_for(engine, 'commit')
    def _commit(conn):
        recorder.record('sqltx', 'commit', 0.0)
        if trace is not None:
            trace.write('COMMIT\n')

    @sa.event.listens_for(engine, 'rollback')
    def _rollback(conn):
        recorder.record('sqltx', 'rollback', 0.0)
