"""GET /servers/{id}/ips[/{network_label}] (Nova's ips): the server's
addresses by network label, ``{"version": 4|6, "addr": ...}`` each.

The addresses are the ones the server shows (``addresses`` of GET
/servers/{id}); nova_moves has no network service behind its servers,
so that is ``{}`` and every network label is a 404 with Nova's message.
"""
import flask

from nova_moves.api import common
from nova_moves.api import views
from nova_moves import exception


def index(server_id):
    instance = common.get_instance(server_id, 'os_compute_api:ips:index')
    return flask.jsonify({'addresses': views.addresses(instance)})


def show(server_id, network_label):
    instance = common.get_instance(server_id, 'os_compute_api:ips:show')
    networks = views.addresses(instance)
    if network_label not in networks:
        raise exception.NotFound(
            'Instance is not a member of specified network')
    return flask.jsonify({network_label: networks[network_label]})
