"""What a handler asks of the request it serves: its context, its
microversion, the app's RPC clients and policy enforcer, its JSON body.

A leaf: it imports no handler module, and handlers import it instead of
app.py, so the API's imports run one way: app -> routes -> handlers ->
leaves."""
import hashlib

import flask

from nova_moves.api import input_guard
from nova_moves import cells
from nova_moves import exception


def services():
    """The app's Services (app.py): conductor, scheduler, compute,
    enforcer and its remembered decisions (policy); inside
    cells.target, with the RPC clients of the targeted cell."""
    app_services = flask.current_app.extensions['nova_moves']
    cell = cells.current()
    return app_services if cell is None else app_services.for_cell(cell)


def context():
    return flask.g.context


def version():
    return flask.g.version


def authorize(rule, target=None):
    ctxt = context()
    target = target or {'project_id': ctxt.project_id}
    # A token of the wrong scope (e.g. system-scoped on a project rule)
    # is a 403, as in Nova (api/policy_cache.py: the enforcer's verdict,
    # remembered).
    # The policy files are looked at once per request (a rule edited
    # applies from the next request on).
    recheck = 'policy_checked' not in flask.g
    flask.g.policy_checked = True
    if not services().policy.allowed(rule, target, ctxt.to_policy_values(),
                                     recheck=recheck):
        raise exception.Forbidden(action=rule)


def can(rule, target=None):
    try:
        authorize(rule, target)
        return True
    except exception.Forbidden:
        return False


def host_id(project_id, host):
    if not host:
        return ''
    return hashlib.sha224((project_id + host).encode()).hexdigest()


# The media types werkzeug's form parser reads.
_FORM_TYPES = ('multipart/form-data', 'application/x-www-form-urlencoded')


def json_body():
    """The request's JSON body (None when empty), parsed once per request:
    the action dispatcher and the handler's schema both read it."""
    if 'json_body' in flask.g:
        return flask.g.json_body
    request = flask.request
    mimetype = request.mimetype
    # request.data: for a form's media type werkzeug's form parser reads
    # the body (and request.data is then empty); any other body it
    # leaves as it is, so it is read without building that parser.
    data = request.data if mimetype in _FORM_TYPES else request.get_data()
    if data and mimetype and not request.is_json:
        # Nova's answer to a body it cannot read: 415, naming the type.
        raise exception.UnsupportedMediaType(content_type=mimetype)
    flask.g.json_body = input_guard.parse_json(data) if data else None
    return flask.g.json_body


def handler():
    """The handler this request was dispatched to (routes, then the
    server action), whose @validation.schema declarations apply."""
    return flask.g.get('handler')


def dispatch(handler_, *args, **kwargs):
    flask.g.handler = handler_
    return handler_(*args, **kwargs)
