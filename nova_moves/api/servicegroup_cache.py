"""The API's view of service liveness, built once per app."""
import flask

from nova_moves import servicegroup


def is_up(service):
    extensions = flask.current_app.extensions
    group = extensions.get('nova_moves.servicegroup')
    if group is None:
        group = servicegroup.ServiceGroup.for_process()
        extensions['nova_moves.servicegroup'] = group
    return group.is_up(service)
