"""tooz: locks on every backend, group membership (service liveness) on
backends that expire silent members (redis, etcd, zookeeper, memcached)."""
import os
import threading
import uuid

from oslo_log import log as logging
from tooz import coordination as tooz_coordination

from nova_moves import conf

CONF = conf.CONF
LOG = logging.getLogger(__name__)

MEMBERSHIP_SCHEMES = ('redis', 'etcd3', 'etcd3+http', 'etcd3+https',
                      'zookeeper', 'kazoo', 'memcached')


def membership_enabled():
    scheme = CONF.coordination.backend_url.split(':', 1)[0]
    return scheme in MEMBERSHIP_SCHEMES


def group_name(binary):
    return ('nova-moves-' + binary).encode()


def _host_group(binary, host):
    return group_name(binary) + b'.' + host.encode()


class Coordinator:
    """One tooz coordinator per process, heartbeating in its own thread."""

    def __init__(self, member_id=None):
        member = member_id or '%s-%s' % (CONF.host, uuid.uuid4().hex[:8])
        url = CONF.coordination.backend_url
        if url.startswith('file://'):
            os.makedirs(url[len('file://'):], exist_ok=True)
        self._coordinator = tooz_coordination.get_coordinator(
            url, member.encode())
        self._stop = threading.Event()
        self._thread = None
        self._started = False

    def start(self):
        if self._started:
            return
        self._coordinator.start(start_heart=False)
        self._started = True
        self._thread = threading.Thread(target=self._heartbeat, daemon=True,
                                        name='tooz-heartbeat')
        self._thread.start()

    def _heartbeat(self):
        while not self._stop.is_set():
            try:
                interval = self._coordinator.heartbeat() or 1.0
            except Exception:
                LOG.exception('tooz heartbeat failed')
                interval = 1.0
            self._stop.wait(min(interval, 1.0))

    def stop(self):
        self._stop.set()
        if self._started:
            try:
                self._coordinator.stop()
            except Exception:
                LOG.exception('tooz stop failed')
            self._started = False

    def join(self, binary, host):
        """Join the group of ``host`` for ``binary``. A tooz member is the
        whole process, and one compute process may serve several hosts, so
        each host gets a group of its own: it is up while its group has a
        live member."""
        group = _host_group(binary, host)
        try:
            self._coordinator.create_group(group).get()
        except tooz_coordination.GroupAlreadyExist:
            pass
        try:
            self._coordinator.join_group(group).get()
        except tooz_coordination.MemberAlreadyExist:
            pass

    def members(self, binary):
        """The hosts of ``binary`` whose group has a live member."""
        prefix = group_name(binary) + b'.'
        hosts = set()
        for group in self._coordinator.get_groups().get():
            if not group.startswith(prefix):
                continue
            try:
                members = self._coordinator.get_members(group).get()
            except tooz_coordination.GroupNotCreated:
                continue
            if members:
                hosts.add(group[len(prefix):].decode())
        return hosts

    def lock(self, name):
        return self._coordinator.get_lock(name.encode())
