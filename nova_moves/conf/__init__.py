"""All of nova_moves' options, registered on the global CONF.

oslo.messaging registers some options only on ``cfg.CONF``, so every process
uses the global object rather than a private ConfigOpts.
"""
from oslo_config import cfg

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

CONF = cfg.CONF

default.register_opts(CONF)
api.register_opts(CONF)
api_database.register_opts(CONF)
compute.register_opts(CONF)
conductor.register_opts(CONF)
coordination.register_opts(CONF)
database.register_opts(CONF)
image.register_opts(CONF)
notifications.register_opts(CONF)
qemu.register_opts(CONF)
quota.register_opts(CONF)
scheduler.register_opts(CONF)
upgrade_levels.register_opts(CONF)
