from oslo_config import cfg
from oslo_db import options as db_options

DEFAULT_SQL_CONNECTION = 'sqlite:///$state_path/nova_moves.sqlite'
# oslo.db's 5 is below a conductor's concurrent handlers under load: a
# connection opened past the pool is closed when given back, so under
# load nearly every transaction started a PostgreSQL backend (fork and
# authentication) and ended it. 20 keeps them open (pool + the
# unchanged max_overflow still bounds the total).
MAX_POOL_SIZE = 20


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
