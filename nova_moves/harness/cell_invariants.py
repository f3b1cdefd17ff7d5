"""The run's invariants per cell database (harness/invariants.py's rules,
read from each cell's own tables instead of through the API).

Why not through the API: placement is sharded with the cells
(doc/cells.md), and the API's placement test hook reads only its home
cell; a cell whose database was just down is exactly the one whose
allocations need checking. So each cell database is read directly:

- no live server with a task_state, none in a vm_state that is not a
  resting one;
- no migration in a non-terminal status (an orphaned move), and none
  whose server is not in that cell (a migration left behind in the
  wrong cell);
- every live server's allocation equal to its flavor, on its host's
  provider tree; the only other consumers allowed are a migration parked
  on its source ('finished': awaiting confirm, 'done': evacuated), on
  its source host; anything else is leaked;
- a server's row live in exactly one cell, the one its instance mapping
  names (with the API database given)."""
import json

import sqlalchemy as sa

from nova_moves.db import candidates
from nova_moves.db import models
from nova_moves.harness import invariants

INSTANCES = models.Instance.__table__
MIGRATIONS = models.Migration.__table__
ALLOCATIONS = models.Allocation.__table__
PROVIDERS = models.ResourceProvider.__table__

VM_SETTLED = {'active', 'stopped', 'error', 'resized', 'paused',
              'suspended', 'shelved', 'shelved_offloaded', 'rescued'}


def _read(url):
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            servers = [r._mapping for r in conn.execute(sa.select(
                INSTANCES.c.uuid, INSTANCES.c.host, INSTANCES.c.vm_state,
                INSTANCES.c.task_state, INSTANCES.c.flavor,
                INSTANCES.c.launched_at).where(INSTANCES.c.deleted == 0))]
            migrations = [r._mapping for r in conn.execute(sa.select(
                MIGRATIONS.c.uuid, MIGRATIONS.c.instance_uuid,
                MIGRATIONS.c.status, MIGRATIONS.c.source_compute))]
            roots = {r.id: r for r in conn.execute(sa.select(
                PROVIDERS.c.id, PROVIDERS.c.name,
                PROVIDERS.c.root_provider_id))}
            held = {}
            for consumer, rp_id, rc, used in conn.execute(sa.select(
                    ALLOCATIONS.c.consumer_id,
                    ALLOCATIONS.c.resource_provider_id,
                    ALLOCATIONS.c.resource_class, ALLOCATIONS.c.used)):
                root = roots.get(roots[rp_id].root_provider_id or rp_id) \
                    if rp_id in roots else None
                by_host = held.setdefault(consumer, {}).setdefault(
                    root.name if root is not None else None, {})
                by_host[rc] = by_host.get(rc, 0) + used
    finally:
        engine.dispose()
    return servers, migrations, held


def _mapped_cells(api_database_url):
    """{instance uuid: cell name} of the live mappings."""
    engine = sa.create_engine(api_database_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text(
                'SELECT m.instance_uuid, c.name FROM instance_mappings m '
                'JOIN cell_mappings c ON c.id = m.cell_id '
                'WHERE m.queued_for_delete IS NULL OR '
                'm.queued_for_delete = :no'), {'no': False}).all()
    finally:
        engine.dispose()
    return dict(rows)


def check(cell_database_urls, api_database_url=None, counts=None):
    """Problems (strings) over every cell of ``cell_database_urls``
    ({cell name: URL}); ``counts`` gets per cell: servers, moves,
    terminal, stuck (task_state or migration not terminal), leaked."""
    counts = {} if counts is None else counts
    problems = []
    seen = {}
    for cell, url in sorted(cell_database_urls.items()):
        servers, migrations, held = _read(url)
        c = counts[cell] = {'servers': len(servers),
                            'moves': len(migrations), 'terminal': 0,
                            'stuck': 0, 'leaked': 0}
        by_uuid = {s['uuid']: s for s in servers}
        for server in servers:
            seen.setdefault(server['uuid'], []).append(cell)
            if server['task_state'] is not None or \
                    server['vm_state'] not in VM_SETTLED:
                c['stuck'] += 1
                problems.append('%s: server %s is %s with task_state %s' % (
                    cell, server['uuid'], server['vm_state'],
                    server['task_state']))
        parked = {}
        for mig in migrations:
            if mig['status'] in invariants.MIGRATION_PARKED:
                parked[mig['uuid']] = mig
            if mig['status'] in (invariants.MIGRATION_TERMINAL |
                                 invariants.MIGRATION_PARKED):
                c['terminal'] += 1
            else:
                c['stuck'] += 1
                problems.append('%s: migration %s of %s is still %s' % (
                    cell, mig['uuid'], mig['instance_uuid'], mig['status']))
            if mig['instance_uuid'] not in by_uuid and \
                    mig['status'] in invariants.MIGRATION_PARKED:
                problems.append('%s: migration %s parked for a server not '
                                'in this cell' % (cell, mig['uuid']))
        for consumer, hosts in held.items():
            server = by_uuid.get(consumer)
            if server is not None:
                if server['vm_state'] == 'error' and \
                        not server['launched_at']:
                    wanted = {}
                else:
                    wanted = {server['host']: candidates.
                              resources_from_flavor(json.loads(
                                  server['flavor']))}
                if hosts != wanted:
                    c['leaked'] += 1
                    problems.append('%s: server %s on %s holds %s, wanted '
                                    '%s' % (cell, consumer, server['host'],
                                            hosts, wanted))
                continue
            mig = parked.get(consumer)
            if mig is None or mig['instance_uuid'] not in by_uuid or \
                    set(hosts) != {mig['source_compute']}:
                c['leaked'] += 1
                problems.append('%s: allocation of %s leaked: %s' % (
                    cell, consumer, hosts))
        for server in servers:
            if server['uuid'] not in held and not (
                    server['vm_state'] == 'error' and
                    not server['launched_at']):
                problems.append('%s: server %s holds nothing' % (
                    cell, server['uuid']))
    for uuid, cells in seen.items():
        if len(cells) > 1:
            problems.append('server %s is live in %s' % (uuid, cells))
    if api_database_url:
        mapped = _mapped_cells(api_database_url)
        for uuid, cells in seen.items():
            if mapped.get(uuid) not in cells:
                problems.append('server %s is in %s, mapped to %s' % (
                    uuid, cells, mapped.get(uuid)))
    return problems
