from oslo_config import cfg
from oslo_db import options as db_options

DEFAULT_SQL_CONNECTION = 'sqlite:///$state_path/nova_moves.sqlite'
# A connection opened past the pool is closed when given back, so a
# process busier than its pool starts and ends a PostgreSQL/MySQL server
# backend (fork, authentication, cold catalog caches) for nearly every
# transaction. A conductor or scheduler runs up to [DEFAULT]
# executor_thread_pool_size (64) handlers at once and reaches it under a
# burst of moves: the pool keeps that many. It only bounds what is kept:
# a process opens no more connections than it runs transactions at once.
MAX_POOL_SIZE = 64


def register_opts(conf):
    set_defaults(conf)


def list_opts():
    return {'database': [o for o in db_options.database_opts]}


def set_defaults(conf):
    db_options.set_defaults(conf, connection=DEFAULT_SQL_CONNECTION)
    # Services wait for a restarted or failed-over database with oslo.db's
    # bounded backoff instead of failing the moves they are running
    # (nova_moves.db.retry); the API answers 503 instead of waiting.
    conf.set_default('use_db_reconnect', True, group='database')
    conf.set_default('max_pool_size', MAX_POOL_SIZE, group='database')


__all__ = ['cfg', 'register_opts', 'list_opts']
