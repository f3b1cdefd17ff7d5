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

# Ours, next to oslo.db's in [database].
opts = [
    cfg.IntOpt('idle_connection_timeout', default=60, min=0,
               help='Seconds a pooled PostgreSQL/MySQL connection may sit '
                    'idle before the server closes it (PostgreSQL '
                    'idle_session_timeout, MySQL wait_timeout, set on '
                    'each new connection). A process keeps up to '
                    'max_pool_size connections after a burst; without '
                    'this they hold the server\'s max_connections and a '
                    'process that lost its own (an idle API worker) '
                    'cannot open one. The pool pings a connection before '
                    'use and reopens a closed one, so nothing fails. '
                    '0 leaves the server\'s setting.'),
]


def register_opts(conf):
    set_defaults(conf)
    conf.register_opts(opts, group='database')


def list_opts():
    return {'database': [o for o in db_options.database_opts] + opts}


def set_defaults(conf):
    db_options.set_defaults(conf, connection=DEFAULT_SQL_CONNECTION)
    # Services wait for a restarted or failed-over database with oslo.db's
    # bounded backoff instead of failing the moves they are running
    # (nova_moves.db.retry); the API answers 503 instead of waiting.
    conf.set_default('use_db_reconnect', True, group='database')
    conf.set_default('max_pool_size', MAX_POOL_SIZE, group='database')


__all__ = ['cfg', 'register_opts', 'list_opts']
