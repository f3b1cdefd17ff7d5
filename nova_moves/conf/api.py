from oslo_config import cfg

api_group = cfg.OptGroup('api', title='Compute API options')

api_opts = [
    cfg.HostAddressOpt('listen', default='0.0.0.0',
                       help='Address the nova-moves-api server binds to.'),
    cfg.PortOpt('port', default=8774,
                help='Port the nova-moves-api server listens on.'),
    cfg.StrOpt('auth_strategy', default='noauth2',
               choices=[('noauth2', 'X-Auth-Token "user:project"; the user '
                         '"admin" gets the admin role')],
               help='How API requests are authenticated.'),
    cfg.IntOpt('max_limit', default=1000, min=1,
               help='Most items one list request returns.'),
    cfg.BoolOpt('enable_test_hooks', default=False,
                help='Serve the admin-only /nova-moves-test endpoints that '
                     'inject failures into compute agents. Never enable in '
                     'production.'),
    cfg.ListOpt('image_names', default=['fake'],
                help='Names of the images the fake hypervisor can boot. They '
                     'are served, Glance v2 style, at /v2.1/images so that '
                     'clients resolving --image NAME through the image '
                     'service find them; any imageRef is accepted at boot.'),
]


def register_opts(conf):
    conf.register_group(api_group)
    conf.register_opts(api_opts, group=api_group)


def list_opts():
    return {api_group: api_opts}
