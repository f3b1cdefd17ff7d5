"""Cross-cell resize (doc/cells.md "Cross-cell resize"): Nova's
instances.hidden (the copy of a server in the cell it is not mapped to,
kept out of lists) and migrations.cross_cell_move (the move's rows are
in two cells: the sweep and the computes' restart recovery leave it to
the conductors' cross-cell flow).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29 17:00:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('hidden', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
    with op.batch_alter_table('migrations') as batch:
        batch.add_column(sa.Column('cross_cell_move', sa.Boolean(),
                                   nullable=False,
                                   server_default=sa.false()))


def downgrade():
    with op.batch_alter_table('migrations') as batch:
        batch.drop_column('cross_cell_move')
    with op.batch_alter_table('instances') as batch:
        batch.drop_column('hidden')
