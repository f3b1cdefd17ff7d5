"""Nova host aggregates (os-aggregates): aggregates, their hosts and
their metadata

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26 22:40:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def _stamps():
    return [sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('updated_at', sa.DateTime(), nullable=True)]


def upgrade():
    op.create_table(
        'aggregates',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        *_stamps(),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid'),
        sa.UniqueConstraint('name'))
    op.create_table(
        'aggregate_hosts',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('aggregate_id', sa.Integer(), nullable=False),
        *_stamps(),
        sa.ForeignKeyConstraint(['aggregate_id'], ['aggregates.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('host', 'aggregate_id',
                            name='uniq_aggregate_hosts0host0agg'))
    op.create_index('ix_aggregate_hosts_host', 'aggregate_hosts', ['host'])
    op.create_index('ix_aggregate_hosts_aggregate_id', 'aggregate_hosts',
                    ['aggregate_id'])
    op.create_table(
        'aggregate_metadata',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('aggregate_id', sa.Integer(), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('value', sa.String(length=255), nullable=False),
        *_stamps(),
        sa.ForeignKeyConstraint(['aggregate_id'], ['aggregates.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('aggregate_id', 'key',
                            name='uniq_aggregate_metadata0agg0key'))
    op.create_index('aggregate_metadata_key_idx', 'aggregate_metadata',
                    ['key'])
    op.create_index('ix_aggregate_metadata_aggregate_id',
                    'aggregate_metadata', ['aggregate_id'])
