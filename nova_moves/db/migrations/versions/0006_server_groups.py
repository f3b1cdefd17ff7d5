"""server groups and their members

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26 18:40:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'instance_groups',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=True),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('policy', sa.String(length=255), nullable=False),
        sa.Column('rules', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid'))
    op.create_index('instance_groups_project_idx', 'instance_groups',
                    ['project_id'])
    op.create_table(
        'instance_group_member',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('group_id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['group_id'], ['instance_groups.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('instance_uuid',
                            name='uniq_instance_group_member0instance'))
    op.create_index('ix_instance_group_member_group_id',
                    'instance_group_member', ['group_id'])
