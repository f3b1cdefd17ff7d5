"""The API database's schema (cells v2 mappings): its own alembic tree
(db/api_migrations) and version table, run by ``nova-moves-manage api_db
sync`` and, in a one-cell deployment, by ``db sync`` too."""
import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script

from nova_moves.db import api_session

# Not alembic's default: with [api_database] connection unset this tree
# shares the database with the cell's tree (db/migrations), which has it.
VERSION_TABLE = 'alembic_version_api'
_SCRIPT_DIR = os.path.join(os.path.dirname(__file__), 'api_migrations')

get_engine = api_session.get_engine


def _config():
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', _SCRIPT_DIR)
    return cfg


def upgrade(connection, revision='head'):
    """The API schema brought to ``revision`` on ``connection``."""
    cfg = _config()
    cfg.attributes['connection'] = connection
    command.upgrade(cfg, revision)


def db_sync(revision='head'):
    with get_engine().begin() as connection:
        upgrade(connection, revision)


def db_version(connection=None):
    if connection is None:
        with get_engine(writer=False).connect() as connection:
            return db_version(connection)
    context = alembic_migration.MigrationContext.configure(
        connection, opts={'version_table': VERSION_TABLE})
    return context.get_current_revision()


def head_version():
    return script.ScriptDirectory.from_config(_config()).get_current_head()
