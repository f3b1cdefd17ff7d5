"""a server's security groups (names, JSON; NULL: Nova's 'default')

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 21:30:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('security_groups', sa.Text(),
                                   nullable=True))
