from oslo_config import cfg
from oslo_db import options as db_options

DEFAULT_SQL_CONNECTION = 'sqlite:///$state_path/nova_moves.sqlite'


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


__all__ = ['cfg', 'register_opts', 'list_opts']
