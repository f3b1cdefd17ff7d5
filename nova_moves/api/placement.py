"""GET /os-nova-moves-placement (admin): resource providers with their
inventories and usages, every consumer's allocations and its generation
(placement 1.28: bumped by every write of its allocations). nova_moves
keeps placement in its own database; this is how operators, the harness
and the tests look at it."""
import flask

from nova_moves.api import cell_lists
from nova_moves.api import request as api_req
from nova_moves.db import api as db_api


def _placement():
    return [{'resource_providers': db_api.provider_usages(),
             'allocations': db_api.allocations_all(),
             'consumer_generations': db_api.consumer_generations_all()}]


def show():
    """Each cell keeps the placement of its own hosts: every cell's,
    merged (api/cell_lists; one cell: its own database alone)."""
    api_req.authorize('nova_moves:placement:show')
    body = {'resource_providers': {}, 'allocations': {},
            'consumer_generations': {}}
    for _cell, part in cell_lists.gather_or_skip(_placement):
        for key, values in part.items():
            body[key].update(values)
    return flask.jsonify(body)
