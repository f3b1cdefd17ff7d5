"""What must hold after every move, finished or failed, checked through
the API only: no server left with a task_state, no migration left in a
non-terminal status, and allocations that are exactly the flavors of the
servers. The only other consumers allowed are migrations parked on their
source host: a resize or cold migration awaiting confirm ('finished') and
an evacuation awaiting its dead source's return ('done'), which hold the
source half of the server's allocation. A consumer's generation only
moves forward (compared with what the same client saw last time)."""

MIGRATION_TERMINAL = {'confirmed', 'reverted', 'error', 'failed',
                      'completed', 'cancelled'}
# Waiting on the user (VERIFY_RESIZE) or on a dead source host's return.
MIGRATION_PARKED = {'finished', 'done'}
SERVER_SETTLED = {'ACTIVE', 'SHUTOFF', 'ERROR', 'VERIFY_RESIZE'}


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


def check(client):
    """A list of violations; empty when everything holds."""
    problems = []
    servers = client.get('/servers/detail', version='2.47',
                         params={'all_tenants': '1'},
                         expect=200).json()['servers']
    migrations = client.migrations(version='2.80')
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
        if server['status'] == 'ERROR' and not server.get(
                'OS-EXT-SRV-ATTR:host'):
            if held:
                problems.append('server %s in ERROR with no host holds %s'
                                % (server['id'], held))
            continue
        host = server.get('OS-EXT-SRV-ATTR:host')
        wanted = _resources(server['flavor'])
        on_host = {rp: r for rp, r in held.items()
                   if root_of.get(rp) == host or rp in sharing}
        elsewhere = {rp: r for rp, r in held.items() if rp not in on_host}
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
            problems.append('allocation of %s leaked: %s' % (consumer,
                                                             held))
            continue
        if mig['instance_uuid'] not in by_server:
            problems.append('migration %s holds %s for a deleted server'
                            % (consumer, held))
            continue
        roots = {root_of.get(rp) for rp in held if rp not in sharing}
        if roots != {mig['source_compute']}:
            problems.append('migration %s holds %s outside its source %s' % (
                consumer, held, mig['source_compute']))
    problems += _generations_forward(client, placement)
    for name, provider in providers.items():
        for rc, used in provider['usages'].items():
            capacity = provider['inventories'][rc]['capacity']
            if used > capacity:
                problems.append('provider %s overcommitted: %s %d > %d' % (
                    name, rc, used, capacity))
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
