"""Every resource of the API, in one place."""
from nova_moves.api import aggregates
from nova_moves.api import availability_zones
from nova_moves.api import evacuate
from nova_moves.api import extensions
from nova_moves.api import flavors
from nova_moves.api import host_drains
from nova_moves.api import hypervisors
from nova_moves.api import identity
from nova_moves.api import images
from nova_moves.api import instance_actions
from nova_moves.api import limits
from nova_moves.api import live_migrate
from nova_moves.api import migrate
from nova_moves.api import migrations
from nova_moves.api import openapi
from nova_moves.api import placement
from nova_moves.api import quota_classes
from nova_moves.api import quotas
from nova_moves.api import server_actions
from nova_moves.api import server_groups
from nova_moves.api import server_metadata
from nova_moves.api import servers
from nova_moves.api import services
from nova_moves.api import test_hooks
from nova_moves.api import versions

_MODULES = (versions, flavors, servers, server_actions, server_metadata,
            instance_actions, services, hypervisors, placement, test_hooks,
            migrations, migrate, live_migrate, evacuate, host_drains,
            identity, images, aggregates, quotas, quota_classes, limits,
            availability_zones, extensions, server_groups, openapi)


def register(app):
    for module in _MODULES:
        if hasattr(module, 'register'):
            module.register(app)
