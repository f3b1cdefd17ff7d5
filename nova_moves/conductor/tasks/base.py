"""Long conductor flows are tasks: ``execute()`` does the work and
``rollback(exc)`` undoes whatever execute() had done when it failed, from
what is recorded in the database."""
from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class TaskBase:

    def __init__(self, ctxt, instance_uuid):
        self.ctxt = ctxt
        self.instance_uuid = instance_uuid

    def execute(self):
        raise NotImplementedError()

    def rollback(self, exc):
        """Undo execute(); must be safe to run on a partial execute()."""

    def run(self):
        try:
            return self.execute()
        except Exception as exc:
            LOG.info('%s for %s failed (%s); rolling back',
                     type(self).__name__, self.instance_uuid, exc)
            try:
                self.rollback(exc)
            except Exception:
                LOG.exception('Rollback of %s for %s failed',
                              type(self).__name__, self.instance_uuid)
            raise
