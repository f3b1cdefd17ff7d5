"""A compute host as a caller over RPC sees it, for in-process tests: a
method name reaches the first of the manager's endpoints that has it
(oslo.messaging's dispatch, without the transport); the hypervisor and
the conductor client are the manager's, the other
clients its endpoints' (``deps``)."""


class Served:

    def __init__(self, manager):
        self.manager = manager

    def __getattr__(self, name):
        if not name.startswith('_'):
            for endpoint in self.manager.endpoints():
                if callable(getattr(type(endpoint), name, None)):
                    return getattr(endpoint, name)
        try:
            return getattr(self.manager, name)
        except AttributeError:
            return getattr(self.manager.deps, name)
