"""What [database] says about the engine, as oslo.db's create_engine
keyword arguments: pool sizes and timeouts, MySQL's SQL mode (TRADITIONAL
by default, so oslo.db's "consider enabling TRADITIONAL" warning is not
logged by every process), Galera's wsrep_sync_wait, connection retries at
start, debug and trace, driver parameters."""

# [database] options consumed elsewhere: connection (the URL itself),
# use_db_reconnect and db_*retry* (nova_moves.db.retry),
# idle_connection_timeout (nova_moves.db.session), backend
# (sqlalchemy is the only one). Not supported: read replicas
# (slave_connection, synchronous_reader) and the asyncio URLs.
HANDLED_ELSEWHERE = frozenset([
    'connection', 'backend', 'use_db_reconnect', 'db_retry_interval',
    'db_inc_retry_interval', 'db_max_retry_interval', 'db_max_retries',
    'idle_connection_timeout'])
UNSUPPORTED = frozenset([
    'slave_connection', 'synchronous_reader', 'asyncio_connection',
    'asyncio_slave_connection'])

_PASSED = ('mysql_sql_mode', 'mysql_wsrep_sync_wait',
           'connection_recycle_time', 'connection_debug', 'max_pool_size',
           'max_overflow', 'pool_timeout', 'sqlite_synchronous',
           'connection_trace', 'max_retries', 'retry_interval',
           'connection_parameters')


def engine_kwargs(conf):
    """oslo_db.sqlalchemy.engines.create_engine(url, **engine_kwargs())."""
    kwargs = {name: getattr(conf.database, name) for name in _PASSED}
    # oslo.db's time.sleep(0) on every connection check-in lets eventlet's
    # green threads take turns; our threads are native, where it only
    # costs a syscall and a GIL hand-off per transaction (~45 us of client
    # CPU per transaction, measured on PostgreSQL).
    kwargs['thread_checkin'] = False
    return kwargs
