from oslo_config import cfg

coordination_group = cfg.OptGroup('coordination', title='tooz coordination')

coordination_opts = [
    cfg.StrOpt('backend_url', default='file://$state_path/coordination',
               help='tooz backend for locks and, on redis://, etcd3+http:// '
                    'or zookeeper://, for service group membership. The '
                    'file:// default serves a single node.'),
]


def register_opts(conf):
    conf.register_group(coordination_group)
    conf.register_opts(coordination_opts, group=coordination_group)


def list_opts():
    return {coordination_group: coordination_opts}
