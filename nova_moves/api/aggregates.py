"""GET /v2.1/os-aggregates: Nova's host aggregates. nova_moves has none
(its aggregates are placement aggregates linking sharing providers, seen
at /os-nova-moves-placement), so the list is empty. python-openstackclient
asks for it in ``hypervisor show`` to print the host's aggregates."""
import flask

from nova_moves.api import request as api_req


def index():
    # The list is empty, so the hypervisor rule guards it (admin only).
    api_req.authorize('os_compute_api:os-aggregates:index')
    return flask.jsonify({'aggregates': []})
