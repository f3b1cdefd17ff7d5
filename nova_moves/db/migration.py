"""Schema migrations with alembic, run by ``nova-moves-manage db sync``."""
import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration

from nova_moves.db import api as db_api

_SCRIPT_DIR = os.path.join(os.path.dirname(__file__), 'migrations')


def _config():
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', _SCRIPT_DIR)
    return cfg


def db_sync(revision='head'):
    engine = db_api.get_engine()
    with engine.begin() as connection:
        cfg = _config()
        cfg.attributes['connection'] = connection
        command.upgrade(cfg, revision)


def db_version():
    engine = db_api.get_engine(writer=False)
    with engine.connect() as connection:
        context = alembic_migration.MigrationContext.configure(connection)
        return context.get_current_revision()


def head_version():
    from alembic import script
    return script.ScriptDirectory.from_config(_config()).get_current_head()
