"""when each phase of a migration began

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25 12:15:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    # JSON list of [status, time] in the order the statuses were entered
    # (db/phases.py); NULL for migrations from before this revision.
    op.add_column('migrations', sa.Column('phases', sa.Text(),
                                          nullable=True))
