"""The API's view of service liveness, built once per app."""
import flask

from nova_moves import liveness
from nova_moves import servicegroup


def _group():
    extensions = flask.current_app.extensions
    group = extensions.get('nova_moves.servicegroup')
    if group is None:
        group = servicegroup.ServiceGroup.for_process()
        extensions['nova_moves.servicegroup'] = group
    # Per worker process (a thread does not survive a fork).
    group.start()
    return group


def state(service):
    """up, down or unknown (nova_moves.liveness)."""
    return _group().state(service)


def is_up(service):
    return state(service) == liveness.UP
