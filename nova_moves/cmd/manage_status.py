"""nova-moves-manage status check, on oslo.upgradecheck.

Checks the database schemas (the cell's and the cells v2 API's) are at
head, the RabbitMQ of ``transport_url``
accepts a connection (short timeout), the services are up and the API's
authentication is configured. Exit codes
are oslo.upgradecheck's: 0 success, 1 warning, 2 failure (the worst
result wins).
"""
from oslo_upgradecheck import upgradecheck

from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves.db import api_migration
from nova_moves.db import api_session
from nova_moves.db import migration

CONF = conf.CONF
HELP = 'Upgrade-check style health report'

SUCCESS = upgradecheck.Code.SUCCESS
WARNING = upgradecheck.Code.WARNING
FAILURE = upgradecheck.Code.FAILURE
REQUIRED_BINARIES = ('nova-moves-conductor', 'nova-moves-scheduler',
                     'nova-moves-compute')


def check_database():
    try:
        current = migration.db_version()
    except Exception as exc:
        return FAILURE, 'Cannot read the schema version: %s' % exc
    head = migration.head_version()
    if current != head:
        return FAILURE, ('Schema at %s, head is %s: run nova-moves-manage '
                         'db sync.' % (current, head))
    return check_api_database('Schema at head (%s).' % head)


def check_api_database(cell_result):
    """The cells v2 API schema too, in the same row: in a one-cell
    deployment it is in the same database and ``db sync`` syncs both."""
    command = 'api_db sync' if api_session.separate() else 'db sync'
    try:
        current = api_migration.db_version()
    except Exception as exc:
        return FAILURE, '%s Cannot read the API schema version: %s' % (
            cell_result, exc)
    head = api_migration.head_version()
    if current != head:
        return FAILURE, ('%s API schema at %s, head is %s: run '
                         'nova-moves-manage %s.' % (cell_result, current,
                                                    head, command))
    return SUCCESS, '%s API schema at head (%s).' % (cell_result, head)


def check_rabbitmq(timeout=3.0):
    from urllib import parse

    import kombu
    import oslo_messaging as messaging
    from nova_moves import broker_tls
    from nova_moves import rpc
    try:
        rpc.get_transport()  # registers [DEFAULT] transport_url; connects not
    except broker_tls.BrokerConfigError as exc:
        return FAILURE, str(exc)
    url = messaging.TransportURL.parse(CONF, CONF.transport_url)
    if url.transport not in ('rabbit', 'amqp', 'kombu'):
        return WARNING, 'Transport %s is not RabbitMQ; not checked.' % (
            url.transport)
    failures = []
    for host in url.hosts or [None]:
        hostname = host.hostname if host else 'localhost'
        # As oslo.messaging's driver connects: quoted credentials, its
        # default port, and [oslo_messaging_rabbit]'s TLS options.
        amqp = 'amqp://%s:%s@%s:%s/%s' % (
            parse.quote(host.username if host and host.username
                        else 'guest'),
            parse.quote(host.password if host and host.password
                        else 'guest'),
            hostname, (host.port if host else None) or 5672,
            url.virtual_host or '')
        connection = kombu.Connection(
            amqp, connect_timeout=timeout,
            ssl=broker_tls.kombu_ssl(hostname if len(url.hosts) <= 1
                                     else None),
            transport_options={'max_retries': 0})
        try:
            connection.ensure_connection(max_retries=1, timeout=timeout)
            return SUCCESS, 'Connected to %s:%s (vhost %r%s).' % (
                connection.hostname, connection.port, url.virtual_host or '/',
                ', TLS' if CONF.oslo_messaging_rabbit.ssl else '')
        except Exception as exc:
            found = broker_tls.hint(str(exc))
            failures.append('%s: %s%s' % (
                hostname, exc, ' (%s)' % found if found else ''))
        finally:
            connection.release()
    return FAILURE, 'RabbitMQ unreachable: %s' % '; '.join(failures)


def check_services():
    try:
        services = db_api.service_get_all()
    except Exception as exc:
        return FAILURE, 'Cannot list services: %s' % exc
    down = ['%s on %s' % (s['binary'], s['host']) for s in services
            if s['forced_down'] or not db_api.service_is_up(s)]
    missing = [binary for binary in REQUIRED_BINARIES
               if not any(s['binary'] == binary and not s['forced_down']
                          and db_api.service_is_up(s) for s in services)]
    if missing:
        return FAILURE, 'No live %s.%s' % (', '.join(missing), (
            ' Down: %s.' % ', '.join(down)) if down else '')
    if down:
        return WARNING, 'Down: %s.' % ', '.join(down)
    return SUCCESS, '%d services up.' % len(services)


def check_api_auth():
    from nova_moves.api import keystone_auth
    problem = keystone_auth.config_problem(CONF)
    if problem:
        return FAILURE, problem
    return SUCCESS, '[api] auth_strategy = %s is configured.' % (
        CONF.api.auth_strategy)


def _result(fn):
    def check(_self):
        return upgradecheck.Result(*fn())
    return check


class Checks(upgradecheck.UpgradeCommands):
    _upgrade_checks = (('Database schema', _result(check_database)),
                       ('RabbitMQ', _result(check_rabbitmq)),
                       ('Services', _result(check_services)),
                       ('API authentication', _result(check_api_auth)))

    def _get_details(self, result):
        # Unwrapped: a host name in the details stays greppable.
        return result.details


def check(args):
    return int(Checks().check())


def setup(parser):
    sub = parser.add_subparsers(dest='action')
    sub.required = True
    sub.add_parser('check', help='Check the schema, the broker, the '
                   'services and the API authentication').set_defaults(
                       func=check)
