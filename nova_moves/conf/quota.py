from oslo_config import cfg

quota_group = cfg.OptGroup('quota', title='Quota options',
                           help="Per-project limits, Nova's defaults. -1 "
                                "means unlimited; os-quota-sets overrides "
                                "them per project.")

quota_opts = [
    cfg.IntOpt('instances', default=10, min=-1,
               help='Servers a project may have.'),
    cfg.IntOpt('cores', default=20, min=-1,
               help='VCPUs of all servers of a project together.'),
    cfg.IntOpt('ram', default=51200, min=-1,
               help='MiB of RAM of all servers of a project together.'),
]


def register_opts(conf):
    conf.register_group(quota_group)
    conf.register_opts(quota_opts, group=quota_group)


def list_opts():
    return {quota_group: quota_opts}
