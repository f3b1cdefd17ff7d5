"""Open a running stack's database from the test process, the way an
operator's nova-moves-manage would: same oslo.config option, same db/api."""
import contextlib

from nova_moves import conf
from nova_moves.db import api as db_api


@contextlib.contextmanager
def stack_database(stack):
    url = stack.database_url or 'sqlite:///%s/state/nova_moves.sqlite' % \
        stack.workdir
    conf.CONF.set_override('connection', url, group='database')
    try:
        yield db_api
    finally:
        db_api.dispose_engines()
        conf.CONF.clear_override('connection', group='database')


def use_stack_database(test):
    """stack_database(test.stack) for the rest of ``test``: its db_api
    calls reach the stack's database until the test's clean-up."""
    opened = stack_database(test.stack)
    opened.__enter__()
    test.addCleanup(opened.__exit__, None, None, None)
