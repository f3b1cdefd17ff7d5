"""Nova's task_log (the instance usage audit, os-instance_usage_audit_log)
and instance_system_metadata (the server password, os-server-password)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29 06:30:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def _stamps():
    return [sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('updated_at', sa.DateTime(), nullable=True)]


def upgrade():
    op.create_table(
        'task_log',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('task_name', sa.String(length=255), nullable=False),
        sa.Column('state', sa.String(length=255), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('period_beginning', sa.DateTime(), nullable=False),
        sa.Column('period_ending', sa.DateTime(), nullable=False),
        sa.Column('message', sa.String(length=255), nullable=False),
        sa.Column('task_items', sa.Integer(), nullable=True),
        sa.Column('errors', sa.Integer(), nullable=True),
        *_stamps(),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint(
            'task_name', 'host', 'period_beginning', 'period_ending',
            name='uniq_task_log0task_name0host0period_beginning0'
                 'period_ending'))
    for column in ('host', 'period_beginning', 'period_ending'):
        op.create_index('ix_task_log_%s' % column, 'task_log', [column])
    op.create_table(
        'instance_system_metadata',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('value', sa.String(length=255), nullable=True),
        *_stamps(),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint(
            'instance_uuid', 'key',
            name='uniq_instance_system_metadata0instance_uuid0key'))
    op.create_index('ix_instance_system_metadata_instance_uuid',
                    'instance_system_metadata', ['instance_uuid'])


def downgrade():
    op.drop_table('instance_system_metadata')
    op.drop_table('task_log')
