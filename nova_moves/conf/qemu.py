from oslo_config import cfg

qemu_group = cfg.OptGroup('qemu', title='The QEMU compute driver '
                          '([compute] driver = qemu)')

qemu_opts = [
    cfg.StrOpt('instances_path', default='$state_path/instances',
               help='Where each server\'s directory is: '
                    '<instances_path>/<server uuid>/ holds its disk '
                    '(qcow2 on its image\'s base), console.log (the serial '
                    'console), qemu.pid and qmp.sock. "{host}" is replaced '
                    'by the host name, for several hosts on one machine '
                    'with their own (not shared) storage. The QMP socket '
                    'path must stay under 108 bytes.'),
    cfg.StrOpt('accel', default='auto', choices=['auto', 'kvm', 'tcg'],
               help='QEMU accelerator. auto: KVM when /dev/kvm opens and a '
                    'probe guest runs under it, else TCG (software).'),
    cfg.StrOpt('binary', default='qemu-system-x86_64',
               help='The QEMU system emulator.'),
    cfg.StrOpt('machine', default='q35', help='QEMU machine type.'),
    cfg.StrOpt('cpu_mode', default='qemu64',
               help='The guest CPU model (-cpu). The same on every host, '
                    'so that live migration between them works.'),
    cfg.StrOpt('migration_address', default='$compute.host_ip',
               help='Address this host receives live migrations (memory '
                    'and the block mirror) and serves cold-move disks on.'),
    cfg.PortOpt('migration_port_min', default=49152,
                help='Lowest TCP port for incoming live migrations and '
                     'disk exports (Nova\'s libvirt uses 49152-49215).'),
    cfg.PortOpt('migration_port_max', default=49215,
                help='Highest such port.'),
    cfg.IntOpt('shutdown_timeout', default=60, min=0,
               help='Seconds a clean (ACPI) power-down may take before the '
                    'guest is stopped hard (Nova\'s shutdown_timeout).'),
    cfg.IntOpt('boot_timeout', default=60, min=1,
               help='Seconds QEMU may take to start and answer on QMP.'),
    cfg.IntOpt('live_migration_bandwidth', default=0, min=0,
               help='Maximum bandwidth of a live migration in MiB/s (0: '
                    'unlimited), as [libvirt] live_migration_bandwidth.'),
    cfg.IntOpt('live_migration_downtime', default=500, min=100,
               help='Maximum downtime of a live migration in ms, as '
                    '[libvirt] live_migration_downtime: reached in '
                    'live_migration_downtime_steps from a tenth of it.'),
    cfg.IntOpt('live_migration_downtime_steps', default=10, min=3,
               help='Steps to raise the downtime to its maximum, as '
                    '[libvirt].'),
    cfg.IntOpt('live_migration_downtime_delay', default=75, min=3,
               help='Seconds per GiB of guest memory between two downtime '
                    'steps, as [libvirt].'),
    cfg.IntOpt('live_migration_completion_timeout', default=800, min=0,
               help='Seconds per GiB of memory and disk a live migration '
                    'may take before live_migration_timeout_action (0: '
                    'never), as [libvirt].'),
    cfg.StrOpt('live_migration_timeout_action', default='abort',
               choices=['abort', 'force_complete'],
               help='What a live migration that reached its completion '
                    'timeout does: abort (the guest stays on the source) '
                    'or force_complete (post-copy when permitted, else '
                    'pause the guest until it converges).'),
    cfg.BoolOpt('live_migration_permit_auto_converge', default=False,
                help='Let QEMU throttle the guest\'s vCPUs when memory is '
                     'dirtied faster than it is sent.'),
    cfg.BoolOpt('live_migration_permit_post_copy', default=False,
                help='Let force-complete (and the timeout action) switch to '
                     'post-copy: the guest runs on the destination while '
                     'the rest of its memory follows.'),
    cfg.FloatOpt('watch_interval', default=2.0, min=0.0,
                 help='Seconds between two looks at this host\'s QEMU '
                      'processes: a guest whose process exited without '
                      'the agent stopping it goes SHUTOFF with a fault '
                      '(0: never look). Local reads only; the conductor '
                      'hears of a crash, not of every look.'),
    cfg.BoolOpt('report_host_capacity', default=False,
                help='Report this machine\'s real CPUs, memory and disk '
                     'instead of [compute] vcpus, memory_mb and disk_gb '
                     '(several hosts share one machine in tests).'),
]


def register_opts(conf):
    conf.register_group(qemu_group)
    conf.register_opts(qemu_opts, group=qemu_group)


def list_opts():
    return {qemu_group: qemu_opts}
