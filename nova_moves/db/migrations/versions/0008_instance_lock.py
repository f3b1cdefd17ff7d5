"""the server lock (lock/unlock, 2.73 locked_reason)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 18:10:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('instances', sa.Column('locked_by', sa.String(length=16),
                                         nullable=True))
    op.add_column('instances', sa.Column('locked_reason',
                                         sa.String(length=255),
                                         nullable=True))
