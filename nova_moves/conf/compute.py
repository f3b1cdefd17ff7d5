from oslo_config import cfg

compute_group = cfg.OptGroup('compute', title='Compute agent and its fake '
                             'hypervisor')

compute_opts = [
    cfg.StrOpt('driver', default='fake', choices=['fake', 'qemu'],
               help='The hypervisor behind this host (Nova\'s '
                    'compute_driver): "fake" simulates guests (unit tests, '
                    'the harness at scale); "qemu" runs each server as a '
                    'real QEMU process ([qemu] options).'),
    cfg.ListOpt('fake_hosts', default=[],
                help='Serve several hosts from one nova-moves-compute '
                     'process, each with its own RPC server, service record '
                     'and resource provider. Empty means just [DEFAULT] '
                     'host.'),
    cfg.IntOpt('vcpus', default=16, min=1, help='VCPU inventory of a host.'),
    cfg.IntOpt('memory_mb', default=32768, min=1,
               help='MEMORY_MB inventory of a host.'),
    cfg.IntOpt('disk_gb', default=500, min=1, help='DISK_GB inventory.'),
    cfg.IntOpt('reserved_host_memory_mb', default=0, min=0,
               help='MEMORY_MB reserved for the host itself.'),
    cfg.FloatOpt('cpu_allocation_ratio', default=4.0, min=0.0,
                 help='VCPU overcommit ratio.'),
    cfg.FloatOpt('ram_allocation_ratio', default=1.0, min=0.0,
                 help='MEMORY_MB overcommit ratio.'),
    cfg.FloatOpt('disk_allocation_ratio', default=1.0, min=0.0,
                 help='DISK_GB overcommit ratio.'),
    cfg.StrOpt('disk_provider', default='root',
               help='Where DISK_GB comes from: "root" (the compute node), '
                    '"nested" (a child provider <host>_disk) or '
                    '"sharing:<name>" (a sharing provider <name> joined to '
                    'the host by an aggregate of the same name). Nested and '
                    'sharing layouts make forced moves fail with NoValidHost '
                    '(the spec "Remove force flag from live-migrate and '
                    'evacuate").'),
    cfg.StrOpt('cpu_model', default='Haswell',
               help='CPU model the fake hypervisor reports; a live migration '
                    'needs the same model on both hosts.'),
    cfg.StrOpt('hypervisor_type', default='QEMU',
               help='Hypervisor type reported; live migration needs it equal '
                    'on both hosts.'),
    cfg.StrOpt('availability_zone', default='nova',
               help='Availability zone of this host.'),
    cfg.StrOpt('host_ip', default='127.0.0.1', help='IP reported in '
               'os-hypervisors.'),
    cfg.DictOpt('operation_seconds', default={},
                help='Simulated duration per fake hypervisor operation, e.g. '
                     'spawn:0.2,migrate_disk:0.5,live_migration:2. '
                     '(migrate_disk is migrate_disk_and_power_off, the '
                     'disk copy of a resize or cold migration).'),
    cfg.FloatOpt('default_operation_seconds', default=0.05, min=0.0,
                 help='Duration of a fake operation not in '
                      'operation_seconds.'),
    cfg.IntOpt('shelved_offload_time', default=0, min=-1, max=0,
               help='What a shelve does after powering the guest off '
                    '(Nova\'s option, without its delayed offload): 0 '
                    'offloads at once (the guest is removed, the host '
                    'and its allocation are given up: SHELVED_OFFLOADED), '
                    '-1 never (SHELVED, still on its host, until '
                    'shelveOffload).'),
    cfg.ListOpt('fail_operations', default=[],
                help='Fake hypervisor operations that raise, e.g. '
                     'spawn,prep_resize. Entries may be host-qualified as '
                     'host:operation. Tests can also set this at run time '
                     'through the admin test hook.'),
    cfg.IntOpt('live_migration_memory_mb', default=0, min=0,
               help='Memory to transfer in a simulated live migration; 0 '
                    'uses the flavor memory.'),
    cfg.IntOpt('fence_after', default=0, min=0,
               help='Self-fencing: a host that could not report its '
                    'heartbeat for this many seconds (the conductors or '
                    'the broker out of its reach) pauses or stops its '
                    'running guests ([compute] fence_action), so that an '
                    'evacuation of its servers never leaves two copies '
                    'running. It records them in '
                    '$state_path/fence/<host>.json and, once it reports '
                    'again, restores the ones still its own (not '
                    'evacuated meanwhile), with an instance fault on each '
                    'fenced server. Must be more than [DEFAULT] '
                    'report_interval and less than [DEFAULT] '
                    'service_down_time (minus [qemu] shutdown_timeout for '
                    'fence_action = stop with the qemu driver), else the '
                    'compute refuses to start. 0 (the default, as Nova) '
                    'never fences: an outage of the broker itself then '
                    'leaves every guest running, and an operator must fence '
                    'a host before evacuating it. A value of about half of '
                    'service_down_time leaves the fence time to finish '
                    'before the host is shown down.'),
    cfg.StrOpt('fence_action', default='pause', choices=[
                   ('pause', 'Freeze the guests (instant, memory kept; '
                    'unpaused on restore).'),
                   ('stop', 'Power the guests off (a clean power-down '
                    'with the qemu driver; started again on restore).')],
               help='What self-fencing ([compute] fence_after) does to a '
                    'running guest.'),
]


def register_opts(conf):
    conf.register_group(compute_group)
    conf.register_opts(compute_opts, group=compute_group)


def list_opts():
    return {compute_group: compute_opts}
