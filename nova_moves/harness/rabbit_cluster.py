"""A private RabbitMQ cluster on loopback (3 nodes by default), for tests
and harness scenarios that lose a broker node.

Each node has its own name (nmclu<id>-N@localhost), AMQP and distribution
ports and mnesia/log directories under one temp dir; the nodes share an
Erlang cookie through a private HOME and join the first with
``rabbitmqctl join_cluster``. Nothing reads /etc/rabbitmq or
/var/lib/rabbitmq and nothing listens on the machine's ports (5672,
25672, 15672): the machine's node is never touched."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid

from nova_moves.harness import ports

# The scripts themselves: the /usr/sbin wrappers su to the rabbitmq user
# and cd into /var/lib/rabbitmq, i.e. toward the machine's node.
SCRIPTS = os.environ.get('NOVA_MOVES_RABBITMQ_SCRIPTS',
                         '/usr/lib/rabbitmq/bin')


def available():
    return os.path.exists(os.path.join(SCRIPTS, 'rabbitmq-server'))


# Below the ephemeral range: a killed node's port is still its own when
# it starts again (harness/ports.py).
_port = ports.free_port


class Node:
    """One node of the cluster: its environment, process and rabbitmqctl."""

    def __init__(self, base, cookie_home, name):
        self.name = name
        self.node = '%s@localhost' % name
        self.dir = os.path.join(base, name)
        self.home = cookie_home
        self.port = _port()
        self.dist_port = _port()
        self.popen = None
        for sub in ('mnesia', 'log'):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        self._write('rabbitmq.conf', ''.join(
            line + '\n' for line in (
                'listeners.tcp.1 = 127.0.0.1:%d' % self.port,
                'loopback_users = none',
                # Nearly full /tmp on a CI box must not block publishers.
                'disk_free_limit.absolute = 10MB',
                'log.console = false', 'log.file.level = warning',
                # A node coming back waits this long for its peers.
                'mnesia_table_loading_retry_limit = 20')))
        self._write('enabled_plugins', '[].\n')
        # Our own (empty) env file: /etc/rabbitmq/rabbitmq-env.conf names
        # the machine's node.
        self._write('rabbitmq-env.conf', '# private cluster node\n')

    def _write(self, name, text):
        with open(os.path.join(self.dir, name), 'w') as f:
            f.write(text)

    @property
    def env(self):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(('RABBITMQ_', 'ERL_'))}
        path = self.dir
        env.update({
            'HOME': self.home,
            'RABBITMQ_CONF_ENV_FILE': os.path.join(path, 'rabbitmq-env.conf'),
            'RABBITMQ_NODENAME': self.node,
            'RABBITMQ_NODE_IP_ADDRESS': '127.0.0.1',
            'RABBITMQ_NODE_PORT': str(self.port),
            'RABBITMQ_DIST_PORT': str(self.dist_port),
            'RABBITMQ_CONFIG_FILE': os.path.join(path, 'rabbitmq.conf'),
            'RABBITMQ_ADVANCED_CONFIG_FILE': os.path.join(
                path, 'advanced.config'),
            'RABBITMQ_ENABLED_PLUGINS_FILE': os.path.join(
                path, 'enabled_plugins'),
            'RABBITMQ_MNESIA_BASE': os.path.join(path, 'mnesia'),
            'RABBITMQ_LOG_BASE': os.path.join(path, 'log'),
            'RABBITMQ_PID_FILE': os.path.join(path, 'node.pid'),
            'ERL_EPMD_ADDRESS': '127.0.0.1',
            # exec the VM rather than keep a shell in front of it, so that
            # kill() hits the broker itself.
            'RUNNING_UNDER_SYSTEMD': 'true',
        })
        return env

    def ctl(self, *args, timeout=60, tool='rabbitmqctl'):
        """``tool`` (rabbitmqctl, rabbitmq-queues, ...) against this node."""
        return subprocess.run(
            [os.path.join(SCRIPTS, tool), '-q', '-n', self.node]
            + list(args), env=self.env, check=True, timeout=timeout,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=self.dir).stdout

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def spawn(self):
        log = open(os.path.join(self.dir, 'log', 'console.log'), 'ab')
        self.popen = subprocess.Popen(
            [os.path.join(SCRIPTS, 'rabbitmq-server')], env=self.env,
            cwd=self.dir, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()

    def wait_serving(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise RuntimeError('%s exited with %s; see %s' % (
                    self.node, self.popen.returncode, self.dir))
            with socket.socket() as sock:
                sock.settimeout(1)
                listening = sock.connect_ex(('127.0.0.1', self.port)) == 0
            if listening:
                try:
                    self.ctl('await_startup', timeout=30)
                    return
                except (subprocess.CalledProcessError,
                        subprocess.TimeoutExpired):
                    pass
            time.sleep(0.5)
        raise TimeoutError('%s not up after %ss; see %s' % (
            self.node, timeout, self.dir))

    # RabbitMQ 3.10's Ra keeps its quorum-queue registry (names.dets) and
    # Raft terms (meta.dets) in dets, whose writes wait a few seconds in
    # a cache. A queue declared that shortly before a SIGKILL loses its
    # registration: the restarted node starts it "from scratch" as a new
    # Ra server that never calls an election, and every consume of and
    # publish to it times out (65 s), for good (doc/scale.md).
    _SYNC_RA = ('[dets:sync(T) || T <- dets:all(), is_atom(T), '
                'lists:prefix("ra_", atom_to_list(T))].')

    def persist_queue_registry(self):
        """Write Ra's dets caches out now (best effort): a kill after this
        models a node up for more than the cache's few seconds."""
        try:
            self.ctl('eval', self._SYNC_RA, timeout=30)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired,
                OSError):
            pass

    def kill(self):
        """kill -9: its clients see the TCP connection reset, no close."""
        if not self.alive():
            return
        # The VM's helpers (erl_child_setup, inet_gethost) share its
        # session: take them too, nothing else.
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait(30)


class RabbitCluster:
    """``nodes`` nodes clustered with join_cluster; ``url`` lists them all
    (rabbit://guest:guest@127.0.0.1:p1,guest:guest@127.0.0.1:p2,.../)."""

    def __init__(self, size=3, start_timeout=120):
        self.size = size
        self.start_timeout = start_timeout
        self.nodes = []
        self.base = None

    def start(self):
        self.base = tempfile.mkdtemp(prefix='nova-moves-rabbit-cluster-')
        home = os.path.join(self.base, 'home')
        os.makedirs(home)
        cookie = os.path.join(home, '.erlang.cookie')
        with open(cookie, 'w') as f:
            f.write(uuid.uuid4().hex.upper())
        os.chmod(cookie, 0o400)
        prefix = 'nmclu%s' % uuid.uuid4().hex[:8]
        self.nodes = [Node(self.base, home, '%s-%d' % (prefix, i + 1))
                      for i in range(self.size)]
        for node in self.nodes:
            node.spawn()
        for node in self.nodes:
            node.wait_serving(self.start_timeout)
        first = self.nodes[0]
        for node in self.nodes[1:]:
            node.ctl('stop_app')
            node.ctl('join_cluster', first.node)
            node.ctl('start_app')
        self.wait_running(self.size)
        return self

    def stop(self):
        """Kill every node and remove the data: nothing is kept."""
        for node in self.nodes:
            node.kill()
        if self.base:
            shutil.rmtree(self.base, ignore_errors=True)

    @property
    def url(self):
        return 'rabbit://%s/' % ','.join(
            'guest:guest@127.0.0.1:%d' % n.port for n in self.nodes)

    def ctl(self, *args, timeout=60):
        """rabbitmqctl against the first node that is up."""
        for node in self.nodes:
            if node.alive():
                return node.ctl(*args, timeout=timeout)
        raise RuntimeError('no node of the cluster is running')

    def running_nodes(self):
        out = self.ctl('eval', 'rabbit_nodes:all_running().')
        return {n.node for n in self.nodes if n.node in out}

    def wait_running(self, count, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if len(self.running_nodes()) == count:
                    return
            except (subprocess.CalledProcessError,
                    subprocess.TimeoutExpired):
                pass
            time.sleep(1)
        raise TimeoutError('cluster has not %d running nodes after %ss'
                           % (count, timeout))

    def kill(self, index):
        self.nodes[index].kill()

    def stop_node(self, index, timeout=60):
        """A graceful stop (SIGTERM): the node hands its queue leaders
        over and closes its connections, as in a rolling restart."""
        node = self.nodes[index]
        if node.alive():
            os.killpg(node.popen.pid, signal.SIGTERM)
            try:
                node.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                node.kill()

    def restart(self, index):
        """Start a killed node again in place: it rejoins from its data."""
        node = self.nodes[index]
        node.spawn()
        node.wait_serving(self.start_timeout)
        self.wait_running(self.size)


class NodeProcess:
    """A node seen as one of the stack's processes (rabbit1..N), so that
    scenario faults kill and restart it like any service. ``backend``
    tells Stack.stop to leave it to the cluster's own stop."""

    backend = True

    def __init__(self, name, node):
        self.name = name
        self.node = node
        self.log_path = os.path.join(node.dir, 'log', 'console.log')
        self.stopped_on_purpose = False

    @property
    def popen(self):
        return self.node.popen

    def alive(self):
        return self.node.alive()

    def signal(self, signum):
        if signum == signal.SIGKILL:
            self.node.kill()
        elif self.alive():
            os.killpg(self.node.popen.pid, signum)

    def wait(self, timeout):
        try:
            return self.node.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def start(self):
        """Back in place from its data dir: it rejoins the cluster."""
        self.node.spawn()
        self.node.wait_serving(120)
