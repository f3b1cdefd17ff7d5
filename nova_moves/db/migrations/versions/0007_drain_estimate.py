"""a host drain's estimate (its plan's ETA when it was created)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26 19:00:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('host_drains', sa.Column('estimate', sa.Text(),
                                           nullable=True))
