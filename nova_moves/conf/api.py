from oslo_config import cfg

api_group = cfg.OptGroup('api', title='Compute API options')

api_opts = [
    cfg.HostAddressOpt('listen', default='127.0.0.1',
                       help='Address the nova-moves-api server binds to. '
                            'With auth_strategy = noauth only a loopback '
                            'address is allowed (see '
                            'insecure_noauth_on_network).'),
    cfg.PortOpt('port', default=8774,
                help='Port the nova-moves-api server listens on.'),
    # The embedded server (nova_moves/wsgi/server.py and worker.py):
    # gunicorn's master, workers that read each request whole in an event
    # loop before a thread runs it.
    cfg.IntOpt('workers', min=1,
               help='API worker processes (default: the number of CPUs). '
                    'Each has its own database pool and RPC transport.'),
    cfg.IntOpt('threads', default=8, min=1,
               help='Requests one worker process runs at a time. A request '
                    'takes a thread only once its headers and body have '
                    'been read whole: slow or idle clients hold none.'),
    cfg.IntOpt('worker_timeout', default=120, min=0,
               help='A worker whose main loop stays silent this many '
                    'seconds is killed and replaced (0: never).'),
    cfg.IntOpt('keep_alive_timeout', default=5, min=0,
               help='Seconds an idle client connection (kept alive, or '
                    'opened without sending a request) stays open; 0 '
                    'turns keep-alive off.'),
    cfg.IntOpt('header_timeout', default=10, min=1,
               help='Seconds a client has to send a request line and all '
                    'its headers, counted from its connection\'s opening '
                    'or its previous response; the connection is closed '
                    'after that. The server keeps one deadline per '
                    'request: the smaller of this and keep_alive_timeout.'),
    cfg.IntOpt('body_timeout', default=30, min=1,
               help='Seconds a client has to send a request\'s whole body '
                    'once its headers are in; the connection is closed '
                    'after that.'),
    cfg.IntOpt('graceful_shutdown_timeout', default=60, min=0,
               help='On SIGTERM the API stops accepting connections and '
                    'lets in-flight requests finish for at most this many '
                    'seconds before it exits.'),
    cfg.IntOpt('max_connections', default=5000, min=1,
               help='Open client connections one worker holds at most '
                    '(idle, being read, or running). When full, the '
                    'connection that has sent the least of a request for '
                    'the longest (waiting for headers, oldest first, then '
                    'reading a body; never one with a request in flight) '
                    'is closed to make room for the newcomer. '
                    'nova-moves-api raises its open-file limit to the hard '
                    'limit at start to allow them.'),
    cfg.IntOpt('max_connections_per_source', default=0, min=0,
               help='Open connections one worker holds at most from one '
                    'client address; beyond, that address\'s connection '
                    'that has sent the least of a request for the longest '
                    'is closed (the newcomer when all are in flight). 0: '
                    'no limit (behind a load balancer or reverse proxy '
                    'every client shares its address). For deployments '
                    'where clients connect directly.'),
    cfg.StrOpt('auth_strategy', default='keystone',
               choices=[('keystone', 'keystonemiddleware auth_token '
                         'validates the X-Auth-Token with Keystone (the '
                         '[keystone_authtoken] section); the role "admin" '
                         'is admin'),
                        ('noauth', 'X-Auth-Token "user:project" is trusted '
                         'as given; the user "admin" is admin. For the '
                         'quickstart and tests only: the API then binds '
                         'to loopback only and refuses every request whose '
                         'connection is not loopback'),
                        ('noauth2', 'Deprecated alias of noauth')],
               help='How API requests are authenticated.'),
    cfg.BoolOpt('insecure_noauth_on_network', default=False,
                help='Let auth_strategy = noauth listen on, and serve '
                     'requests from, a non-loopback address (logged as a '
                     'warning at start). Anyone who can reach the port is '
                     'then admin (the token "admin:x"). Only for an '
                     'isolated lab network; never on a shared one.'),
    cfg.ListOpt('noauth_trusted_proxies', default=[],
                help='With auth_strategy = noauth: addresses of reverse '
                     'proxies whose forwarded requests (Forwarded, '
                     'X-Forwarded-For or X-Real-IP headers) are served, '
                     'when the client they name is loopback too. A request '
                     'carrying such a header from any other peer is '
                     'refused (403): a proxy on the same host would '
                     'otherwise make every client it forwards admin.'),
    cfg.StrOpt('link_prefix',
               help='Base URL of the links in API responses (e.g. '
                    'https://compute.example.com:8774) when the API is '
                    'behind a proxy. Unset: the URL the request came to, '
                    'i.e. its Host header (as Nova\'s compute_link_prefix), '
                    'or X-Forwarded-Host/Proto with [oslo_middleware] '
                    'enable_proxy_headers_parsing. Set it wherever clients '
                    'can send any Host they like.'),
    cfg.IntOpt('max_limit', default=1000, min=1,
               help='Most items one list request returns.'),
    cfg.BoolOpt('instance_list_per_project_cells', default=False,
                help='Nova\'s option. A cells v2 API lists a project\'s '
                     'servers from only the cells where the project has '
                     'servers (by their instance mappings, one more read of '
                     'the API database) rather than from every cell. An '
                     'admin\'s all_tenants list without a project still '
                     'reads every cell.'),
    cfg.BoolOpt('list_records_by_skipping_down_cells', default=True,
                help='Nova\'s option. A cells v2 API whose list of servers, '
                     'services, hypervisors or migrations finds a cell '
                     'that does not answer (its database down, or slower '
                     'than the 60 s cell timeout): True leaves that cell\'s '
                     'records out and answers with the others\'; False '
                     'answers 500. From microversion 2.69 the servers and '
                     'services of such a cell are listed as partial records '
                     '(status UNKNOWN) whatever this says.'),
    cfg.BoolOpt('enable_test_hooks', default=False,
                help='Serve the admin-only /nova-moves-test endpoints that '
                     'inject failures into compute agents (nova-moves-api), '
                     'and the fault-injection RPC those call '
                     '(nova-moves-compute: set it in the configuration of '
                     'both). Never enable in production.'),
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
