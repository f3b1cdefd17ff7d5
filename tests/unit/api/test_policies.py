"""The rule table (api/policies.py): every rule the API checks is
registered, with Nova's names, check strings and scope; the personas get
what Nova gives them; legacy rules only through enforce_new_defaults."""
import glob
import os
import re

from oslo_config import cfg
from oslo_policy import policy as oslo_policy
import testtools

from nova_moves.api import policies
from nova_moves import context as nm_context

API_DIR = os.path.join(os.path.dirname(policies.__file__))
# A whole rule name in quotes (a prefix ending in ':' is built on).
_RULE_LITERAL = re.compile(r"'((?:os_compute_api|compute|nova_moves):"
                           r"[A-Za-z0-9_:\-]*[A-Za-z0-9_\-])'")

READER = 'rule:project_reader_or_admin'
MEMBER = 'rule:project_member_or_admin'
MANAGER = 'rule:project_manager_or_admin'
ADMIN = 'rule:context_is_admin'
S = 'os_compute_api:servers:'
# Nova 32.0.0's defaults (nova/policies/*.py) for what the API serves and
# what the lifecycle actions will check.
NOVA = {
    'context_is_admin': 'role:admin',
    'project_manager_api': 'role:manager and project_id:%(project_id)s',
    'project_member_api': 'role:member and project_id:%(project_id)s',
    'project_reader_api': 'role:reader and project_id:%(project_id)s',
    'project_manager_or_admin':
        'rule:project_manager_api or rule:context_is_admin',
    'project_member_or_admin':
        'rule:project_member_api or rule:context_is_admin',
    'project_reader_or_admin':
        'rule:project_reader_api or rule:context_is_admin',
    S + 'index': READER, S + 'detail': READER, S + 'show': READER,
    S + 'index:get_all_tenants': ADMIN, S + 'detail:get_all_tenants': ADMIN,
    S + 'create': MEMBER, S + 'create:forced_host': ADMIN,
    S + 'delete': MEMBER, S + 'update': MEMBER, S + 'start': MEMBER,
    S + 'stop': MEMBER, S + 'resize': MEMBER, S + 'confirm_resize': MEMBER,
    S + 'revert_resize': MEMBER, S + 'reboot': MEMBER, S + 'rebuild': MEMBER,
    'compute:servers:resize:cross_cell': '!',
    'os_compute_api:os-extended-server-attributes': ADMIN,
    'os_compute_api:os-migrate-server:migrate': MANAGER,
    'os_compute_api:os-migrate-server:migrate:host': ADMIN,
    'os_compute_api:os-migrate-server:migrate_live': MANAGER,
    'os_compute_api:os-migrate-server:migrate_live:host': ADMIN,
    'os_compute_api:os-evacuate': ADMIN,
    'os_compute_api:os-migrations:index': MANAGER,
    'os_compute_api:os-migrations:index:all_projects': ADMIN,
    'os_compute_api:os-migrations:index:host': ADMIN,
    S + 'migrations:index': MANAGER, S + 'migrations:index:host': ADMIN,
    S + 'migrations:show': ADMIN, S + 'migrations:force_complete': MANAGER,
    S + 'migrations:delete': MANAGER,
    'os_compute_api:os-instance-actions:list': READER,
    'os_compute_api:os-instance-actions:show': READER,
    'os_compute_api:os-instance-actions:events': ADMIN,
    'os_compute_api:os-instance-actions:events:details': ADMIN,
    'os_compute_api:os-services:list': ADMIN,
    'os_compute_api:os-services:update': ADMIN,
    'os_compute_api:os-services:delete': ADMIN,
    'os_compute_api:os-hypervisors:list': ADMIN,
    'os_compute_api:os-hypervisors:list-detail': ADMIN,
    'os_compute_api:os-hypervisors:show': ADMIN,
    'os_compute_api:os-hypervisors:statistics': ADMIN,
    'os_compute_api:os-hypervisors:uptime': ADMIN,
    'os_compute_api:os-aggregates:index': ADMIN,
    'os_compute_api:os-availability-zone:list': '@',
    'os_compute_api:os-availability-zone:detail': ADMIN,
    'os_compute_api:limits': '@', 'os_compute_api:limits:other_project': ADMIN,
    'os_compute_api:os-flavor-manage:create': ADMIN,
    'os_compute_api:os-flavor-manage:delete': ADMIN,
    'os_compute_api:os-flavor-extra-specs:index': READER,
    'os_compute_api:os-quota-sets:show': READER,
    'os_compute_api:os-quota-sets:detail': READER,
    'os_compute_api:os-quota-sets:defaults': '@',
    'os_compute_api:os-quota-sets:update': ADMIN,
    'os_compute_api:os-quota-sets:delete': ADMIN,
    'os_compute_api:extensions': '@',
    # The lifecycle actions, registered ahead of their routes.
    'os_compute_api:os-pause-server:pause': MEMBER,
    'os_compute_api:os-pause-server:unpause': MEMBER,
    'os_compute_api:os-suspend-server:suspend': MEMBER,
    'os_compute_api:os-suspend-server:resume': MEMBER,
    'os_compute_api:os-lock-server:lock': MEMBER,
    'os_compute_api:os-lock-server:unlock': MEMBER,
    'os_compute_api:os-lock-server:unlock:unlock_override': ADMIN,
    'os_compute_api:os-admin-actions:reset_state': ADMIN,
    'os_compute_api:os-shelve:shelve': MEMBER,
    'os_compute_api:os-rescue': MEMBER, 'os_compute_api:os-unrescue': MEMBER,
    'os_compute_api:os-shelve:unshelve': MEMBER,
    'os_compute_api:os-shelve:shelve_offload': ADMIN,
    'os_compute_api:os-shelve:unshelve_to_host': ADMIN,
    'os_compute_api:server-metadata:index': READER,
    'os_compute_api:server-metadata:show': READER,
    'os_compute_api:server-metadata:create': MEMBER,
    'os_compute_api:server-metadata:update': MEMBER,
    'os_compute_api:server-metadata:update_all': MEMBER,
    'os_compute_api:server-metadata:delete': MEMBER,
    'os_compute_api:os-server-groups:create': MEMBER,
    'os_compute_api:os-server-groups:delete': MEMBER,
    'os_compute_api:os-server-groups:index': READER,
    'os_compute_api:os-server-groups:index:all_projects': ADMIN,
    'os_compute_api:os-server-groups:show': READER,
    'os_compute_api:os-quota-class-sets:show': ADMIN,
    'os_compute_api:os-quota-class-sets:update': ADMIN,
    'os_compute_api:os-console-output': MEMBER,
    'os_compute_api:os-server-diagnostics': ADMIN,
    # Nova's own compute APIs of issue 40.
    'os_compute_api:ips:index': READER, 'os_compute_api:ips:show': READER,
    'os_compute_api:os-hosts:list': ADMIN,
    'os_compute_api:os-hosts:show': ADMIN,
    'os_compute_api:os-hosts:update': ADMIN,
    'os_compute_api:os-hosts:reboot': ADMIN,
    'os_compute_api:os-hosts:shutdown': ADMIN,
    'os_compute_api:os-hosts:start': ADMIN,
    'os_compute_api:os-simple-tenant-usage:list': ADMIN,
    'os_compute_api:os-simple-tenant-usage:show': READER,
    'os_compute_api:os-instance-usage-audit-log:list': ADMIN,
    'os_compute_api:os-instance-usage-audit-log:show': ADMIN,
    'os_compute_api:os-server-password:show': READER,
    'os_compute_api:os-server-password:clear': MEMBER,
    'os_compute_api:os-server-external-events:create':
        'rule:service_or_admin',
}


def rules_checked_by_the_api():
    names = set()
    for path in glob.glob(os.path.join(API_DIR, '*.py')):
        if path.endswith('policies.py'):
            continue
        with open(path) as f:
            names.update(_RULE_LITERAL.findall(f.read()))
    return names


def persona(roles, project='alpha', system=False):
    return nm_context.RequestContext(
        user_id='u', project_id=None if system else project, roles=roles,
        is_admin='admin' in roles, system_scope='all' if system else None)


# Keystone's implied roles: admin -> manager -> member -> reader.
PERSONAS = {
    'admin': persona(['admin', 'manager', 'member', 'reader'], 'admin'),
    'manager': persona(['manager', 'member', 'reader']),
    'member': persona(['member', 'reader']),
    'reader': persona(['reader']),
    'observer': persona(['observer']),
    'other_member': persona(['member', 'reader'], 'beta'),
    'system_admin': persona(['admin', 'manager', 'member', 'reader'],
                            system=True),
    'service': persona(['service'], 'service'),
}


class RuleTableTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = cfg.ConfigOpts()
        self.conf([], default_config_files=[])
        self.enforcer = policies._build(self.conf)
        self.enforcer.load_rules()
        self.registered = {r.name: r for r in policies.list_rules()}

    def test_every_rule_the_api_checks_is_registered(self):
        checked = rules_checked_by_the_api()
        self.assertGreater(len(checked), 40)
        self.assertEqual(set(), checked - set(self.registered))

    def test_check_strings_are_novas(self):
        for name, check in NOVA.items():
            self.assertIn(name, self.registered)
            self.assertEqual(check, self.registered[name].check_str, name)

    def test_every_api_rule_is_project_scoped_and_documented(self):
        for name, rule in self.registered.items():
            if isinstance(rule, oslo_policy.DocumentedRuleDefault):
                self.assertEqual(['project'], rule.scope_types, name)
                self.assertTrue(rule.operations, name)
        documented = [r for r in self.registered.values()
                      if isinstance(r, oslo_policy.DocumentedRuleDefault)]
        self.assertGreater(len(documented), 90)

    def test_new_defaults_are_on_by_default(self):
        self.assertTrue(self.conf.oslo_policy.enforce_new_defaults)
        if 'enforce_scope' in self.conf.oslo_policy:
            self.assertTrue(self.conf.oslo_policy.enforce_scope)

    def allowed(self, enforcer, rule, who, project='alpha'):
        try:
            return enforcer.authorize(rule, {'project_id': project},
                                      PERSONAS[who], do_raise=True)
        except (oslo_policy.PolicyNotAuthorized, oslo_policy.InvalidScope):
            return False

    def who_may(self, rule, enforcer=None):
        return {who for who in PERSONAS
                if self.allowed(enforcer or self.enforcer, rule, who)}

    def test_personas(self):
        self.assertEqual({'admin', 'manager', 'member', 'reader'},
                         self.who_may(S + 'show'))
        self.assertEqual({'admin', 'manager', 'member'},
                         self.who_may(S + 'create'))
        self.assertEqual({'admin', 'manager', 'member'},
                         self.who_may(S + 'resize'))
        self.assertEqual({'admin', 'manager'}, self.who_may(
            'os_compute_api:os-migrate-server:migrate'))
        self.assertEqual({'admin', 'manager'}, self.who_may(
            'os_compute_api:os-migrate-server:migrate_live'))
        for rule in ('os_compute_api:os-migrate-server:migrate_live:host',
                     'os_compute_api:os-evacuate',
                     'os_compute_api:os-services:list',
                     'os_compute_api:os-admin-actions:reset_state'):
            self.assertEqual({'admin'}, self.who_may(rule), rule)
        # '@' still needs a project-scoped token.
        self.assertEqual(set(PERSONAS) - {'system_admin'},
                         self.who_may('os_compute_api:limits'))
        self.assertEqual(set(), self.who_may(
            'compute:servers:resize:cross_cell'))

    def test_external_events_are_the_service_users_or_admins(self):
        self.assertEqual({'admin', 'service'}, self.who_may(
            'os_compute_api:os-server-external-events:create'))

    def legacy_enforcer(self):
        conf = cfg.ConfigOpts()
        conf([], default_config_files=[])
        enforcer = policies._build(conf)
        conf.set_override('enforce_new_defaults', False, 'oslo_policy')
        enforcer.load_rules()
        return enforcer

    def test_legacy_rules_only_when_the_operator_asks(self):
        legacy = self.legacy_enforcer()
        # Any role in the project owns it again, as before.
        self.assertIn('observer', self.who_may(S + 'create', legacy))
        self.assertIn('reader', self.who_may(S + 'delete', legacy))
        self.assertNotIn('other_member', self.who_may(S + 'delete', legacy))
        # Admin-only stays admin-only.
        self.assertEqual({'admin'}, self.who_may(
            'os_compute_api:os-evacuate', legacy))
        self.assertNotIn('observer', self.who_may(S + 'create'))
        self.assertNotIn('reader', self.who_may(S + 'delete'))

    def test_noauth_roles_pass_the_new_defaults(self):
        from nova_moves.api import auth
        for token, admin in (('admin:p', True), ('alice:p', False)):
            values = auth._noauth({'X-Auth-Token': token})
            ctxt = nm_context.RequestContext(**values)
            self.assertTrue(self.enforcer.authorize(
                S + 'create', {'project_id': 'p'}, ctxt))
            self.assertEqual(admin, self.enforcer.authorize(
                'os_compute_api:os-evacuate', {'project_id': 'p'}, ctxt))
