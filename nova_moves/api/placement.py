"""GET /os-nova-moves-placement (admin): resource providers with their
inventories and usages, every consumer's allocations and its generation
(placement 1.28: bumped by every write of its allocations). nova_moves
keeps placement in its own database; this is how operators, the harness
and the tests look at it."""
import flask

from nova_moves.api import request as api_req
from nova_moves.db import api as db_api


def show():
    api_req.authorize('nova_moves:placement:show')
    return flask.jsonify({
        'resource_providers': db_api.provider_usages(),
        'allocations': db_api.allocations_all(),
        'consumer_generations': db_api.consumer_generations_all()})
