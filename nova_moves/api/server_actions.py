"""POST /servers/{id}/action: one handler per action name. Each move
operation's module exports ACTIONS = {name: handler(server_id, value)}."""
from nova_moves.api import common
from nova_moves.api import evacuate
from nova_moves.api import live_migrate
from nova_moves.api import migrate
from nova_moves.api import power
from nova_moves import exception

ACTIONS = {}
for _module in (migrate, live_migrate, evacuate, power):
    ACTIONS.update(_module.ACTIONS)


def action(server_id):
    body = common.json_body()
    if not isinstance(body, dict) or len(body) != 1:
        raise exception.ValidationError(
            detail='The action body must be an object with exactly one '
                   'action name as its key.')
    name, value = next(iter(body.items()))
    handler = ACTIONS.get(name)
    if handler is None:
        raise exception.ValidationError(
            detail='There is no such action: %s' % name)
    return handler(server_id, value)


def register(app):
    app.add_url_rule('/v2.1/servers/<server_id>/action', 'server_action',
                     action, methods=['POST'])
