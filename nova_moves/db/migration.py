"""Schema migrations with alembic, run by ``nova-moves-manage db sync``."""
import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
import sqlalchemy as sa
from sqlalchemy import pool as sa_pool

from nova_moves.db import api as db_api
from nova_moves.db import api_migration
from nova_moves.db import api_session

_SCRIPT_DIR = os.path.join(os.path.dirname(__file__), 'migrations')


def _config():
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', _SCRIPT_DIR)
    return cfg


def _upgrade(connection, revision):
    cfg = _config()
    cfg.attributes['connection'] = connection
    command.upgrade(cfg, revision)


def db_sync(revision='head'):
    engine = db_api.get_engine()
    with engine.begin() as connection:
        _upgrade(connection, revision)
    # A one-cell deployment ([api_database] connection unset) keeps the
    # cells v2 API tables in this database: one command brings both to
    # head, as before cells (doc/cells.md).
    if revision == 'head' and not api_session.separate():
        api_migration.db_sync()


def db_sync_url(url, revision='head'):
    """The cell schema on another cell's database (cell0's, by
    ``cell_v2 simple_cell_setup``)."""
    engine = sa.create_engine(url, poolclass=sa_pool.NullPool)
    try:
        with engine.begin() as connection:
            _upgrade(connection, revision)
    finally:
        engine.dispose()


def db_version():
    engine = db_api.get_engine(writer=False)
    with engine.connect() as connection:
        context = alembic_migration.MigrationContext.configure(connection)
        return context.get_current_revision()


def head_version():
    from alembic import script
    return script.ScriptDirectory.from_config(_config()).get_current_head()
