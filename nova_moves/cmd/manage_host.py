"""nova-moves-manage host: the operator's path for a failed host.

  host servers HOST            list the servers on HOST
  host evacuate HOST           evacuate every server of HOST, at most
                               --concurrency at a time, and report each
  host drain HOST              ask the conductors to empty HOST
                               (os-host-drains); --wait shows progress

Authentication is the openstack client's (nova_moves.cliauth):
--os-cloud, OS_* or --os-* options, the endpoint from the catalog;
--os-auth-type none for the API's loopback noauth mode.

Everything goes through the compute API (like an operator's script would),
so the API's checks apply: the source must be down or forced down
(--force-down does that first), a --target host is verified by the
scheduler (microversion 2.68, no force).
"""
import concurrent.futures
import time

from nova_moves import cliauth
from nova_moves.cmd import tables
from nova_moves import conf

CONF = conf.CONF
COMPUTE_BINARY = 'nova-moves-compute'
EVACUATE_VERSION = '2.68'
SETTLED = ('ACTIVE', 'SHUTOFF', 'ERROR')


def _local_endpoint():
    """This node's API from [api] listen/port: the noauth default only
    (behind Apache or a load balancer the catalog knows better)."""
    host = CONF.api.listen
    if host in ('0.0.0.0', '::', ''):
        host = '127.0.0.1'
    elif ':' in host:
        host = '[%s]' % host
    return 'http://%s:%d/v2.1' % (host, CONF.api.port)


def _client(args):
    try:
        return cliauth.client_for(args, default_endpoint=_local_endpoint(),
                                  version='2.47')
    except cliauth.AuthError as exc:
        raise SystemExit('nova-moves-manage host: %s' % exc)


def servers_on(client, host):
    """Every server (all projects) whose host is ``host``, oldest first."""
    servers, marker = [], None
    while True:
        params = {'all_tenants': '1', 'host': host}
        if marker:
            params['marker'] = marker
        page = client.get('/servers/detail', params=params, version='2.47',
                          expect=200).json()['servers']
        page = [s for s in page if s.get('OS-EXT-SRV-ATTR:host') == host]
        if not page:
            break
        servers.extend(page)
        marker = page[-1]['id']
    return list(reversed(servers))


def _force_down(client, host):
    services = client.get('/os-services', version='2.53',
                          params={'host': host, 'binary': COMPUTE_BINARY},
                          expect=200).json()['services']
    if not services:
        raise SystemExit('No %s service on host %s' % (COMPUTE_BINARY, host))
    client.put('/os-services/%s' % services[0]['id'],
               {'forced_down': True}, version='2.53', expect=200)


def evacuate_one(client, server, source, target=None, timeout=300):
    """Evacuate one server and wait for it to settle: (ok, text)."""
    body = {'host': target} if target else {}
    started = time.monotonic()
    response = client.action(server['id'], {'evacuate': body},
                             version=EVACUATE_VERSION)
    if response.status_code != 200:
        try:
            fault = next(iter(response.json().values()))['message']
        except (ValueError, StopIteration, KeyError, TypeError,
                AttributeError):
            fault = response.text[:200]
        return False, 'refused (%d): %s' % (response.status_code, fault)
    try:
        shown = client.wait_for_status(server['id'], SETTLED,
                                       timeout=timeout)
    except TimeoutError:
        return False, 'did not settle within %ss' % timeout
    took = time.monotonic() - started
    host = shown.get('OS-EXT-SRV-ATTR:host')
    if shown['status'] == 'ERROR' or host == source:
        fault = (shown.get('fault') or {}).get('message', 'unknown error')
        return False, 'failed: %s (%s)' % (fault, shown['status'])
    return True, 'evacuated to %s, %s in %.1fs' % (host, shown['status'],
                                                   took)


def evacuate_host(client, host, target=None, concurrency=4, timeout=300,
                  out=print):
    """Evacuate every server of ``host``; returns the number that failed."""
    servers = servers_on(client, host)
    if not servers:
        out('No servers on %s' % host)
        return 0
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(
            max_workers=max(1, concurrency)) as pool:
        futures = {pool.submit(evacuate_one, client, s, host, target,
                               timeout): s for s in servers}
        for future in concurrent.futures.as_completed(futures):
            server = futures[future]
            try:
                ok, text = future.result()
            except Exception as exc:
                ok, text = False, 'error: %s' % exc
            failed += 0 if ok else 1
            out('%s %-20s %s %s' % (server['id'], server['name'][:20],
                                    'OK  ' if ok else 'FAIL', text))
    out('%d of %d servers evacuated from %s' % (len(servers) - failed,
                                                len(servers), host))
    return failed


def _servers(args):
    client = _client(args)
    servers = servers_on(client, args.compute_host)
    print(tables.render(('ID', 'Name', 'Status', 'Task state'), [
        (server['id'], server['name'], server['status'],
         server.get('OS-EXT-STS:task_state')) for server in servers]))
    return 0


def _evacuate(args):
    client = _client(args)
    if args.force_down:
        _force_down(client, args.compute_host)
    failed = evacuate_host(client, args.compute_host, target=args.target,
                           concurrency=args.concurrency,
                           timeout=args.timeout)
    return 1 if failed else 0


def _drain(args):
    from nova_moves.cmd import manage_drain
    return manage_drain.drain(_client(args), args)


def _common(parser):
    parser.add_argument('compute_host', metavar='HOST',
                        help='The failed compute host')
    cliauth.add_arguments(parser, endpoint_help=(
        'compute endpoint, e.g. http://127.0.0.1:8774/v2.1 (default: the '
        'catalog\'s; with --os-auth-type none: [api] listen/port)'))


def setup(parser):
    sub = parser.add_subparsers(dest='action')
    sub.required = True
    servers = sub.add_parser('servers', help='List the servers on a host')
    _common(servers)
    servers.set_defaults(func=_servers)
    evacuate = sub.add_parser(
        'evacuate', help='Evacuate every server of a failed host')
    _common(evacuate)
    evacuate.add_argument('--target', default=None,
                          help='Destination host (verified by the '
                               'scheduler); default: the scheduler picks')
    evacuate.add_argument('--concurrency', type=int, default=4,
                          help='Evacuations in flight at once (default 4)')
    evacuate.add_argument('--timeout', type=float, default=300,
                          help='Seconds to wait for each server to settle')
    evacuate.add_argument('--force-down', action='store_true',
                          help='Force the host\'s compute service down '
                               'first (only once it is fenced!)')
    evacuate.set_defaults(func=_evacuate)
    drain = sub.add_parser(
        'drain', help='Move every server off a host, server side '
                      '(os-host-drains), within the conductors\' limits')
    _common(drain)
    drain.add_argument('--mode', choices=('auto', 'live', 'cold'),
                       default='auto',
                       help='auto: live-migrate ACTIVE, cold-migrate '
                            'SHUTOFF (default)')
    drain.add_argument('--target', action='append', default=None,
                       dest='targets', metavar='HOST',
                       help='Allowed destination (repeatable); default: '
                            'the scheduler picks')
    drain.add_argument('--force-down-if-dead', action='store_true',
                       help='If the host is down, force its service down '
                            'and evacuate (only once it is fenced!)')
    drain.add_argument('--wait', action='store_true',
                       help='Show progress until the drain ends')
    drain.add_argument('--timeout', type=float, default=3600,
                       help='Seconds --wait waits (default 3600)')
    drain.set_defaults(func=_drain)


HELP = ('Servers of a compute host: list them, evacuate them all, drain '
        'the host')
