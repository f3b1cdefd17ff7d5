"""The API database's models (cells v2, Nova's nova/db/api/models.py
shape): which cells exist, which cell each compute host and each server
is in. Kept apart from the cell database's models (db/models.py): they
have their own metadata and their own alembic tree (db/api_migrations),
so they can live in another database ([api_database] connection)."""
from sqlalchemy import (Boolean, Column, ForeignKey, Index, Integer, String,
                        Text, UniqueConstraint)
from sqlalchemy.orm import declarative_base

from nova_moves.db import models

API_BASE = declarative_base()


class CellMapping(API_BASE, models.TimestampMixin):
    """How to reach a cell: its database and its message queue."""
    __tablename__ = 'cell_mappings'
    __table_args__ = (Index('uuid_idx', 'uuid'),
                      UniqueConstraint('uuid', name='uniq_cell_mappings0uuid'))
    id = Column(Integer, primary_key=True)
    uuid = Column(String(36), nullable=False)
    name = Column(String(255))
    transport_url = Column(Text)
    database_connection = Column(Text)
    disabled = Column(Boolean, default=False)


class HostMapping(API_BASE, models.TimestampMixin):
    """The cell a compute host reports into (written by discover_hosts)."""
    __tablename__ = 'host_mappings'
    __table_args__ = (Index('host_idx', 'host'),
                      UniqueConstraint('host', name='uniq_host_mappings0host'))
    id = Column(Integer, primary_key=True)
    cell_id = Column(Integer, ForeignKey('cell_mappings.id'), nullable=False)
    host = Column(String(255), nullable=False)


class InstanceMapping(API_BASE, models.TimestampMixin):
    """The cell a server's records are in; cell_id NULL until it has one
    (Nova: a boot not yet scheduled)."""
    __tablename__ = 'instance_mappings'
    __table_args__ = (
        Index('project_id_idx', 'project_id'),
        Index('instance_uuid_idx', 'instance_uuid'),
        Index('instance_mappings_user_id_project_id_idx', 'user_id',
              'project_id'),
        UniqueConstraint('instance_uuid',
                         name='uniq_instance_mappings0instance_uuid'))
    id = Column(Integer, primary_key=True)
    instance_uuid = Column(String(36), nullable=False)
    cell_id = Column(Integer, ForeignKey('cell_mappings.id'), nullable=True)
    project_id = Column(String(255), nullable=False)
    user_id = Column(String(255), nullable=True)
    queued_for_delete = Column(Boolean, default=False)


class RequestSpec(API_BASE, models.TimestampMixin):
    """What a server was asked with (Nova's request_specs: a JSON blob of
    the flavor, image, zone and owner), kept where the API can read it
    while the server's cell is down (the 2.69 partial show)."""
    __tablename__ = 'request_specs'
    __table_args__ = (
        Index('request_spec_instance_uuid_idx', 'instance_uuid'),
        UniqueConstraint('instance_uuid',
                         name='uniq_request_specs0instance_uuid'))
    id = Column(Integer, primary_key=True)
    instance_uuid = Column(String(36), nullable=False)
    spec = Column(Text, nullable=False)
