"""host drains, the move queue of the concurrency limits

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 12:15:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'host_drains',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('mode', sa.String(length=16), nullable=False),
        sa.Column('target_hosts', sa.Text(), nullable=True),
        sa.Column('force_down_if_dead', sa.Boolean(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('owner', sa.String(length=255), nullable=True),
        sa.Column('heartbeat_at', sa.DateTime(), nullable=True),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('started_at', sa.DateTime(), nullable=True),
        sa.Column('finished_at', sa.DateTime(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid'))
    op.create_index('host_drains_status_idx', 'host_drains', ['status'])
    op.create_table(
        'host_drain_servers',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('drain_id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('state', sa.String(length=16), nullable=False),
        sa.Column('action', sa.String(length=16), nullable=True),
        sa.Column('migration_uuid', sa.String(length=36), nullable=True),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['drain_id'], ['host_drains.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint(
            'drain_id', 'instance_uuid',
            name='uniq_host_drain_servers0drain_id0instance_uuid'))
    op.create_table(
        'move_queue',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('migration_uuid', sa.String(length=36), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('source_host', sa.String(length=255), nullable=True),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('state', sa.String(length=16), nullable=False),
        sa.Column('request', sa.Text(), nullable=True),
        sa.Column('admitted_by', sa.String(length=255), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('admitted_at', sa.DateTime(), nullable=True),
        sa.Column('released_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('migration_uuid'))
    op.create_index('move_queue_state_idx', 'move_queue', ['state'])
    op.create_table(
        'move_limit_lock',
        sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('ticks', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id'))
    op.execute('INSERT INTO move_limit_lock (id, ticks) VALUES (1, 0)')
