"""The one wrapper every private backend of a functional test class goes
through: a broker node or cluster (private_broker,
private_rabbit_cluster), a PostgreSQL cluster (private_postgres), a
fresh database on the machine's PostgreSQL or MySQL
(databases.FreshDatabase), a Keystone (keystone_fixture.OnKeystone).

A mixin (placed before the StackTestCase) starts its backend in its
setUpClass with ``start_backend`` (whatever else the backend needs
before the stack -- a database created, users -- inside its ``start``)
and then calls super().setUpClass(); this base does the rest for all of
them: the stack starts after every backend and stops before them, and a
set-up that fails part way (unittest runs no tearDownClass then) stops
what had started, last started first.
"""
import logging

LOG = logging.getLogger(__name__)


class PrivateBackend:

    @classmethod
    def start_backend(cls, name, start, stop, unavailable=None):
        """Skip the class when ``unavailable`` (a reason) is given; else
        ``start()``, kept as ``cls.<name>``, stopped with
        ``stop(backend, failed)`` after the stack (``failed``: the class
        never got going, a chance to keep logs)."""
        if unavailable:
            cls._stop_backends(failed=True)
            raise cls.skipException(unavailable)
        try:
            backend = start()
        except BaseException:
            cls._stop_backends(failed=True)
            raise
        setattr(cls, name, backend)
        cls._backends().append((name, backend, stop))
        return backend

    @classmethod
    def start_fixture(cls, name, fixture, unavailable=None):
        """start_backend for a fixtures.Fixture: setUp, then cleanUp."""
        def start():
            fixture.setUp()
            return fixture
        return cls.start_backend(name, start,
                                 lambda fixture, failed: fixture.cleanUp(),
                                 unavailable)

    @classmethod
    def _backends(cls):
        # Per concrete class: a subclass run later starts its own.
        if '_private_backends' not in cls.__dict__:
            cls._private_backends = []
        return cls._private_backends

    @classmethod
    def _stop_backends(cls, failed=False):
        backends = cls._backends()
        while backends:
            name, backend, stop = backends.pop()
            try:
                stop(backend, failed)
            except Exception:
                LOG.exception('stopping the private %s of %s failed', name,
                              cls.__name__)

    @classmethod
    def stack_ready(cls):
        """Runs once the stack is up (e.g. to register it in a catalog);
        what it starts is cleaned up like the rest if it fails."""

    @classmethod
    def setUpClass(cls):
        try:
            super().setUpClass()
        except BaseException:
            cls._stop_backends(failed=True)
            raise
        try:
            cls.stack_ready()
        except BaseException:
            cls._private_failed = True
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls._stop_backends(cls.__dict__.get('_private_failed', False))
