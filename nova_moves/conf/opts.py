"""Entry points for oslo-config-generator."""
from oslo_config import cfg
from oslo_db import options as db_options

from nova_moves.conf import api
from nova_moves.conf import api_database
from nova_moves.conf import compute
from nova_moves.conf import conductor
from nova_moves.conf import coordination
from nova_moves.conf import database
from nova_moves.conf import image
from nova_moves.conf import notifications
from nova_moves.conf import qemu
from nova_moves.conf import quota
from nova_moves.conf import default
from nova_moves.conf import scheduler
from nova_moves.conf import upgrade_levels

_MODULES = (default, api, api_database, compute, conductor, coordination,
            database, image, notifications, qemu, quota, scheduler,
            upgrade_levels)


def list_opts():
    return [(group, opts) for module in _MODULES
            for group, opts in module.list_opts().items()]


def set_defaults(conf=None):
    if conf is None:
        # oslo-config-generator calls the oslo.config.opts.defaults entry
        # point with no argument and then prints the opts' own defaults.
        cfg.set_defaults(db_options.database_opts,
                         connection=database.DEFAULT_SQL_CONNECTION,
                         use_db_reconnect=True,
                         max_pool_size=database.MAX_POOL_SIZE)
        # The sample shows Nova's CORS header lists (oslo.middleware's
        # namespace is generated after this hook ran).
        from nova_moves.api import cors_defaults
        cors_defaults.set_defaults()
        from nova_moves.api import keystone_auth
        keystone_auth.set_defaults(cfg.CONF)
        return
    database.set_defaults(conf)
