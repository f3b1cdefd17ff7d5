"""Many resizes at once on real processes: each is accepted without
waiting for scheduling, and each ends confirmed with its allocation."""
import concurrent.futures
import time

from tests.functional import base
from tests.functional import resize_base


class ConcurrentResizeTest(resize_base.ResizeMixinTest, base.StackTestCase):
    COUNT = 20

    def test_twenty_concurrent_resizes(self):
        small, medium = self.flavor('small'), self.flavor('medium', 2, 1024)
        bodies = [self.admin.boot('c%02d' % i, small['id'], wait=False)
                  for i in range(self.COUNT)]
        servers = [self.wait(b, 'ACTIVE', timeout=120) for b in bodies]

        def one(server):
            client = self.admin.as_user('admin:admin')
            start = time.monotonic()
            resp = client.action(server['id'],
                                 {'resize': {'flavorRef': medium['id']}})
            return resp.status_code, time.monotonic() - start
        with concurrent.futures.ThreadPoolExecutor(self.COUNT) as pool:
            results = list(pool.map(one, servers))
        codes = [c for c, _ in results]
        latencies = sorted(t for _, t in results)
        self.assertEqual([202] * self.COUNT, codes)
        p50 = latencies[len(latencies) // 2]
        p99 = latencies[min(len(latencies) - 1,
                            int(round(0.99 * len(latencies))) - 1)]
        print('resize 202 latency over %d concurrent: p50 %.3fs p99 %.3fs '
              'max %.3fs' % (self.COUNT, p50, p99, latencies[-1]))
        self.addDetail('latency', __import__('testtools').content
                       .text_content('p50=%.4f p99=%.4f' % (p50, p99)))
        # The 202 never waits for scheduling. On the shared 2-core test
        # machine (load average often > 10) the SQLite write lock and CPU
        # starvation dominate, so bound the median tightly and the tail
        # loosely; tools/bench_migrate.py measures properly.
        self.assertLess(p50, 1.5, latencies)
        self.assertLess(latencies[-1], 5.0, latencies)
        for server in servers:
            self.wait(server, 'VERIFY_RESIZE', timeout=120)
        with concurrent.futures.ThreadPoolExecutor(self.COUNT) as pool:
            codes = list(pool.map(
                lambda s: self.admin.as_user('admin:admin').action(
                    s['id'], {'confirmResize': None}).status_code, servers))
        self.assertEqual([204] * self.COUNT, codes)
        for server in servers:
            shown = self.wait(server, 'ACTIVE', timeout=120)
            self.assertEqual(2, shown['flavor']['vcpus'])
        allocations = self.admin.placement()['allocations']
        for server in servers:
            held = allocations[server['id']]
            self.assertEqual([{'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 1}],
                             list(held.values()))
        self.assertEqual(
            {'confirmed'},
            {m['status'] for m in self.admin.migrations()
             if m['instance_uuid'] in {s['id'] for s in servers}})
