from alembic import context

from nova_moves.db import api_migration
from nova_moves.db import api_models

target_metadata = api_models.API_BASE.metadata


def run_migrations_online():
    connection = context.config.attributes.get('connection')
    if connection is None:
        with api_migration.get_engine().begin() as connection:
            _run(connection)
    else:
        _run(connection)


def _run(connection):
    # Its own version table: in a one-cell deployment this tree shares
    # the database (and alembic's default table) with the cell's tree.
    context.configure(connection=connection, target_metadata=target_metadata,
                      version_table=api_migration.VERSION_TABLE,
                      render_as_batch=connection.dialect.name == 'sqlite')
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
