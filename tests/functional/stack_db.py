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
