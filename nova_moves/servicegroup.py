"""Is a service up? The database heartbeat always counts; with a tooz
membership backend, the service must also be a live group member."""
import threading
import time

from nova_moves import coordination
from nova_moves.db import api as db_api


class ServiceGroup:

    def __init__(self, coordinator=None, cache_seconds=1.0):
        self._coordinator = coordinator
        self._cache_seconds = cache_seconds
        self._cache = {}
        self._lock = threading.Lock()

    @classmethod
    def for_process(cls):
        if not coordination.membership_enabled():
            return cls()
        coordinator = coordination.Coordinator()
        coordinator.start()
        return cls(coordinator)

    def _members(self, binary):
        with self._lock:
            cached = self._cache.get(binary)
            if cached and time.monotonic() - cached[0] < self._cache_seconds:
                return cached[1]
        members = self._coordinator.members(binary)
        with self._lock:
            self._cache[binary] = (time.monotonic(), members)
        return members

    def is_up(self, service):
        if not db_api.service_is_up(service):
            return False
        if self._coordinator is None:
            return True
        return service['host'] in self._members(service['binary'])
