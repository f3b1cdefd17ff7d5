"""SQLAlchemy models. Soft delete only for instances (Nova shows deleted
servers to admins); everything else is deleted for real."""
import datetime

from sqlalchemy import (BigInteger, Boolean, Column, DateTime, Float,
                        ForeignKey, Index, Integer, String, Text,
                        UniqueConstraint, false)
from sqlalchemy.orm import declarative_base

BASE = declarative_base()


def utcnow():
    """Naive UTC, as every DateTime column here is stored."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class TimestampMixin:
    created_at = Column(DateTime, default=utcnow, nullable=False)
    updated_at = Column(DateTime, onupdate=utcnow)


class Service(BASE, TimestampMixin):
    __tablename__ = 'services'
    __table_args__ = (UniqueConstraint('host', 'binary',
                                       name='uniq_services0host0binary'),)
    id = Column(Integer, primary_key=True)
    uuid = Column(String(36), nullable=False, unique=True)
    host = Column(String(255), nullable=False)
    binary = Column(String(255), nullable=False)
    topic = Column(String(255), nullable=False)
    disabled = Column(Boolean, nullable=False, default=False)
    disabled_reason = Column(String(255))
    forced_down = Column(Boolean, nullable=False, default=False)
    last_seen_up = Column(DateTime)
    report_count = Column(Integer, nullable=False, default=0)
    availability_zone = Column(String(255))


class ComputeNode(BASE, TimestampMixin):
    __tablename__ = 'compute_nodes'
    id = Column(Integer, primary_key=True)
    uuid = Column(String(36), nullable=False, unique=True)
    host = Column(String(255), nullable=False, unique=True)
    hypervisor_hostname = Column(String(255), nullable=False)
    hypervisor_type = Column(String(255), nullable=False)
    hypervisor_version = Column(Integer, nullable=False, default=1)
    cpu_model = Column(String(255), nullable=False)
    host_ip = Column(String(64))
    vcpus = Column(Integer, nullable=False)
    memory_mb = Column(Integer, nullable=False)
    local_gb = Column(Integer, nullable=False)


class ResourceProvider(BASE, TimestampMixin):
    __tablename__ = 'resource_providers'
    id = Column(Integer, primary_key=True)
    uuid = Column(String(36), nullable=False, unique=True)
    name = Column(String(255), nullable=False, unique=True)
    generation = Column(Integer, nullable=False, default=0)
    root_provider_id = Column(Integer, ForeignKey('resource_providers.id'),
                              index=True)
    parent_provider_id = Column(Integer,
                                ForeignKey('resource_providers.id'))
    # Sharing providers (MISC_SHARES_VIA_AGGREGATE) lend their inventory to
    # every root provider in one of their aggregates.
    shares_via_aggregate = Column(Boolean, nullable=False, default=False)


class ProviderAggregate(BASE):
    __tablename__ = 'provider_aggregates'
    resource_provider_id = Column(Integer, ForeignKey('resource_providers.id'),
                                  primary_key=True)
    aggregate_uuid = Column(String(36), primary_key=True)


class Inventory(BASE):
    __tablename__ = 'inventories'
    __table_args__ = (UniqueConstraint('resource_provider_id',
                                       'resource_class',
                                       name='uniq_inventories0rp0rc'),)
    id = Column(Integer, primary_key=True)
    resource_provider_id = Column(Integer, ForeignKey('resource_providers.id'),
                                  nullable=False)
    resource_class = Column(String(255), nullable=False)
    total = Column(Integer, nullable=False)
    reserved = Column(Integer, nullable=False, default=0)
    min_unit = Column(Integer, nullable=False, default=1)
    max_unit = Column(Integer, nullable=False)
    step_size = Column(Integer, nullable=False, default=1)
    allocation_ratio = Column(Float, nullable=False, default=1.0)


class Allocation(BASE):
    __tablename__ = 'allocations'
    __table_args__ = (Index('allocations_consumer_id_idx', 'consumer_id'),
                      Index('allocations_rp_rc_idx', 'resource_provider_id',
                            'resource_class'))
    id = Column(Integer, primary_key=True)
    resource_provider_id = Column(Integer, ForeignKey('resource_providers.id'),
                                  nullable=False)
    consumer_id = Column(String(36), nullable=False)
    resource_class = Column(String(255), nullable=False)
    used = Column(Integer, nullable=False)


class Consumer(BASE):
    """Placement's consumer generation (1.28): every write of a
    consumer's allocations bumps it, and a writer that states the
    generation it read fails when someone wrote in between. Rows are
    kept when the allocations go, so a generation only moves forward."""
    __tablename__ = 'consumers'
    uuid = Column(String(36), primary_key=True)
    generation = Column(Integer, nullable=False, default=0)


class Flavor(BASE, TimestampMixin):
    __tablename__ = 'flavors'
    id = Column(Integer, primary_key=True)
    flavorid = Column(String(255), nullable=False, unique=True)
    name = Column(String(255), nullable=False, unique=True)
    vcpus = Column(Integer, nullable=False)
    memory_mb = Column(Integer, nullable=False)
    root_gb = Column(Integer, nullable=False, default=0)
    ephemeral_gb = Column(Integer, nullable=False, default=0)
    swap = Column(Integer, nullable=False, default=0)
    rxtx_factor = Column(Float, nullable=False, default=1.0)
    is_public = Column(Boolean, nullable=False, default=True)
    disabled = Column(Boolean, nullable=False, default=False)
    description = Column(Text)


class FlavorExtraSpec(BASE, TimestampMixin):
    """A flavor's extra specs (Nova's: 255-character keys and values)."""
    __tablename__ = 'flavor_extra_specs'
    __table_args__ = (UniqueConstraint(
        'flavor_id', 'key', name='uniq_flavor_extra_specs0flavor_id0key'),)
    id = Column(Integer, primary_key=True)
    flavor_id = Column(Integer, ForeignKey('flavors.id', ondelete='CASCADE'),
                       nullable=False)
    key = Column(String(255), nullable=False)
    value = Column(String(255))


class FlavorProject(BASE, TimestampMixin):
    """The projects a private flavor is visible to (its access list)."""
    __tablename__ = 'flavor_projects'
    __table_args__ = (UniqueConstraint(
        'flavor_id', 'project_id',
        name='uniq_flavor_projects0flavor_id0project_id'),)
    id = Column(Integer, primary_key=True)
    flavor_id = Column(Integer, ForeignKey('flavors.id', ondelete='CASCADE'),
                       nullable=False)
    project_id = Column(String(255), nullable=False)


class Tag(BASE):
    """A server's tags (2.26), keyed by the server's uuid as Nova's."""
    __tablename__ = 'tags'
    resource_id = Column(String(36), primary_key=True, nullable=False)
    tag = Column(String(80), primary_key=True, nullable=False)


class Instance(BASE, TimestampMixin):
    __tablename__ = 'instances'
    __table_args__ = (Index('instances_host_idx', 'host'),
                      Index('instances_project_idx', 'project_id'))
    id = Column(Integer, primary_key=True)
    uuid = Column(String(36), nullable=False, unique=True)
    display_name = Column(String(255))
    user_id = Column(String(255), nullable=False)
    project_id = Column(String(255), nullable=False)
    image_ref = Column(String(255))
    host = Column(String(255))
    node = Column(String(255))
    availability_zone = Column(String(255))
    requested_az = Column(String(255))
    vm_state = Column(String(255), nullable=False)
    task_state = Column(String(255))
    power_state = Column(Integer, nullable=False, default=0)
    # Flavors are copied onto the server (JSON) so that a later change or
    # deletion of the flavor does not change what the server holds.
    flavor = Column(Text, nullable=False)
    old_flavor = Column(Text)
    new_flavor = Column(Text)
    launched_at = Column(DateTime)
    terminated_at = Column(DateTime)
    progress = Column(Integer, nullable=False, default=0)
    deleted = Column(Integer, nullable=False, default=0)
    deleted_at = Column(DateTime)
    # Nova's lock: who locked it ('owner' or 'admin', None when unlocked)
    # and why (2.73).
    locked_by = Column(String(16))
    locked_reason = Column(String(255))
    # What the owner sets and Nova shows back (schema 0009): no network
    # behind them here, they are kept and returned as given.
    access_ip_v4 = Column(String(39))
    access_ip_v6 = Column(String(39))
    description = Column(Text)
    auto_disk_config = Column(Boolean, nullable=False, default=False,
                              server_default=false())
    # The security group names the server is in (JSON list, schema 0010);
    # NULL is Nova's default group. No Neutron behind them: only
    # 'default' exists (api/lifecycle.py add/removeSecurityGroup).
    security_groups = Column(Text)
    # Multiple create (Nova's): the request's reservation, shared by the
    # servers it made, and each one's index in it.
    reservation_id = Column(String(255))
    launch_index = Column(Integer)
    # The key pair named at boot (or rebuild, 2.54) and its public key,
    # copied: deleting the key pair later changes nothing here (schema
    # 0014), as in Nova.
    key_name = Column(String(255))
    key_data = Column(Text)
    # The boot's scheduler hints as given (JSON), shown from 2.100.
    scheduler_hints = Column(Text)
    # Nova's: the copy of a server in the cell it is not mapped to during
    # a cross-cell resize (schema 0016); lists leave it out.
    hidden = Column(Boolean, nullable=False, default=False,
                    server_default=false())


class InstanceMetadata(BASE, TimestampMixin):
    """A server's metadata items (Nova's limits: 255-character keys and
    values, at most [quota] metadata_items of them)."""
    __tablename__ = 'instance_metadata'
    __table_args__ = (UniqueConstraint(
        'instance_uuid', 'key', name='uniq_instance_metadata0uuid0key'),)
    id = Column(Integer, primary_key=True)
    instance_uuid = Column(String(36), nullable=False)
    key = Column(String(255), nullable=False)
    value = Column(String(255), nullable=False)


class InstanceFault(BASE):
    __tablename__ = 'instance_faults'
    id = Column(Integer, primary_key=True)
    instance_uuid = Column(String(36), nullable=False, index=True)
    code = Column(Integer, nullable=False)
    message = Column(String(255))
    details = Column(Text)
    host = Column(String(255))
    created_at = Column(DateTime, default=utcnow, nullable=False)


class InstanceAction(BASE, TimestampMixin):
    __tablename__ = 'instance_actions'
    __table_args__ = (Index('instance_actions_uuid_req_idx', 'instance_uuid',
                            'request_id'),)
    id = Column(Integer, primary_key=True)
    action = Column(String(255), nullable=False)
    instance_uuid = Column(String(36), nullable=False)
    request_id = Column(String(255), nullable=False)
    user_id = Column(String(255))
    project_id = Column(String(255))
    start_time = Column(DateTime, nullable=False)
    finish_time = Column(DateTime)
    message = Column(String(255))


class InstanceActionEvent(BASE, TimestampMixin):
    __tablename__ = 'instance_actions_events'
    id = Column(Integer, primary_key=True)
    action_id = Column(Integer, ForeignKey('instance_actions.id'),
                       nullable=False, index=True)
    event = Column(String(255), nullable=False)
    start_time = Column(DateTime, nullable=False)
    finish_time = Column(DateTime)
    result = Column(String(255))
    traceback = Column(Text)
    host = Column(String(255))
    details = Column(Text)


class Migration(BASE, TimestampMixin):
    __tablename__ = 'migrations'
    __table_args__ = (Index('migrations_instance_uuid_idx', 'instance_uuid'),
                      Index('migrations_status_idx', 'status'))
    id = Column(Integer, primary_key=True)
    uuid = Column(String(36), nullable=False, unique=True)
    instance_uuid = Column(String(36), nullable=False)
    migration_type = Column(String(32), nullable=False)
    status = Column(String(255), nullable=False)
    source_compute = Column(String(255))
    source_node = Column(String(255))
    dest_compute = Column(String(255))
    dest_node = Column(String(255))
    dest_host = Column(String(255))
    old_flavor_id = Column(String(255))
    new_flavor_id = Column(String(255))
    user_id = Column(String(255))
    project_id = Column(String(255))
    # Bytes: 64 bits (a guest of 2 GiB overflows 32; migration 0013).
    memory_total = Column(BigInteger)
    memory_processed = Column(BigInteger)
    memory_remaining = Column(BigInteger)
    disk_total = Column(BigInteger)
    disk_processed = Column(BigInteger)
    disk_remaining = Column(BigInteger)
    hidden = Column(Boolean, nullable=False, default=False)
    # Nova's: the move's rows are in two cells (schema 0016).
    cross_cell_move = Column(Boolean, nullable=False, default=False,
                             server_default=false())
    deleted = Column(Integer, nullable=False, default=0)
    # Times the stuck-move sweep re-sent the current step (issue 10).
    step_retries = Column(Integer, default=0)
    # When each status began: JSON [[status, time], ...] (db/phases.py).
    phases = Column(Text)


class Quota(BASE, TimestampMixin):
    """A project's limit on one resource (instances, cores, ram); no row
    means the [quota] default."""
    __tablename__ = 'quotas'
    __table_args__ = (UniqueConstraint('project_id', 'resource',
                                       name='uniq_quotas0project_id0resource'),)
    id = Column(Integer, primary_key=True)
    project_id = Column(String(255), nullable=False)
    resource = Column(String(255), nullable=False)
    hard_limit = Column(Integer, nullable=False)


class QuotaClass(BASE, TimestampMixin):
    """os-quota-class-sets: the ``default`` class's rows override the
    [quota] options as every project's defaults, as in Nova."""
    __tablename__ = 'quota_classes'
    __table_args__ = (UniqueConstraint(
        'class_name', 'resource', name='uniq_quota_classes0class0resource'),)
    id = Column(Integer, primary_key=True)
    class_name = Column(String(255), nullable=False)
    resource = Column(String(255), nullable=False)
    hard_limit = Column(Integer, nullable=False)


class HostDrain(BASE, TimestampMixin):
    """A request to empty a compute host (os-host-drains); the conductor
    named in ``owner`` runs it and refreshes ``heartbeat_at``."""
    __tablename__ = 'host_drains'
    __table_args__ = (Index('host_drains_status_idx', 'status'),)
    id = Column(Integer, primary_key=True)
    uuid = Column(String(36), nullable=False, unique=True)
    host = Column(String(255), nullable=False)
    mode = Column(String(16), nullable=False)
    target_hosts = Column(Text)
    # JSON: the drain plan's estimate when the drain was created
    # (api/drain_plans.py), set against the real duration in its report.
    estimate = Column(Text)
    force_down_if_dead = Column(Boolean, nullable=False, default=False)
    status = Column(String(16), nullable=False)
    owner = Column(String(255))
    heartbeat_at = Column(DateTime)
    user_id = Column(String(255))
    project_id = Column(String(255))
    started_at = Column(DateTime)
    finished_at = Column(DateTime)


class HostDrainServer(BASE, TimestampMixin):
    """One server of a drain: pending, moving, done or failed."""
    __tablename__ = 'host_drain_servers'
    __table_args__ = (UniqueConstraint(
        'drain_id', 'instance_uuid',
        name='uniq_host_drain_servers0drain_id0instance_uuid'),)
    id = Column(Integer, primary_key=True)
    drain_id = Column(Integer, ForeignKey('host_drains.id'), nullable=False)
    instance_uuid = Column(String(36), nullable=False)
    state = Column(String(16), nullable=False)
    action = Column(String(16))
    migration_uuid = Column(String(36))
    attempts = Column(Integer, nullable=False, default=0)
    reason = Column(Text)


class MoveQueue(BASE):
    """Every move that went through the conductors' concurrency gate:
    ``queued`` (waiting, with the request to run it), ``admitted``
    (counts against the limits while its migration is unsettled),
    ``released``."""
    __tablename__ = 'move_queue'
    __table_args__ = (Index('move_queue_state_idx', 'state'),)
    id = Column(Integer, primary_key=True)
    migration_uuid = Column(String(36), nullable=False, unique=True)
    instance_uuid = Column(String(36), nullable=False)
    source_host = Column(String(255))
    kind = Column(String(16), nullable=False)
    state = Column(String(16), nullable=False)
    request = Column(Text)
    admitted_by = Column(String(255))
    created_at = Column(DateTime, nullable=False)
    admitted_at = Column(DateTime)
    released_at = Column(DateTime)


class MoveLimitLock(BASE):
    """One row whose update serialises the gate's decisions across
    conductors (a row lock on MySQL/PostgreSQL, the write lock on
    SQLite)."""
    __tablename__ = 'move_limit_lock'
    id = Column(Integer, primary_key=True, autoincrement=False)
    ticks = Column(Integer, nullable=False, default=0)


class InstanceGroup(BASE, TimestampMixin):
    """A server group (os-server-groups): one policy for its members'
    hosts, honoured by the scheduler at boot and on every move."""
    __tablename__ = 'instance_groups'
    __table_args__ = (Index('instance_groups_project_idx', 'project_id'),)
    id = Column(Integer, primary_key=True)
    uuid = Column(String(36), nullable=False, unique=True)
    name = Column(String(255))
    user_id = Column(String(255))
    project_id = Column(String(255))
    # affinity, anti-affinity, soft-affinity or soft-anti-affinity.
    policy = Column(String(255), nullable=False)
    # JSON: {"max_server_per_host": N} (2.64, anti-affinity only).
    rules = Column(Text)


class KeyPair(BASE, TimestampMixin):
    """A user's key pair (os-keypairs): names are unique per user."""
    __tablename__ = 'key_pairs'
    __table_args__ = (UniqueConstraint(
        'user_id', 'name', name='uniq_key_pairs0user_id0name'),)
    id = Column(Integer, primary_key=True)
    name = Column(String(255), nullable=False)
    user_id = Column(String(255), nullable=False)
    fingerprint = Column(String(255))
    public_key = Column(Text)
    # ssh or x509 (2.2).
    type = Column(String(16), nullable=False, default='ssh',
                  server_default='ssh')


class InstanceGroupMember(BASE, TimestampMixin):
    __tablename__ = 'instance_group_member'
    __table_args__ = (UniqueConstraint(
        'instance_uuid', name='uniq_instance_group_member0instance'),)
    id = Column(Integer, primary_key=True)
    group_id = Column(Integer, ForeignKey('instance_groups.id'),
                      nullable=False, index=True)
    instance_uuid = Column(String(36), nullable=False)


class Aggregate(BASE, TimestampMixin):
    """A Nova host aggregate (os-aggregates): a named set of compute
    hosts with metadata; its ``availability_zone`` metadata key is the
    zone of its hosts. Not placement's provider aggregates above."""
    __tablename__ = 'aggregates'
    id = Column(Integer, primary_key=True)
    uuid = Column(String(36), nullable=False, unique=True)
    name = Column(String(255), nullable=False, unique=True)


class AggregateHost(BASE, TimestampMixin):
    __tablename__ = 'aggregate_hosts'
    __table_args__ = (UniqueConstraint(
        'host', 'aggregate_id', name='uniq_aggregate_hosts0host0agg'),)
    id = Column(Integer, primary_key=True)
    host = Column(String(255), nullable=False, index=True)
    aggregate_id = Column(Integer, ForeignKey('aggregates.id'),
                          nullable=False, index=True)


class AggregateMetadata(BASE, TimestampMixin):
    __tablename__ = 'aggregate_metadata'
    __table_args__ = (UniqueConstraint(
        'aggregate_id', 'key', name='uniq_aggregate_metadata0agg0key'),
        Index('aggregate_metadata_key_idx', 'key'))
    id = Column(Integer, primary_key=True)
    aggregate_id = Column(Integer, ForeignKey('aggregates.id'),
                          nullable=False, index=True)
    key = Column(String(255), nullable=False)
    value = Column(String(255), nullable=False)


class TaskLog(BASE, TimestampMixin):
    """Nova's task_log: one row per (task, host, period) of a periodic
    audit (``instance_usage_audit``), RUNNING then DONE; read by
    os-instance_usage_audit_log. The unique key lets only one conductor
    audit a host for a period."""
    __tablename__ = 'task_log'
    __table_args__ = (UniqueConstraint(
        'task_name', 'host', 'period_beginning', 'period_ending',
        name='uniq_task_log0task_name0host0period_beginning0period_ending'),
    )
    id = Column(Integer, primary_key=True)
    task_name = Column(String(255), nullable=False)
    state = Column(String(255), nullable=False)
    host = Column(String(255), nullable=False, index=True)
    period_beginning = Column(DateTime, nullable=False, index=True)
    period_ending = Column(DateTime, nullable=False, index=True)
    message = Column(String(255), nullable=False)
    task_items = Column(Integer, default=0)
    errors = Column(Integer, default=0)


class InstanceSystemMetadata(BASE, TimestampMixin):
    """Nova's instance_system_metadata: what Nova keeps about a server
    that its owner does not set; here the server password's chunks
    (``password_0`` .. ``password_3``, os-server-password)."""
    __tablename__ = 'instance_system_metadata'
    __table_args__ = (UniqueConstraint(
        'instance_uuid', 'key',
        name='uniq_instance_system_metadata0instance_uuid0key'),)
    id = Column(Integer, primary_key=True)
    instance_uuid = Column(String(36), nullable=False, index=True)
    key = Column(String(255), nullable=False)
    value = Column(String(255))
