"""[upgrade_levels]: during a rolling upgrade, pin what a service sends
to the version the oldest peer understands, as Nova does."""
from oslo_config import cfg

upgrade_group = cfg.OptGroup(
    'upgrade_levels', title='RPC version caps for rolling upgrades',
    help='Set each to the RPC API version of the oldest service of that '
         'kind still running; clients then send only what it understands '
         '(newer calls fall back to older ones). Remove the caps once every '
         'service runs the new release.')

upgrade_opts = [
    cfg.StrOpt('conductor',
               help='Cap for messages to nova-moves-conductor (the '
                    'compute_task and compute_db APIs), e.g. 1.0.'),
    cfg.StrOpt('scheduler',
               help='Cap for messages to nova-moves-scheduler, e.g. 1.0.'),
    cfg.StrOpt('compute',
               help='Cap for messages to nova-moves-compute, e.g. 1.0.'),
]


def register_opts(conf):
    conf.register_group(upgrade_group)
    conf.register_opts(upgrade_opts, group=upgrade_group)


def list_opts():
    return {upgrade_group: upgrade_opts}
