"""quickstart --keep as a new user meets it: the printed stop command
ends every process (the QEMU guests too, when the machine has QEMU and
the quickstart moved a real guest) and removes the RabbitMQ vhost, the
work dir and the guests' instances dir, the PATH hint finds
``openstack``, and the services stop without py-amqp's "during closing
channel" warnings."""
import json
import os
import re
import subprocess
import sys

import testtools

from nova_moves.harness import quickstart_guest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def vhosts():
    return subprocess.run(['rabbitmqctl', '-q', 'list_vhosts'],
                          capture_output=True, text=True,
                          check=True).stdout.split()


def alive(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


class QuickstartKeepTest(testtools.TestCase):

    def test_keep_then_the_printed_stop_command(self):
        proc = subprocess.run(
            [sys.executable, '-m', 'nova_moves.harness.quickstart',
             '--keep'], capture_output=True, text=True, timeout=300,
            cwd=ROOT)
        out = proc.stdout
        stop = re.search(r'^  (\S+ -m nova_moves\.harness\.quickstart '
                         r'--stop (\S+))$', out, re.M)
        self.assertIsNotNone(stop, out + proc.stderr)
        workdir = stop.group(2)
        self.addCleanup(subprocess.run, stop.group(1).split(),
                        capture_output=True)
        self.assertEqual(0, proc.returncode, out + proc.stderr)
        vhost = re.search(r'vhost (nova-moves-\w+)', out).group(1)
        with open(os.path.join(workdir, 'quickstart-keep.json')) as f:
            record = json.load(f)
        pids = record['pids']
        self.assertTrue(all(alive(pid) for pid in pids))
        qemu = record.get('qemu')
        if qemu:  # the real guest stays with the stack
            self.assertIn('Hypervisor: QEMU', out)
            self.assertIn('the same boot, no reboot', out)
            self.assertTrue(quickstart_guest._qemu_pids_under(qemu['root']))
        else:
            self.assertIn('Hypervisor: fake', out)
        self.assertIn(vhost, vhosts())
        # The PATH line, as pasted, finds the client.
        path_line = re.search(r'^  (export PATH=\S+)', out, re.M).group(1)
        found = subprocess.run(['bash', '-c', path_line +
                                ' && command -v openstack'],
                               capture_output=True, text=True)
        self.assertEqual(0, found.returncode, path_line)
        stopped = subprocess.run(stop.group(1).split(), capture_output=True,
                                 text=True, timeout=120)
        self.assertEqual(0, stopped.returncode, stopped.stderr)
        self.assertFalse([pid for pid in pids if alive(pid)])
        self.assertNotIn(vhost, vhosts())
        self.assertFalse(os.path.exists(workdir))
        if qemu:
            self.assertEqual(
                [], quickstart_guest._qemu_pids_under(qemu['root']))
            self.assertFalse(os.path.exists(qemu['root']))

    def test_services_stop_without_amqp_warnings(self):
        from nova_moves.harness import stack as nm_stack
        stack = nm_stack.Stack(computes=1, keep_workdir=True)
        self.addCleanup(__import__('shutil').rmtree, stack.workdir, True)
        try:
            stack.start()
            stack.client().get('/flavors', expect=200)
        finally:
            stack.stop()
        text = ''
        for name in stack.processes:
            text += stack.log(name)
        # conductor, scheduler and compute each stopped cleanly...
        self.assertEqual(3, len(re.findall(
            r'INFO nova_moves\.service .* Stopped', text)), text[-3000:])
        # ...and the broker never spoke into a closing channel.
        self.assertNotIn('during closing channel', text)
