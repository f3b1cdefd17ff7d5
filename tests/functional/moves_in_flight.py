"""Many moves in flight at once on a stack, as the broker-fault and
partition tests drive them: boot servers over some hosts, send a move
for each, and tell which are not over yet (a task_state, an unsettled
status, a migration neither terminal nor parked)."""
from concurrent import futures
import time

from nova_moves.harness import invariants


class MovesMixin:
    """Boot many servers, move them all and wait for every move to be
    over: the load the broker-fault and partition tests drive."""

    def boot_on(self, hosts, count, prefix):
        flavor = self.flavor('many-small', 1, 256, 1)
        ids = [self.admin.boot('%s-%d' % (prefix, i), flavor['id'],
                               host=hosts[i % len(hosts)], wait=False)['id']
               for i in range(count)]
        # Gone after the test (and before the invariants are checked), so
        # the next test has the hosts to itself.
        self.addCleanup(self.delete_all, ids)
        for server_id in ids:
            self.admin.wait_for_status(server_id, 'ACTIVE', timeout=120)
        return ids

    def delete_all(self, ids):
        for server_id in ids:
            self.admin.delete('/servers/%s' % server_id)
        self.admin.wait_for(
            lambda: not set(ids) & {s['id'] for s in self.admin.get(
                '/servers', params={'all_tenants': '1'},
                expect=200).json()['servers']},
            timeout=120, interval=0.5, what='servers deleted')

    def move_all(self, moves, at_once=6):
        """moves: [(server id, body, microversion)], ``at_once`` at a time
        (a few, so that many are in flight when a fault hits)."""
        def move(entry):
            server_id, body, version = entry
            self.stack.client().action(server_id, body, version=version,
                                       expect=202)
        with futures.ThreadPoolExecutor(at_once) as pool:
            list(pool.map(move, moves))

    def unsettled(self, ids):
        """server id -> why it is not over yet."""
        wanted, pending = set(ids), {}
        for server in self.admin.get(
                '/servers/detail', params={'all_tenants': '1'},
                expect=200).json()['servers']:
            if server['id'] in wanted and (
                    server['OS-EXT-STS:task_state'] is not None or
                    server['status'] not in invariants.SERVER_SETTLED):
                pending[server['id']] = '%s/%s' % (
                    server['status'], server['OS-EXT-STS:task_state'])
        settled = invariants.MIGRATION_TERMINAL | invariants.MIGRATION_PARKED
        for mig in self.admin.migrations():
            if mig['instance_uuid'] in wanted and \
                    mig['status'] not in settled:
                pending.setdefault(mig['instance_uuid'],
                                   'migration %s' % mig['status'])
        return pending

    def wait_settled(self, ids, timeout):
        deadline = time.monotonic() + timeout
        pending = self.unsettled(ids)
        while pending and time.monotonic() < deadline:
            time.sleep(0.5)
            pending = self.unsettled(ids)
        return pending

    def outcomes(self, ids):
        counted = {}
        for mig in self.admin.migrations():
            if mig['instance_uuid'] in ids:
                counted[mig['status']] = counted.get(mig['status'], 0) + 1
        return counted

    def confirm_finished(self, ids):
        for server_id in ids:
            if self.admin.server(server_id)['status'] == 'VERIFY_RESIZE':
                self.admin.action(server_id, {'confirmResize': None},
                                  expect=204)
        for server_id in ids:
            self.admin.wait_for(
                lambda: self.admin.server(server_id)['status'] ==
                'ACTIVE', timeout=60, what='%s confirmed' % server_id)
