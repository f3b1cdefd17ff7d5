from oslo_config import cfg

scheduler_group = cfg.OptGroup('scheduler', title='Scheduler options')

scheduler_opts = [
    cfg.IntOpt('max_attempts', default=3, min=1,
               help='Hosts tried for one build or resize: the selected host '
                    'plus alternates for rescheduling.'),
    cfg.ListOpt('enabled_filters',
                default=['ComputeFilter', 'AvailabilityZoneFilter',
                         'RequestedHostFilter', 'IgnoreHostsFilter',
                         'ServerGroupAntiAffinityFilter',
                         'ServerGroupAffinityFilter'],
                help='Filters the scheduler applies to allocation candidates '
                     'in this order. Also available, off by default as in '
                     'Nova: SameHostFilter and DifferentHostFilter (the '
                     'same_host and different_host scheduler hints).'),
    cfg.FloatOpt('ram_weight_multiplier', default=1.0,
                 help='Positive spreads servers over hosts by free RAM, '
                      'negative stacks them.'),
    cfg.IntOpt('host_subset_size', default=1, min=1,
               help='Pick the destination at random among the best N hosts, '
                    'to lower claim races between schedulers.'),
    cfg.IntOpt('discover_hosts_in_cells_interval', default=-1, min=-1,
               help='Seconds between two discoveries of new compute hosts '
                    'in the cells (Nova\'s option: what "nova-moves-manage '
                    'cell_v2 discover_hosts" does, run by the scheduler, '
                    'the first time at its start). Negative (the default): '
                    'no automatic discovery; 0: every 60 seconds. Enable '
                    'it on one scheduler only, or they collide mapping '
                    'the same host (logged, harmless).'),
]


def register_opts(conf):
    conf.register_group(scheduler_group)
    conf.register_opts(scheduler_opts, group=scheduler_group)


def list_opts():
    return {scheduler_group: scheduler_opts}
