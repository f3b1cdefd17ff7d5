"""Compute nodes and their resource provider trees and inventories."""
import uuid as uuidlib

import sqlalchemy as sa

from nova_moves.db import models
from nova_moves import exception
from nova_moves.db.session import (
    _get_by_id_or_uuid,
    _retry_on_deadlock,
    _session,
    _to_dict)


def _ensure_provider(session, name, parent=None, shares=False):
    row = session.scalars(sa.select(models.ResourceProvider).where(
        models.ResourceProvider.name == name)).first()
    if row is None:
        row = models.ResourceProvider(uuid=str(uuidlib.uuid4()), name=name,
                                      generation=0,
                                      shares_via_aggregate=shares)
        session.add(row)
        session.flush()
    row.parent_provider_id = parent.id if parent else None
    row.root_provider_id = parent.root_provider_id if parent else row.id
    row.shares_via_aggregate = shares
    return row


def _set_inventory(session, provider, resource_class, total, reserved,
                   ratio):
    inv = session.scalars(sa.select(models.Inventory).where(
        models.Inventory.resource_provider_id == provider.id,
        models.Inventory.resource_class == resource_class)).first()
    if inv is None:
        inv = models.Inventory(resource_provider_id=provider.id,
                               resource_class=resource_class)
        session.add(inv)
    inv.total = total
    inv.reserved = reserved
    inv.max_unit = total
    inv.allocation_ratio = ratio


def _drop_inventory(session, provider, resource_class):
    session.execute(sa.delete(models.Inventory).where(
        models.Inventory.resource_provider_id == provider.id,
        models.Inventory.resource_class == resource_class))


@_retry_on_deadlock
def compute_node_sync(node):
    """Create or update a compute node and its provider tree.

    ``node`` holds host, hypervisor_type, cpu_model, host_ip, vcpus,
    memory_mb, disk_gb, reserved_host_memory_mb, the three allocation
    ratios and disk_provider ('root', 'nested' or 'sharing:<name>').
    """
    host = node['host']
    with _session() as session:
        root = _ensure_provider(session, host)
        row = session.scalars(sa.select(models.ComputeNode).where(
            models.ComputeNode.host == host)).first()
        if row is None:
            row = models.ComputeNode(uuid=root.uuid, host=host)
            session.add(row)
        row.hypervisor_hostname = host
        row.hypervisor_type = node['hypervisor_type']
        row.cpu_model = node['cpu_model']
        row.host_ip = node.get('host_ip')
        row.vcpus = node['vcpus']
        row.memory_mb = node['memory_mb']
        row.local_gb = node['disk_gb']
        _set_inventory(session, root, 'VCPU', node['vcpus'], 0,
                       node['cpu_allocation_ratio'])
        _set_inventory(session, root, 'MEMORY_MB', node['memory_mb'],
                       node['reserved_host_memory_mb'],
                       node['ram_allocation_ratio'])
        layout = node.get('disk_provider') or 'root'
        ratio = node['disk_allocation_ratio']
        if layout == 'root':
            _set_inventory(session, root, 'DISK_GB', node['disk_gb'], 0,
                           ratio)
        elif layout == 'nested':
            _drop_inventory(session, root, 'DISK_GB')
            child = _ensure_provider(session, host + '_disk', parent=root)
            _set_inventory(session, child, 'DISK_GB', node['disk_gb'], 0,
                           ratio)
        elif layout.startswith('sharing:'):
            _drop_inventory(session, root, 'DISK_GB')
            name = layout.split(':', 1)[1]
            shared = _ensure_provider(session, name, shares=True)
            _set_inventory(session, shared, 'DISK_GB', node['disk_gb'], 0,
                           ratio)
            for provider in (root, shared):
                exists = session.get(models.ProviderAggregate,
                                     (provider.id, name))
                if exists is None:
                    session.add(models.ProviderAggregate(
                        resource_provider_id=provider.id,
                        aggregate_uuid=name))
        else:
            raise exception.Invalid(reason='unknown disk_provider %s' % layout)
        root.generation += 1
        session.flush()
        return _to_dict(row)


def compute_node_get_all():
    with _session(writer=False) as session:
        return [_to_dict(r) for r in session.scalars(
            sa.select(models.ComputeNode).order_by(models.ComputeNode.id))]


def compute_node_get_by_host(host):
    with _session(writer=False) as session:
        row = session.scalars(sa.select(models.ComputeNode).where(
            models.ComputeNode.host == host)).first()
        if row is None:
            raise exception.ComputeHostNotFound(host=host)
        return _to_dict(row)


def compute_node_get(node_id):
    return _get_by_id_or_uuid(
        models.ComputeNode, node_id,
        lambda: exception.ComputeHostNotFound(host=node_id))


def provider_get_all():
    with _session(writer=False) as session:
        return [_to_dict(r) for r in session.scalars(
            sa.select(models.ResourceProvider).order_by(
                models.ResourceProvider.id))]
