"""Nova's key pairs (os-keypairs), and the key a server booted with:
instances.key_name and key_data (the public key, copied at boot and
rebuild so a later delete of the key pair leaves the server's as it
was, as in Nova); instances.scheduler_hints (JSON, the boot's hints,
shown from 2.100).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-29 06:10:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'key_pairs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=False),
        sa.Column('fingerprint', sa.String(length=255), nullable=True),
        sa.Column('public_key', sa.Text(), nullable=True),
        sa.Column('type', sa.String(length=16), nullable=False,
                  server_default='ssh'),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('user_id', 'name',
                            name='uniq_key_pairs0user_id0name'))
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('key_name', sa.String(length=255),
                                   nullable=True))
        batch.add_column(sa.Column('key_data', sa.Text(), nullable=True))
        batch.add_column(sa.Column('scheduler_hints', sa.Text(),
                                   nullable=True))
