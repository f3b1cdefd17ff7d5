"""What must hold after every move, finished or failed, checked through
the API only: no server left with a task_state, no migration left in a
non-terminal status, and allocations that are exactly the flavors of the
servers. The only other consumers allowed are migrations parked on their
source host: a resize or cold migration awaiting confirm ('finished') and
an evacuation awaiting its dead source's return ('done'), which hold the
source half of the server's allocation. A consumer's generation only
moves forward (compared with what the same client saw last time).

Given the fake hypervisors' guests (read_guests), also: every server runs
as exactly one copy, on the host it is recorded on -- none anywhere else
(a live migration that left both copies running is a split brain) and,
when ACTIVE or VERIFY_RESIZE, that one on its host. A server in ERROR
that never launched (a failed boot) holds no allocation at all. Hosts
whose compute service is down are not counted: a dead host runs nothing
(its disk still lists the copies an evacuation left behind until it
returns).

And every hard server group policy holds: no more anti-affine members on
one host than the group allows, every affinity group on one host."""
import collections
import json
import os

MIGRATION_TERMINAL = {'confirmed', 'reverted', 'error', 'failed',
                      'completed', 'cancelled'}
# Waiting on the user (VERIFY_RESIZE) or on a dead source host's return.
MIGRATION_PARKED = {'finished', 'done'}
SERVER_SETTLED = {'ACTIVE', 'SHUTOFF', 'ERROR', 'VERIFY_RESIZE',
                  # The lifecycle actions' resting statuses.
                  'PAUSED', 'SUSPENDED', 'SHELVED', 'SHELVED_OFFLOADED',
                  'RESCUE'}


def _resources(flavor):
    resources = {'VCPU': flavor['vcpus'], 'MEMORY_MB': flavor['ram']}
    disk = flavor['disk'] + flavor.get('ephemeral', 0)
    if disk:
        resources['DISK_GB'] = disk
    return resources


def _sum(allocations):
    total = {}
    for resources in allocations.values():
        for rc, amount in resources.items():
            total[rc] = total.get(rc, 0) + amount
    return total


# Statuses whose server must be running on its host.
SERVER_RUNNING = {'ACTIVE', 'VERIFY_RESIZE', 'RESCUE'}


def read_guests(state_path):
    """{host: {server uuid: {'power': ...}}} from the fake hypervisors'
    state files under ``state_path`` (the stack's [DEFAULT] state_path)."""
    directory = os.path.join(state_path, 'fake-hypervisor')
    guests = {}
    try:
        names = os.listdir(directory)
    except OSError:
        return guests
    for name in names:
        if not name.endswith('.json'):
            continue
        try:
            with open(os.path.join(directory, name)) as f:
                guests[name[:-len('.json')]] = json.load(f)
        except (OSError, ValueError):
            continue  # being replaced right now: os.replace is atomic
    return guests


def running_copies(servers, guests, down_hosts=(), counts=None):
    """Violations of "exactly one running copy per server, on its
    recorded host, and none of a SHUTOFF server";
    counts['duplicate_copies'] the servers running on more than one
    host."""
    counts = {} if counts is None else counts
    counts.setdefault('duplicate_copies', 0)
    problems = []
    running = {}
    for host, held in guests.items():
        if host in down_hosts:
            continue
        for uuid, guest in held.items():
            if guest.get('power') == 'running':
                running.setdefault(uuid, []).append(host)
    for server in servers:
        host = server.get('OS-EXT-SRV-ATTR:host')
        hosts = sorted(running.get(server['id'], []))
        if len(hosts) > 1:
            counts['duplicate_copies'] += 1
            problems.append('server %s runs on %d hosts: %s (recorded on '
                            '%s)' % (server['id'], len(hosts),
                                     ', '.join(hosts), host))
        elif hosts and hosts != [host]:
            problems.append('server %s runs on %s, recorded on %s' % (
                server['id'], hosts[0], host))
        elif not hosts and server['status'] in SERVER_RUNNING and \
                host not in down_hosts:
            problems.append('server %s is %s but runs nowhere (recorded on '
                            '%s)' % (server['id'], server['status'], host))
        elif hosts and server['status'] == 'SHUTOFF' and \
                not server.get('OS-EXT-STS:task_state'):
            # A stray power-on (issue 37) or a missed stop: the server is
            # shown stopped while its guest runs.
            problems.append('server %s is SHUTOFF but its guest runs on %s'
                            % (server['id'], hosts[0]))
    return problems


def listed(client, path, key, version, params=None):
    """Every item of a list the API pages (as Nova: at most [api]
    max_limit per page), following the ``<key>_links`` next markers."""
    items, params = [], dict(params or {})
    while True:
        body = client.get(path, version=version, params=params,
                          expect=200).json()
        items += body[key]
        if not body.get(key + '_links') or not body[key]:
            return items
        last = body[key][-1]
        params['marker'] = last.get('uuid') or last['id']


def check(client, guests=None, counts=None):
    """A list of violations; empty when everything holds. ``guests``
    (read_guests) adds the running-copy check. ``counts`` (a dict) gets
    the run's numbers: moves, terminal (or parked), leaked and misplaced
    allocations, duplicate_copies."""
    counts = {} if counts is None else counts
    counts.update(moves=0, terminal=0, leaked=0, misplaced=0)
    problems = []
    servers = listed(client, '/servers/detail', 'servers', '2.47',
                     {'all_tenants': '1'})
    if guests is not None:
        down = {s['host'] for s in client.services()
                if s['binary'] == 'nova-compute' and
                s['state'] != 'up'}
        problems += running_copies(servers, guests, down, counts)
    migrations = listed(client, '/os-migrations', 'migrations', '2.80')
    placement = client.placement()
    allocations = placement['allocations']
    providers = placement['resource_providers']
    root_of = {p['uuid']: p['root'] for p in providers.values()}
    # Sharing providers (a root of their own without VCPU, e.g. a shared
    # disk pool) serve whichever host of their aggregate uses them: count
    # them as part of that host.
    sharing = {p['uuid'] for name, p in providers.items()
               if p['root'] == name and 'VCPU' not in p['inventories']}
    by_server = {s['id']: s for s in servers}
    parked = {}
    counts['moves'] = len(migrations)
    counts['terminal'] = sum(1 for m in migrations if m['status'] in
                             MIGRATION_TERMINAL | MIGRATION_PARKED)
    for mig in migrations:
        if mig['status'] in MIGRATION_PARKED:
            parked[mig['uuid']] = mig
        elif mig['status'] not in MIGRATION_TERMINAL:
            problems.append('migration %s of %s is still %s' % (
                mig['uuid'], mig['instance_uuid'], mig['status']))
    for server in servers:
        if server['OS-EXT-STS:task_state'] is not None:
            problems.append('server %s has task_state %s' % (
                server['id'], server['OS-EXT-STS:task_state']))
        if server['status'] not in SERVER_SETTLED:
            problems.append('server %s is %s' % (server['id'],
                                                 server['status']))
        held = allocations.get(server['id'], {})
        # No host (a shelved-offloaded server, a failed boot) or never
        # launched (a boot that failed, or a late claim for it that must
        # have been refused): it holds nothing, ever.
        if (server['status'] in ('ERROR', 'SHELVED_OFFLOADED') and
                not server.get('OS-EXT-SRV-ATTR:host')) or (
                server['status'] == 'ERROR' and
                not server.get('OS-SRV-USG:launched_at')):
            if held:
                counts['leaked'] += 1
                problems.append('server %s in %s, with no host or never '
                                'built, holds %s'
                                % (server['id'], server['status'], held))
            continue
        host = server.get('OS-EXT-SRV-ATTR:host')
        wanted = _resources(server['flavor'])
        on_host = {rp: r for rp, r in held.items()
                   if root_of.get(rp) == host or rp in sharing}
        elsewhere = {rp: r for rp, r in held.items() if rp not in on_host}
        if _sum(on_host) != wanted or elsewhere:
            counts['misplaced'] += 1
        if _sum(on_host) != wanted:
            problems.append('server %s on %s holds %s there, flavor is %s'
                            % (server['id'], host, _sum(on_host), wanted))
        if elsewhere:
            problems.append('server %s also holds %s off its host %s' % (
                server['id'], elsewhere, host))
    for consumer, held in allocations.items():
        if consumer in by_server:
            continue
        mig = parked.get(consumer)
        if mig is None:
            counts['leaked'] += 1
            problems.append('allocation of %s leaked: %s' % (consumer,
                                                             held))
            continue
        if mig['instance_uuid'] not in by_server:
            counts['leaked'] += 1
            problems.append('migration %s holds %s for a deleted server'
                            % (consumer, held))
            continue
        roots = {root_of.get(rp) for rp in held if rp not in sharing}
        if roots != {mig['source_compute']}:
            counts['misplaced'] += 1
            problems.append('migration %s holds %s outside its source %s' % (
                consumer, held, mig['source_compute']))
    problems += server_group_problems(client, servers)
    problems += _generations_forward(client, placement)
    for name, provider in providers.items():
        for rc, used in provider['usages'].items():
            capacity = provider['inventories'][rc]['capacity']
            if used > capacity:
                problems.append('provider %s overcommitted: %s %d > %d' % (
                    name, rc, used, capacity))
    return problems


def server_group_problems(client, servers):
    """Hard affinity and anti-affinity broken by where the servers are
    recorded (none when the API serves no server groups)."""
    response = client.get('/os-server-groups', version='2.64',
                          params={'all_projects': 'true'})
    if response.status_code != 200:
        return []
    host_of = {s['id']: s.get('OS-EXT-SRV-ATTR:host') for s in servers}
    problems = []
    for group in response.json()['server_groups']:
        hosts = [host_of[m] for m in group['members'] if host_of.get(m)]
        if group['policy'] == 'anti-affinity':
            most = (group.get('rules') or {}).get('max_server_per_host', 1)
            crowded = {h: n for h, n in collections.Counter(hosts).items()
                       if n > most}
            if crowded:
                problems.append('anti-affinity group %s has %s members on '
                                'one host (at most %d)' % (
                                    group['id'], crowded, most))
        elif group['policy'] == 'affinity' and len(set(hosts)) > 1:
            problems.append('affinity group %s is split over %s' % (
                group['id'], sorted(set(hosts))))
    return problems


def _generations_forward(client, placement):
    """Every consumer generation seen before by this client is still
    there and not lower: a write that skipped the bump, or a consumer
    row dropped and recreated, would let a stale claim through."""
    problems = []
    now = placement.get('consumer_generations', {})
    seen = client.__dict__.setdefault('seen_consumer_generations', {})
    for consumer, before in seen.items():
        if now.get(consumer, -1) < before:
            problems.append('consumer %s generation went back from %s to %s'
                            % (consumer, before, now.get(consumer)))
    seen.update(now)
    return problems
