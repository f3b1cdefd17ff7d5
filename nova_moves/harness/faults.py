"""Faults a scenario applies at its moments (process kills and restarts,
forced-down services, fake-hypervisor failures, a compute cut off from
the broker and healed), and the rules and clean-up for runs attached to
a stack the harness did not start. Mixed into the Runner, whose stack,
client and log they use."""
import os
import signal
import threading
import time

from nova_moves.harness import stack as nm_stack
from nova_moves.harness import tcp_proxy

# The sweep's instance-action event when it rolls back a move whose step
# was lost (conductor/steps.py EVENT; the harness does not import the
# product's conductor).
RECOVERY_EVENT = 'conductor_recover_interrupted_move'
# A memory alarm: a high watermark no node stays under; then RabbitMQ's
# default back.
ALARM_WATERMARK = '0.00001'
NORMAL_WATERMARK = '0.4'


class FaultsMixin:

    proxies = None

    def compute_specs(self, processes, broker_url=None):
        """Stack compute specs of the topology's compute processes, those
        a ``cut`` fault names reaching the broker through a TCP proxy of
        their own (started here)."""
        specs = [{'name': p['name'], 'hosts': p['hosts'],
                  'compute': p['compute']} for p in processes]
        names = {f['process'] for f in self.scenario['faults']
                 if f['action'] in ('cut', 'heal')}
        self.proxies = {}
        if not names:
            return specs
        broker_url = broker_url or os.environ.get('NOVA_MOVES_BROKER_URL',
                                                  nm_stack.DEFAULT_BROKER)
        rest = broker_url.split('://', 1)[1].split('/', 1)[0]
        host, _, port = rest.rsplit('@', 1)[-1].partition(':')
        out = []
        for spec in specs:
            if spec['name'] in names:
                proxy = tcp_proxy.TcpProxy((host or '127.0.0.1',
                                            int(port or 5672))).start()
                self.proxies[spec['name']] = proxy
                spec = dict(spec, broker_port=proxy.port)
            out.append(spec)
        return out

    def count_lost_message_rollbacks(self):
        self.invariant_counts['rolled_back_lost_message'] = \
            lost_message_rollbacks(self.client(),
                                   [s['id'] for s in self.servers])

    def stop_proxies(self):
        for proxy in (self.proxies or {}).values():
            proxy.stop()

    def _arm_faults(self, phase_name):
        for fault in self.scenario['faults']:
            if fault.get('phase', None) != phase_name and not (
                    phase_name == 'boot' and 'phase' not in fault):
                continue
            if fault['at'] == 0:
                # Applied before the phase's first request: no race.
                self.apply_fault(fault)
                continue
            timer = threading.Timer(fault['at'], self.apply_fault, [fault])
            timer.daemon = True
            timer.start()
            self._timers.append(timer)

    def _service_uuid(self, host):
        for svc in self.client().services(binary='nova-compute'):
            if svc['host'] == host:
                return svc['id']
        raise LookupError('no compute service on host %s' % host)

    def apply_fault(self, fault):
        entry = {'t': self.now(), 'action': fault['action'],
                 'target': fault.get('process') or fault.get('host'),
                 'result': 'ok'}
        try:
            action = fault['action']
            if action in ('kill', 'terminate', 'restart'):
                if self.stack is None:
                    raise RuntimeError('process faults need the stack the '
                                       'harness started (not --endpoint)')
                # The pid names the stopped process's stats file.
                popen = self.stack.processes[fault['process']].popen
                if popen is not None and popen.poll() is None:
                    entry['pid'] = popen.pid
                if action == 'restart':
                    self.stack.restart(fault['process'])
                else:
                    signum = signal.SIGKILL if action == 'kill' \
                        else signal.SIGTERM
                    code = self.stack.kill(fault['process'], signum)
                    entry['result'] = 'exit %s' % code
                    self._undo_later(fault, 'restart_after', 'restart')
            elif action in ('cut', 'heal'):
                proxy = (self.proxies or {}).get(fault['process'])
                if proxy is None:
                    raise RuntimeError('%s does not reach the broker '
                                       'through a proxy' % fault['process'])
                if action == 'heal':
                    proxy.heal()
                else:
                    proxy.cut()
                    self._undo_later(fault, 'heal_after', 'heal')
            elif action in ('memory-alarm', 'memory-ok'):
                # vm_memory_high_watermark on that node alone: the node
                # blocks every publishing connection (casts, replies,
                # heartbeats) until it is set back.
                node = self.stack.processes[fault['process']].node
                node.ctl('set_vm_memory_high_watermark',
                         ALARM_WATERMARK if action == 'memory-alarm'
                         else NORMAL_WATERMARK)
                if action == 'memory-alarm':
                    self._undo_later(fault, 'lift_after', 'memory-ok')
            elif action in ('force-down', 'force-up'):
                self.client().put(
                    '/os-services/%s' % self._service_uuid(fault['host']),
                    {'forced_down': action == 'force-down'},
                    version='2.53', expect=200)
            elif action == 'set-faults':
                self.client().set_faults(fault['host'],
                                         fault.get('fail_operations', []),
                                         fault.get('operation_seconds'))
        except Exception as exc:
            entry['result'] = 'error: %s' % exc
        self.log('fault at %.2fs: %s %s -> %s' % (
            entry['t'], entry['action'], entry['target'], entry['result']))
        self.faults.append(entry)

    def _undo_later(self, fault, after_key, undo):
        """Apply ``undo`` to the fault's process ``fault[after_key]``
        seconds from now (restart_after, heal_after, lift_after); settle()
        waits for it before the checks."""
        if fault.get(after_key) is None:
            return
        timer = threading.Timer(fault[after_key], self.apply_fault,
                                [{'action': undo, 'at': 0,
                                  'process': fault['process']}])
        timer.daemon = True
        timer.start()
        self._timers.append(timer)

    PROCESS_FAULTS = ('kill', 'terminate', 'restart', 'cut', 'heal',
                      'memory-alarm')

    def attach_problems(self):
        """Why this scenario must not run against the given endpoint: a
        process fault needs processes the harness started; every other
        fault changes a deployment someone else runs, so it needs
        ``allow_faults``."""
        if self.endpoint is None or self.stack is not None:
            return []
        problems = []
        if (self.scenario['topology'] or {}).get('guests'):
            problems.append('topology.guests: real guests need the stack '
                            'the harness starts (run without --endpoint)')
        for i, fault in enumerate(self.scenario['faults']):
            if fault['action'] in self.PROCESS_FAULTS:
                problems.append(
                    'faults[%d]: %s %s needs the processes the harness '
                    'starts itself (run without --endpoint)' % (
                        i, fault['action'], fault['process']))
            elif not self.allow_faults:
                problems.append(
                    'faults[%d]: %s %s would change the deployment at %s; '
                    'pass --allow-faults to do that' % (
                        i, fault['action'], fault['host'], self.endpoint))
        return problems

    def cleanup(self, timeout=120):
        """Delete the servers and flavors this run created on a stack it
        did not start (unless ``keep``): an attached run leaves the
        deployment as it found it."""
        if self.own_stack or self.keep:
            return None
        client = self.client()
        gone = []
        for server in self.servers:
            response = client.delete('/servers/%s' % server['id'])
            if response.status_code in (204, 404):
                gone.append(server['id'])
        left = []
        deadline = time.monotonic() + timeout
        for server_id in gone:
            while client.get('/servers/%s' % server_id).status_code != 404:
                if time.monotonic() > deadline:
                    left.append(server_id)
                    break
                time.sleep(0.2)
        left += [s['id'] for s in self.servers if s['id'] not in gone]
        for flavor in self.created_flavors:
            client.delete('/flavors/%s' % flavor['id'])
        for group_id in self.server_groups.values():
            client.delete('/os-server-groups/%s' % group_id)
        self.log('cleanup: deleted %d servers and %d flavors%s' % (
            len(self.servers) - len(left), len(self.created_flavors),
            ', %d servers left: %s' % (len(left), left) if left else ''))
        return {'servers_deleted': len(self.servers) - len(left),
                'flavors_deleted': len(self.created_flavors),
                'servers_left': left}


def lost_message_rollbacks(client, server_ids):
    """How many moves of ``server_ids`` the conductors' sweep rolled back
    because a step's message was lost (a dead process, a broker that lost
    it, a partition): its Error event in the instance actions."""
    count = 0
    for server_id in server_ids:
        response = client.get('/servers/%s/os-instance-actions' % server_id,
                              version='2.84')
        if response.status_code != 200:
            continue
        for action in response.json()['instanceActions']:
            if action.get('message') != 'Error':
                continue
            detail = client.get('/servers/%s/os-instance-actions/%s' % (
                server_id, action['request_id']), version='2.84')
            if detail.status_code != 200:
                continue
            events = detail.json()['instanceAction'].get('events') or []
            if any(e['event'] == RECOVERY_EVENT and e['result'] == 'Error'
                   for e in events):
                count += 1
    return count
