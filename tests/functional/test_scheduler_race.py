"""Two schedulers (and two conductors) racing for the last slots on a
private PostgreSQL, and on MySQL/MariaDB (a fresh database on the
machine's server): 100 concurrent boots for 50 slots end as exactly 50
ACTIVE and 50 NoValidHost, and no host holds more than inventory x ratio.

Claims are a compare-and-swap on the provider generation, so the loser of
a race retries or fails over to an alternate; it never places on top of
the winner. NOVA_MOVES_RACE_SLOTS sets the number of slots (default 50;
twice as many boots)."""
import concurrent.futures
import os

from tests.functional import base
from tests.functional import private_postgres
from tests.functional import databases

SLOTS = int(os.environ.get('NOVA_MOVES_RACE_SLOTS', '50'))
HOSTS = 5
VCPUS = max(1, SLOTS // HOSTS)


class _Race:
    CONDUCTORS = 2
    SCHEDULERS = 2
    # One agent process serving every host keeps the machine quiet; the
    # hosts are still separate resource providers.
    COMPUTES = [{'name': 'race', 'hosts': ['race%d' % i
                                           for i in range(HOSTS)],
                 'compute': {'vcpus': VCPUS, 'cpu_allocation_ratio': 1.0,
                             'default_operation_seconds': 0.01}}]
    # 100 servers: far more than the default per-project quota of 10.
    EXTRA_CONF = {'DEFAULT': {'debug': 'false'},
                  'quota': {'instances': -1, 'cores': -1, 'ram': -1}}

    def test_boots_race_for_the_last_slots(self):
        slots = VCPUS * HOSTS
        flavor = self.flavor('race', vcpus=1, ram=128, disk=1)
        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            posted = list(pool.map(
                lambda i: self.admin.boot('race%d' % i, flavor['id'],
                                          wait=False),
                range(2 * slots)))
        servers = [self.admin.wait_for_status(s['id'], ('ACTIVE', 'ERROR'),
                                              timeout=300)
                   for s in posted]
        active = [s for s in servers if s['status'] == 'ACTIVE']
        failed = [s for s in servers if s['status'] == 'ERROR']
        self.assertEqual(slots, len(active))
        self.assertEqual(slots, len(failed))
        self.assertEqual(
            {'No valid host'},
            {s.get('fault', {}).get('message', '')[:13] for s in failed},
            [s.get('fault') for s in failed])
        providers = self.admin.placement()['resource_providers']
        for name, provider in providers.items():
            for rc, used in provider['usages'].items():
                inventory = provider['inventories'][rc]
                self.assertLessEqual(
                    used, inventory['total'] * inventory.get(
                        'allocation_ratio', 1.0), (name, rc, provider))
        vcpus = sum(p['usages'].get('VCPU', 0) for p in providers.values())
        self.assertEqual(slots, vcpus)
        # Both schedulers took part (the broker hands requests round-robin).
        picked = [self.stack.log(name).count('Selected ')
                  for name in ('scheduler1', 'scheduler2')]
        self.assertNotIn(0, picked, picked)
        with concurrent.futures.ThreadPoolExecutor(10) as pool:
            list(pool.map(lambda s: self.admin.delete(
                '/servers/%s' % s['id'], expect=204), servers))


class SchedulerRaceTest(private_postgres.PrivatePostgres, _Race,
                        base.StackTestCase):
    """On a private PostgreSQL cluster."""


class MySQLSchedulerRaceTest(_Race, databases.FreshDatabase):
    """On the machine's MariaDB/MySQL (REPEATABLE READ by default, where
    a stale read inside a transaction is the classic over-commit)."""
    ADMIN_URL = databases.MYSQL_ADMIN_URL
    URL_FORMAT = databases.MYSQL_URL_FORMAT
