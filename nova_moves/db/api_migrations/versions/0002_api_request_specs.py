"""The API database's request specs (Nova's request_specs columns and
constraints): what each server was booted with, for the 2.69 show of a
server whose cell does not answer

Revision ID: api0002
Revises: api0001
Create Date: 2026-11-29 19:45:00
"""
from alembic import op
import sqlalchemy as sa


revision = 'api0002'
down_revision = 'api0001'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'request_specs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('spec', sa.Text(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('instance_uuid',
                            name='uniq_request_specs0instance_uuid'))
    op.create_index('request_spec_instance_uuid_idx', 'request_specs',
                    ['instance_uuid'])
