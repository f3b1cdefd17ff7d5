"""[scheduler] discover_hosts_in_cells_interval: the scheduler maps new
compute hosts into their cells periodically (Nova's scheduler periodic
task _discover_hosts_in_cells), so an operator need not run
``cell_v2 discover_hosts`` after adding a compute."""
import threading

from oslo_log import log as logging

from nova_moves import conf
from nova_moves.db import mappings
from nova_moves import exception

CONF = conf.CONF
LOG = logging.getLogger(__name__)
# oslo.service's spacing for a periodic task given 0.
DEFAULT_SPACING = 60


class HostDiscovery:
    """A daemon thread discovering hosts every interval, from start."""

    def __init__(self, interval):
        self.interval = interval or DEFAULT_SPACING
        self._stop = threading.Event()
        self._warned = False
        self._thread = None

    @classmethod
    def from_conf(cls):
        """The discovery the configuration asks for, or None."""
        interval = CONF.scheduler.discover_hosts_in_cells_interval
        return None if interval < 0 else cls(interval)

    def start(self):
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name='discover-hosts')
        self._thread.start()

    def stop(self):
        self._stop.set()

    def _loop(self):
        while True:
            self.run_once()
            if self._stop.wait(self.interval):
                return

    def run_once(self):
        """One discovery; the hosts it mapped (never raises: the next
        interval tries again)."""
        unreachable = []
        try:
            hosts = mappings.discover_hosts(mappings.cell_list(),
                                            unreachable=unreachable)
        except exception.HostMappingExists as exc:
            # Nova's words: two schedulers mapped the same host.
            msg = ('This periodic task should only be enabled on a single '
                   'scheduler to prevent collisions between multiple '
                   'schedulers: %s' % exc)
            if not self._warned:
                LOG.warning(msg)
                self._warned = True
            else:
                LOG.debug(msg)
            return []
        except Exception:
            LOG.exception('Discovering hosts in cells failed')
            return []
        for cell, exc in unreachable:
            # One cell down holds back no other cell's new hosts.
            LOG.warning('Discovering hosts: cannot read the database of '
                        'cell %s: %s', cell['uuid'], exc)
        if hosts:
            LOG.info('Discovered %(count)i new hosts: %(hosts)s',
                     {'count': len(hosts), 'hosts': ', '.join(hosts)})
        return hosts
