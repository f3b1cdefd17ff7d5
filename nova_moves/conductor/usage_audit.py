"""Nova's periodic instance usage audit (its compute manager's
``_instance_usage_audit``), run by the conductors for every compute host
since computes never touch the database: with ``[DEFAULT]
instance_usage_audit``, once per completed audit period and host, the
servers active on the host in that period are counted into the task log
(RUNNING, then DONE with the count and the time it took). The task
log's unique key makes one conductor win each (host, period); the
others skip it. GET /os-instance_usage_audit_log reports the log.

nova_moves sends no ``compute.instance.exists`` notifications: the
audit records what it covered, with 0 errors."""
import time

from oslo_log import log as logging

from nova_moves import audit_period
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import timeutil

LOG = logging.getLogger(__name__)
TASK_NAME = 'instance_usage_audit'
COMPUTE_BINARY = 'nova-moves-compute'
# Looking for work costs two queries: not on every fast tick, but soon
# enough that a compute registering late is audited within seconds.
CHECK_EVERY = 10.0


class UsageAudit:

    def __init__(self):
        self._next = 0.0

    def tick(self):
        if not conf.CONF.instance_usage_audit or \
                time.monotonic() < self._next:
            return
        self._next = time.monotonic() + CHECK_EVERY
        self.run()

    def run(self, now=None):
        """Audit every compute host not yet audited for the last
        completed period; returns the hosts this conductor audited."""
        begin, end = audit_period.last_completed(
            conf.CONF.instance_usage_audit_period, now or timeutil.utcnow())
        done = {log['host'] for log in db_api.task_log_get_all(
            TASK_NAME, begin, end)}
        audited = []
        for service in db_api.service_get_all(binary=COMPUTE_BINARY):
            host = service['host']
            if host not in done and self._audit(host, begin, end):
                audited.append(host)
        return audited

    @staticmethod
    def _audit(host, begin, end):
        started = time.time()
        instances = db_api.instance_get_active_by_window(begin, end,
                                                         host=host)
        if not db_api.task_log_begin(TASK_NAME, begin, end, host,
                                     len(instances),
                                     'Instance usage audit started...'):
            return False  # another conductor has it
        LOG.info('Running instance usage audit for host %s from %s to %s. '
                 '%d instances.', host, begin, end, len(instances))
        db_api.task_log_end(
            TASK_NAME, begin, end, host, 0,
            'Instance usage audit ran for host %s, %s instances in %s '
            'seconds.' % (host, len(instances), time.time() - started))
        return True
