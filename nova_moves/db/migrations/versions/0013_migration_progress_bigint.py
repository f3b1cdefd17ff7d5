"""A live migration's progress in bytes needs 64 bits: a guest of 2 GiB
of memory or disk overflowed the 32-bit columns on PostgreSQL and
MariaDB (the migration went to error); SQLite hid it.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29 03:55:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None

COLUMNS = ('memory_total', 'memory_processed', 'memory_remaining',
           'disk_total', 'disk_processed', 'disk_remaining')


def upgrade():
    with op.batch_alter_table('migrations') as batch:
        for name in COLUMNS:
            batch.alter_column(name, existing_type=sa.Integer(),
                               type_=sa.BigInteger(),
                               existing_nullable=True)
