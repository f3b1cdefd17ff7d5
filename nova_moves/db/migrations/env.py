from alembic import context

from nova_moves.db import api as db_api
from nova_moves.db import models

target_metadata = models.BASE.metadata


def run_migrations_online():
    connection = context.config.attributes.get('connection')
    if connection is None:
        with db_api.get_engine().begin() as connection:
            _run(connection)
    else:
        _run(connection)


def _run(connection):
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=connection.dialect.name == 'sqlite')
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
