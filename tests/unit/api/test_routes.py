"""The routing table (api/routes.py) and the body declarations
(@validation.schema): the app serves exactly the table, a method the
table lacks is a 405 naming the table's methods, handlers import only
leaves, and every declared body covers each microversion at most once."""
import ast
import os

import flask
import testtools

from nova_moves.api import microversion
from nova_moves.api import request as api_req
from nova_moves.api import routes
from nova_moves.api import server_actions
from nova_moves.api import validation
from nova_moves import conf
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}
API = os.path.join(os.path.dirname(routes.__file__))


def _handler_modules():
    modules = set()
    for table in (routes.ROUTES, routes.IDENTITY_ROUTES, routes.TEST_ROUTES):
        for methods in table.values():
            for _name, handler in methods.values():
                handler = getattr(handler, 'func', handler)  # partial
                modules.add(handler.__module__.rsplit('.', 1)[1])
    for handler in server_actions.ACTIONS.values():
        modules.add(handler.__module__.rsplit('.', 1)[1])
    return modules


def _api_imports(module):
    with open(os.path.join(API, module + '.py')) as source:
        tree = ast.parse(source.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and \
                node.module == 'nova_moves.api':
            names.update(alias.name for alias in node.names)
    return names


class TableTest(testtools.TestCase):

    def test_handlers_import_only_leaves(self):
        # server_actions is the second-level table: it gathers the action
        # modules' ACTIONS by design.
        handlers = _handler_modules()
        for module in sorted(handlers - {'server_actions'}):
            self.assertEqual(set(), _api_imports(module) & handlers, module)
        for leaf in ('request', 'validation', 'common', 'views', 'guards'):
            self.assertEqual(set(), _api_imports(leaf) & handlers, leaf)

    def test_operation_ids_are_unique(self):
        names = [name for table in (routes.ROUTES, routes.IDENTITY_ROUTES,
                                    routes.TEST_ROUTES)
                 for methods in table.values()
                 for name, _handler in methods.values()]
        self.assertEqual(len(names), len(set(names)))

    def test_declared_bodies_cover_each_version_once(self):
        handlers = [h for table in (routes.ROUTES, routes.TEST_ROUTES)
                    for methods in table.values()
                    for _name, h in methods.values()]
        handlers += list(server_actions.ACTIONS.values())
        for handler in handlers:
            declared = validation.schemas_of(handler)
            for minor in range(1, 101):
                version = microversion.APIVersion('2.%d' % minor)
                covering = [d for d in declared if d[0] <= version <= d[1]]
                self.assertLessEqual(len(covering), 1, (handler, version))

    def test_every_post_and_put_declares_its_body(self):
        """A schema (validated by the decorator itself), or a declared
        reason for none: a new POST or PUT route with neither fails."""
        missing = []
        for table in (routes.ROUTES, routes.IDENTITY_ROUTES,
                      routes.TEST_ROUTES):
            for path, methods in table.items():
                for method, (name, handler) in methods.items():
                    if method in ('POST', 'PUT') and not (
                            validation.schemas_of(handler) or
                            getattr(handler, 'body_unvalidated', None)):
                        missing.append('%s %s (%s)' % (method, path, name))
        missing += ['action %s' % name for name, handler in
                    server_actions.ACTIONS.items()
                    if not validation.schemas_of(handler)]
        self.assertEqual([], missing)

    def test_the_decorator_validates_by_itself(self):
        """A handler that never calls validation.body() is validated."""
        ran = []

        @validation.schema({'type': 'object', 'required': ['x'],
                            'additionalProperties': False,
                            'properties': {'x': {'type': 'integer'}}})
        def forgetful():
            ran.append(True)
            return 'ran'

        from nova_moves import exception
        app = flask.Flask(__name__)
        for data, ok in (('{"x": 1}', True), ('{"x": "a"}', False),
                         ('{"y": 1}', False)):
            with app.test_request_context(data=data,
                                          content_type='application/json'):
                flask.g.version = microversion.APIVersion('2.1')
                if ok:
                    self.assertEqual('ran', api_req.dispatch(forgetful))
                else:
                    self.assertRaises(exception.ValidationError,
                                      api_req.dispatch, forgetful)
        self.assertEqual([True], ran)

    def test_out_of_range_is_404(self):
        from nova_moves.api import live_migrate
        from nova_moves import exception
        self.assertRaises(exception.NotFound, validation.schema_for,
                          live_migrate.action, microversion.APIVersion('2.21'))


class ServedTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.api_on_database(self)

    def test_the_url_map_is_the_table(self):
        app = self.client.application
        served = {rule.endpoint: rule.methods - {'HEAD', 'OPTIONS'}
                  for rule in app.url_map.iter_rules()
                  if rule.endpoint != 'static'}
        table = routes.table(conf.CONF)
        self.assertEqual({path: set(methods)
                          for path, methods in table.items()}, served)

    def test_a_method_the_table_lacks_is_405_with_allow(self):
        response = self.client.patch('/v2.1/servers', headers=ADMIN)
        self.assertEqual(405, response.status_code)
        self.assertEqual(['GET', 'HEAD', 'OPTIONS', 'POST'], sorted(
            m.strip() for m in response.headers['Allow'].split(',')))
        self.assertEqual(405, response.get_json()['badMethod']['code'])
        response = self.client.delete('/v2.1/os-migrations', headers=ADMIN)
        self.assertEqual(405, response.status_code)
        self.assertEqual(['GET', 'HEAD', 'OPTIONS'], sorted(
            m.strip() for m in response.headers['Allow'].split(',')))

    def test_head_is_get_without_a_body(self):
        response = self.client.head('/v2.1/flavors', headers=ADMIN)
        self.assertEqual(200, response.status_code)
        self.assertEqual(b'', response.get_data())

    def test_project_id_prefix_is_dropped_for_every_collection(self):
        for path in ('/v2.1/admin/flavors', '/v2.1/admin/os-host-drains'):
            response = self.client.get(path, headers=ADMIN)
            self.assertEqual(200, response.status_code, path)

    def test_the_dispatched_handler_declares_the_body(self):
        response = self.client.post(
            '/v2.1/flavors', json={'flavor': {'name': 'x'}},
            headers=dict(ADMIN, **{'OpenStack-API-Version': 'compute 2.55'}))
        self.assertEqual(400, response.status_code)
        self.assertIn("'ram' is a required property",
                      response.get_json()['badRequest']['message'])
