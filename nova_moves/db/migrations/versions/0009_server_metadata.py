"""server metadata, access IPs, description and disk config; quota classes

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 18:20:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('access_ip_v4', sa.String(length=39),
                                   nullable=True))
        batch.add_column(sa.Column('access_ip_v6', sa.String(length=39),
                                   nullable=True))
        batch.add_column(sa.Column('description', sa.Text(), nullable=True))
        batch.add_column(sa.Column('auto_disk_config', sa.Boolean(),
                                   nullable=False,
                                   server_default=sa.false()))
    op.create_table(
        'instance_metadata',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('value', sa.String(length=255), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('instance_uuid', 'key',
                            name='uniq_instance_metadata0uuid0key'))
    op.create_table(
        'quota_classes',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('class_name', sa.String(length=255), nullable=False),
        sa.Column('resource', sa.String(length=255), nullable=False),
        sa.Column('hard_limit', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('class_name', 'resource',
                            name='uniq_quota_classes0class0resource'))
