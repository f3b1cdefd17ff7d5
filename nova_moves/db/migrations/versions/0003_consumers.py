"""consumer generations, migration step retries

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24 18:10:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'consumers',
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('generation', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('uuid'))
    # How often the stuck-move sweep re-sent the current step.
    op.add_column('migrations', sa.Column('step_retries', sa.Integer(),
                                          nullable=True))
    # Existing consumers start at generation 1.
    op.execute('INSERT INTO consumers (uuid, generation) '
               'SELECT DISTINCT consumer_id, 1 FROM allocations')
