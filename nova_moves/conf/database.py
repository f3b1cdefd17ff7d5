from oslo_config import cfg
from oslo_db import options as db_options

DEFAULT_SQL_CONNECTION = 'sqlite:///$state_path/nova_moves.sqlite'


def register_opts(conf):
    db_options.set_defaults(conf, connection=DEFAULT_SQL_CONNECTION)


def list_opts():
    return {'database': [o for o in db_options.database_opts]}


def set_defaults(conf):
    db_options.set_defaults(conf, connection=DEFAULT_SQL_CONNECTION)


__all__ = ['cfg', 'register_opts', 'list_opts']
