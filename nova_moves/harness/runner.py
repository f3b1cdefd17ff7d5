"""Run a scenario: bring up (or attach to) a stack, create flavors, boot
servers, run the phases with their concurrency while a poller records
every server's status, apply the faults at their moments, then settle,
collect the RPC stats written by the processes, and check the invariants.

Operations speak the Nova compute API exactly as a client would:
POST /servers/{id}/action with resize / confirmResize / revertResize /
migrate / os-migrateLive / evacuate bodies shaped per microversion, and
DELETE /servers/{id}/migrations/{mid} for abort."""
import concurrent.futures
import os
import tempfile
import threading
import time

from nova_moves import apiclient as api_client
from nova_moves.harness import backends as nm_backends
from nova_moves.harness import bodies as nm_bodies
from nova_moves.harness import cost as nm_cost
from nova_moves.harness import drain_phase
from nova_moves.harness import faults as nm_faults
from nova_moves.harness import groups as nm_groups
from nova_moves.harness import invariants
from nova_moves.harness import phases as nm_phases
from nova_moves.harness import poller as nm_poller
from nova_moves.harness import processes as nm_processes
from nova_moves.harness import real_guests
from nova_moves.harness import reconnects as nm_reconnects
from nova_moves import rpcstats
from nova_moves.harness import selection as nm_selection
from nova_moves.harness import stack as nm_stack

SETTLED = invariants.SERVER_SETTLED
settled = nm_poller.settled


mv = nm_bodies.mv


class AttachRefused(ValueError):
    """The scenario would break a deployment the harness did not start."""


class Runner(nm_faults.FaultsMixin, nm_bodies.BodiesMixin):

    def __init__(self, scenario, endpoint=None, token='admin:admin',
                 out_dir=None, quiet=True, stack=None, rpc_stats_dir=None,
                 log=None, keep=False, allow_faults=False):
        self.scenario = scenario
        self.endpoint = endpoint
        self.token = token
        self.out_dir = out_dir or tempfile.mkdtemp(prefix='harness-')
        os.makedirs(self.out_dir, exist_ok=True)
        self.quiet = quiet
        self.stack = stack
        self.own_stack = False
        self.rpc_stats_dir = rpc_stats_dir
        self.keep = keep
        self.allow_faults = allow_faults
        self.created_flavors = []
        self.server_groups = {}  # scenario name -> group id
        self.cleanup_result = None
        self.cost = None  # report.json "cost" (harness/cost.py)
        self.log = log or (lambda msg: None)
        self.records = []
        self.faults = []
        self.phases = []
        self.flavors = {}
        self.servers = []
        self.hosts = [h for p in scenario['topology']['compute_processes']
                      for h in p['hosts']]
        self._records_lock = threading.Lock()
        self._local = threading.local()
        self._timers = []
        self._drains = []  # drain phases with wait: false, settled last
        self.reconnects = []
        self.t0 = None
        self.poller = None
        self.backends = None
        self.real = None  # real_guests.RealGuests with topology.guests

    # -- plumbing -------------------------------------------------------------
    def now(self):
        return time.monotonic() - self.t0

    def client(self):
        """One HTTP session per thread (requests.Session is not shared)."""
        c = getattr(self._local, 'client', None)
        if c is None:
            c = self._local.client = api_client.Client(self.endpoint,
                                                       self.token)
        return c

    def start_stack(self):
        topo = self.scenario['topology']
        files = None
        if real_guests.enabled(self.scenario):
            files = real_guests.prepare()  # builds the test guest if missing
            self.real = real_guests.RealGuests(self.scenario, self.log)
        self.rpc_stats_dir = os.path.join(self.out_dir, 'rpc-stats')
        os.makedirs(self.rpc_stats_dir, exist_ok=True)
        for name in os.listdir(self.rpc_stats_dir):
            os.unlink(os.path.join(self.rpc_stats_dir, name))
        extra = {section: dict(values) for section, values in
                 (topo.get('conf') or {}).items()}
        extra.setdefault('DEFAULT', {})['rpc_stats_dir'] = self.rpc_stats_dir
        # A scenario measures moves, not quotas: the stack the harness
        # starts has none unless the scenario's conf sets them.
        for key in ('instances', 'cores', 'ram'):
            extra.setdefault('quota', {}).setdefault(key, -1)
        self.backends = nm_backends.Backends(
            topo['broker'], topo['database'], topo['coordination'])
        options, backend_conf = self.backends.start()
        for section, values in backend_conf.items():
            for key, value in values.items():
                extra.setdefault(section, {}).setdefault(key, value)
        computes = self.compute_specs(topo['compute_processes'],
                                      options.get('broker_url'))
        self.stack = nm_stack.Stack(
            computes=self.real.compute_specs(computes) if self.real
            else computes,
            conductors=topo['conductors'], schedulers=topo['schedulers'],
            extra_conf=extra,
            service_down_time=topo.get('service_down_time', 5),
            workdir=os.path.join(self.out_dir, 'stack'), keep_workdir=True,
            **options)
        self.backends.attach(self.stack)
        self.own_stack = True
        self.log('starting stack in %s (%d compute processes, %d hosts)' % (
            self.stack.workdir, len(topo['compute_processes']),
            len(self.hosts)))
        try:
            self.stack.start(timeout=180)
            if self.real:
                self.real.import_images(self.stack, files)
        except Exception:
            self.stop_stack()
            raise
        self.endpoint = self.stack.endpoint

    # -- setup ----------------------------------------------------------------
    def create_flavors(self):
        admin = self.client()
        existing = {f['name']: f for f in admin.get(
            '/flavors/detail', expect=200).json()['flavors']}
        for flavor in self.scenario['flavors']:
            name = flavor['name']
            have = existing.get(name)
            if have and (have['vcpus'], have['ram'], have['disk']) == (
                    flavor['vcpus'], flavor['ram'], flavor.get('disk', 1)):
                self.flavors[name] = have
            else:
                if have:
                    name = '%s-%s' % (name, self.scenario['name'])
                self.flavors[flavor['name']] = admin.create_flavor(
                    name, flavor['vcpus'], flavor['ram'],
                    flavor.get('disk', 1))
                self.created_flavors.append(self.flavors[flavor['name']])
        self.server_groups = nm_groups.create(admin, self.scenario)

    def boot_servers(self):
        wanted = []
        for group in self.scenario['servers']:
            prefix = group.get('name', self.scenario['name'])
            for i in range(group['count']):
                wanted.append(('%s-%d' % (prefix, len(wanted) + 1),
                               self.flavors[group['flavor']]['id'],
                               group.get('host'),
                               self.server_groups.get(group.get('group')),
                               group.get('image')))
        if not wanted:
            return
        self.log('booting %d servers' % len(wanted))
        phase = {'name': 'boot', 'operation': 'boot', 'microversion': '2.1',
                 'concurrency': self.scenario['boot_concurrency'],
                 'timeout': 300, 'params': {}}
        self._run_phase(phase, wanted, self._boot)

    def _boot(self, phase, item, record):
        name, flavor_id, host, group, image = item
        image_ref = self.real.image_ids[image] if self.real else 'fake'
        body = {'name': name, 'flavorRef': flavor_id, 'imageRef': image_ref,
                'networks': 'none'}
        if host:
            body['availability_zone'] = 'nova:%s' % host
        request = {'server': body}
        if group:
            request['os:scheduler_hints'] = {'group': group}
        response = self._send(record, 'POST', '/servers', request,
                              phase['microversion'])
        if response is None or response.status_code != 202:
            return None
        server_id = response.json()['server']['id']
        record['server'] = server_id
        # Accepted means BUILD (Nova's POST /servers answer carries no
        # status); a fast build may be ACTIVE by the next poll.
        self.poller.track([server_id], status='BUILD')
        with self._records_lock:
            self.servers.append({'id': server_id, 'name': name,
                                 'image': image})
        return lambda v: v['status'] == 'ACTIVE'

    # -- selections -----------------------------------------------------------
    def select(self, selection):
        return nm_selection.select(self.servers, self.poller.view, selection)

    # -- one operation on one server ------------------------------------------
    def _send(self, record, method, path, body, version):
        record['sent'] = self.now()
        try:
            response = self.client().request(method, path, body,
                                             version=version)
        except Exception as exc:
            record['api_s'] = self.now() - record['sent']
            record['outcome'] = 'error'
            record['detail'] = str(exc)[:300]
            return None
        record['api_s'] = self.now() - record['sent']
        record['http_status'] = response.status_code
        record['request_id'] = response.headers.get('x-openstack-request-id')
        if response.status_code >= 400:
            try:
                fault = next(iter(response.json().values()))
                record['detail'] = '%s %s' % (response.status_code,
                                              fault.get('message', ''))
            except Exception:
                record['detail'] = response.text[:200]
        return response

    def why_failed(self, record):
        """The error events of the request's instance action, as the
        reason a move that was accepted did not get where it should."""
        try:
            action = self.client().action_detail(record['server'],
                                                 record['request_id'])
        except Exception as exc:
            return 'instance action not readable: %s' % exc
        errors = ['%s: %s' % (e['event'], (e.get('details') or
                                           (e.get('traceback') or '')
                                           .strip().split('\n')[-1])[:200])
                  for e in action.get('events', [])
                  if e.get('result') == 'Error']
        return '; '.join(errors) or 'no error event (%s)' % (
            action.get('message') or 'no message')

    def _operate(self, phase, server, record):
        op, version, params = (phase['operation'], phase['microversion'],
                               phase['params'])
        server_id = server['id']
        record['server'] = server_id
        before = self.poller.view(server_id) or {}
        record['host_before'] = before.get('OS-EXT-SRV-ATTR:host')
        if op == 'delete':
            response = self._send(record, 'DELETE', '/servers/%s' % server_id,
                                  None, version)
            expect = lambda v: v['status'] == 'DELETED'  # noqa: E731
        elif op == 'abort':
            response = self._abort(record, server_id, version)
            expect = lambda v: v['status'] == 'ACTIVE'  # noqa: E731
        else:
            body = self.action_body(op, version, params, before)
            response = self._send(record, 'POST',
                                  '/servers/%s/action' % server_id, body,
                                  version)
            expect = self._success_predicate(op, record['host_before'])
        if response is None:
            return None
        if response.status_code != self.EXPECTED_STATUS[op]:
            return None
        if params.get('check'):
            return 'no-wait'
        if op == 'live-migrate' and params.get('abort_after') is not None:
            time.sleep(params['abort_after'])
            sub = {}
            self._abort(sub, server_id, version)
            record['abort_status'] = sub.get('http_status')
        return expect

    def _abort(self, record, server_id, version):
        version = version if mv(version) >= (2, 24) else '2.24'
        try:
            found = self.client().get('/servers/%s/migrations' % server_id,
                                      version=version)
        except Exception as exc:
            record['outcome'] = 'error'
            record['detail'] = str(exc)[:300]
            return None
        migrations = found.json().get('migrations', []) \
            if found.status_code == 200 else []
        if not migrations:
            record['sent'] = self.now()
            record['api_s'] = 0.0
            record['outcome'] = 'skipped'
            record['detail'] = 'no in-progress live migration to abort'
            return None
        return self._send(record, 'DELETE', '/servers/%s/migrations/%s' % (
            server_id, migrations[0]['id']), None, version)

    @staticmethod
    def _success_predicate(op, host_before):
        if op in ('resize',):
            return lambda v: v['status'] == 'VERIFY_RESIZE'
        if op == 'migrate':
            return lambda v: v['status'] == 'VERIFY_RESIZE' and v.get(
                'OS-EXT-SRV-ATTR:host') != host_before
        if op in ('live-migrate', 'evacuate'):
            return lambda v: v['status'] in ('ACTIVE', 'SHUTOFF') and v.get(
                'OS-EXT-SRV-ATTR:host') != host_before
        return lambda v: v['status'] == 'ACTIVE'

    def _run_one(self, phase, item, work, bar):
        record = {'phase': phase['name'], 'operation': phase['operation'],
                  'microversion': phase['microversion'], 'server': None,
                  'outcome': None}
        try:
            success = work(phase, item, record)
        except Exception as exc:  # a harness bug must not stop the run
            record['outcome'] = 'error'
            record['detail'] = repr(exc)[:300]
            success = None
        if success is None:
            if record['outcome'] is None:
                record['outcome'] = 'rejected'
                record['detail'] = record.get('detail') or ''
            bar.update_counts(record)
        else:
            bar.update_counts(record, accepted=True)
            if success == 'no-wait':
                record['outcome'] = 'ok'
                record['done'] = record['sent'] + record['api_s']
            else:
                still = self.STILL_GOING.get(phase['operation'], ())
                view = self.poller.wait_for(
                    record['server'],
                    lambda v: settled(v) and v['status'] not in still,
                    after=record['sent'] + record['api_s'],
                    timeout=phase['timeout'])
                if view is None:
                    record['outcome'] = 'timeout'
                    view = self.poller.view(record['server']) or {}
                    record['detail'] = 'still %s (task_state %s) after %ss' % (
                        view.get('status'), view.get('OS-EXT-STS:task_state'),
                        phase['timeout'])
                else:
                    record['done'] = self.poller.poll_started
                    record['e2e_s'] = record['done'] - record['sent']
                    record['outcome'] = 'ok' if success(view) else 'failed'
                    if record['outcome'] == 'failed' and record.get(
                            'request_id'):
                        record['detail'] = self.why_failed(record)
                record['final_status'] = view.get('status')
                record['host_after'] = view.get('OS-EXT-SRV-ATTR:host')
            bar.update_counts(record, finished=True)
        with self._records_lock:
            self.records.append(record)
        return record

    def _run_phase(self, phase, items, work):
        from nova_moves.harness import progress
        started = self.now()
        self._arm_faults(phase['name'])
        bar = progress.PhaseBar(phase['name'], len(items), self.quiet)
        with concurrent.futures.ThreadPoolExecutor(
                max_workers=phase['concurrency'],
                thread_name_prefix='op') as pool:
            futures = [pool.submit(self._run_one, phase, item, work, bar)
                       for item in items]
            for future in futures:
                future.result()
        bar.close()
        self.phases.append({'name': phase['name'],
                            'operation': phase['operation'],
                            'microversion': phase['microversion'],
                            'servers': len(items), 'start': started,
                            'end': self.now()})

    def run_phase(self, phase):
        if phase['operation'] == 'drain':
            pending = drain_phase.start(self, phase)
            if pending is None:
                return
            if phase['params'].get('wait', True):
                drain_phase.follow(self, pending, phase['timeout'])
            else:
                self._drains.append(pending)
            return
        if phase['operation'] == 'wait':
            started = self.now()
            self._arm_faults(phase['name'])
            time.sleep(phase.get('seconds', 1))
            self.phases.append({'name': phase['name'], 'operation': 'wait',
                                'microversion': None, 'servers': 0,
                                'start': started, 'end': self.now()})
            return
        selected = self.select(phase['servers'])
        self.log('phase %s: %s of %d servers at %s, concurrency %d' % (
            phase['name'], phase['operation'], len(selected),
            phase['microversion'], phase['concurrency']))
        self._run_phase(phase, selected, self._operate)

    # -- end of run -----------------------------------------------------------
    def settle(self):
        deadline = time.monotonic() + self.scenario['settle_timeout']
        for timer in self._timers:
            left = deadline - time.monotonic()
            # Pending restarts must happen before the checks.
            timer.join(max(0.0, left))
        for pending in self._drains:
            drain_phase.follow(self, pending, max(
                1.0, min(pending['phase']['timeout'],
                         deadline - time.monotonic())))
        after = self.now()
        for server in self.servers:
            left = max(0.1, deadline - time.monotonic())
            self.poller.wait_for(server['id'], settled, after, left)

    def rpc_stats(self, before=None):
        merged, processes = rpcstats.merge_dir(self.rpc_stats_dir)
        if before is not None:
            merged = rpcstats.diff(merged, before)
        return merged, processes

    def run(self, before_checks=None):
        """Run the whole scenario; return the report (see report.py)."""
        from nova_moves.harness import report as nm_report
        problems = self.attach_problems()
        if problems:
            raise AttachRefused('refusing to run against %s:\n%s' % (
                self.endpoint, '\n'.join('  ' + p for p in problems)))
        if self.stack is None and self.endpoint is None:
            self.start_stack()
        elif self.stack is not None:
            self.endpoint = self.stack.endpoint
        # Time 0 of the report and the timeline: the stack is up.
        self.t0 = time.monotonic()
        wall_start = time.time()
        rpc_before = rpcstats.merge_dir(self.rpc_stats_dir)[0] \
            if not self.own_stack else None
        try:
            self.poller = nm_poller.StatusPoller(api_client.Client(
                self.endpoint, self.token), self.t0,
                self.scenario['poll_interval'])
            self.poller.start()
            self.create_flavors()
            self.boot_servers()
            workload_start = self.now()
            cpu_before = nm_cost.snapshot(self.stack)
            for phase in self.scenario['phases']:
                self.run_phase(phase)
            workload_end = self.now()
            self.settle()
            self.cost = nm_cost.summarize(
                cpu_before, nm_cost.snapshot(self.stack), self.records,
                self.now() - workload_start)
            self.poller.stop()
            self.poller.join(5)
            self.poller.poll_once()
            if before_checks is not None:
                before_checks(self)
            problems = self.check_invariants()
            nm_phases.collect(self.records, self.client())
            # Let every process write its last second of stats.
            time.sleep(1.5 if self.rpc_stats_dir else 0)
            merged, entries = self.rpc_stats(rpc_before)
            processes = nm_processes.states(entries, self.faults, wall_start,
                                            time.time())
            self.reconnects = nm_reconnects.for_stack(
                self.stack, self.faults, wall_start)
            self.cleanup_result = self.cleanup()
            report = nm_report.build(
                self, problems, merged, processes, wall_start,
                workload_start, workload_end)
            if self.real:
                report['real_guests'] = self.real.summary(self)
        finally:
            if self.poller is not None:
                self.poller.stop()
            if self.own_stack:
                self.stop_stack()
        return report

    def check_invariants(self, grace=10):
        """The invariants, given ``grace`` seconds to hold once every
        server settled (a source drops its copy just after the live
        migration it ran completed)."""
        deadline = time.monotonic() + grace
        while True:
            self.invariant_counts = {}
            problems = invariants.check(self.client(), guests=self.guests(),
                                        counts=self.invariant_counts)
            if not problems or time.monotonic() > deadline:
                self.count_lost_message_rollbacks()
                return problems
            time.sleep(0.5)

    def guests(self):
        """The fake hypervisors' guests of a stack we run (None when
        attached to one elsewhere: its disks are not ours to read)."""
        if self.stack is None:
            return None
        if self.real:
            return self.real.read_guests()
        return invariants.read_guests(os.path.join(self.stack.workdir,
                                                   'state'))

    def stop_stack(self):
        try:
            if self.stack is not None:
                self.stack.stop()
            self.stop_proxies()
            if self.backends is not None:
                self.backends.stop()
        finally:
            if self.real is not None:  # QEMU outlives its compute agent
                left = self.real.stop()
                if left:
                    self.log('QEMU processes that would not die: %s' % left)
