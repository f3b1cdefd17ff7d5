"""flavor extra specs, flavor access lists, server tags and the
instances' reservation_id/launch_index (multiple create)

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 22:40:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def _timestamps():
    return [sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('updated_at', sa.DateTime(), nullable=True)]


def upgrade():
    op.create_table(
        'flavor_extra_specs',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('flavor_id', sa.Integer(),
                  sa.ForeignKey('flavors.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('value', sa.String(255), nullable=True),
        *_timestamps(),
        sa.UniqueConstraint('flavor_id', 'key',
                            name='uniq_flavor_extra_specs0flavor_id0key'))
    op.create_table(
        'flavor_projects',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('flavor_id', sa.Integer(),
                  sa.ForeignKey('flavors.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('flavor_id', 'project_id',
                            name='uniq_flavor_projects0flavor_id0project_id'))
    op.create_table(
        'tags',
        sa.Column('resource_id', sa.String(36), primary_key=True,
                  nullable=False),
        sa.Column('tag', sa.String(80), primary_key=True, nullable=False))
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('reservation_id', sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column('launch_index', sa.Integer(),
                                   nullable=True))
