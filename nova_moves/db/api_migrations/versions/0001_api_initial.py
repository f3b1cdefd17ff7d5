"""The cells v2 API database: cell, host and instance mappings (Nova's
nova/db/api/models.py columns and constraints)

Revision ID: api0001
Revises:
Create Date: 2026-11-29 13:20:00
"""
from alembic import op
import sqlalchemy as sa


revision = 'api0001'
down_revision = None
branch_labels = None
depends_on = None


def _stamps():
    return [sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('updated_at', sa.DateTime(), nullable=True)]


def upgrade():
    op.create_table(
        'cell_mappings',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=True),
        sa.Column('transport_url', sa.Text(), nullable=True),
        sa.Column('database_connection', sa.Text(), nullable=True),
        sa.Column('disabled', sa.Boolean(), nullable=True),
        *_stamps(),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid', name='uniq_cell_mappings0uuid'))
    op.create_index('uuid_idx', 'cell_mappings', ['uuid'])
    op.create_table(
        'host_mappings',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('cell_id', sa.Integer(), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=False),
        *_stamps(),
        sa.ForeignKeyConstraint(['cell_id'], ['cell_mappings.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('host', name='uniq_host_mappings0host'))
    op.create_index('host_idx', 'host_mappings', ['host'])
    op.create_table(
        'instance_mappings',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('cell_id', sa.Integer(), nullable=True),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('queued_for_delete', sa.Boolean(), nullable=True),
        *_stamps(),
        sa.ForeignKeyConstraint(['cell_id'], ['cell_mappings.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('instance_uuid',
                            name='uniq_instance_mappings0instance_uuid'))
    op.create_index('project_id_idx', 'instance_mappings', ['project_id'])
    op.create_index('instance_uuid_idx', 'instance_mappings',
                    ['instance_uuid'])
    op.create_index('instance_mappings_user_id_project_id_idx',
                    'instance_mappings', ['user_id', 'project_id'])
