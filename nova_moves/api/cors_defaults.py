"""Nova's CORS defaults for oslo.middleware's [cors] options.

oslo.middleware's own defaults allow only the simple headers, so a
browser's preflight asking for X-Auth-Token or OpenStack-API-Version is
refused and nothing of ours is readable from script. An operator still
only sets ``[cors] allowed_origin``; these lists are Nova's (the header
names are the compatibility target)."""
from oslo_middleware import cors

ALLOW_HEADERS = ['X-Auth-Token',
                 'X-Openstack-Request-Id',
                 'X-Identity-Status',
                 'X-Roles',
                 'X-Service-Catalog',
                 'X-User-Id',
                 'X-Tenant-Id',
                 'X-OpenStack-Nova-API-Version',
                 'OpenStack-API-Version']
EXPOSE_HEADERS = ['X-Auth-Token',
                  'X-Openstack-Request-Id',
                  'X-Subject-Token',
                  'X-Service-Token',
                  'X-OpenStack-Nova-API-Version',
                  'OpenStack-API-Version']
ALLOW_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH']


def set_defaults():
    """Idempotent; changes the option defaults, not values already set
    in a config file."""
    cors.set_defaults(allow_headers=ALLOW_HEADERS,
                      expose_headers=EXPOSE_HEADERS,
                      allow_methods=ALLOW_METHODS)
