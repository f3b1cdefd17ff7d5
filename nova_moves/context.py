"""Request context: who asked, and the request id that follows the request
through every RPC hop and log line."""
from oslo_context import context as o_context


class RequestContext(o_context.RequestContext):

    def __init__(self, *args, **kwargs):
        kwargs.setdefault('is_admin', False)
        super().__init__(*args, **kwargs)

    def to_policy_values(self):
        values = super().to_policy_values()
        # The legacy rules ([oslo_policy] enforce_new_defaults = False)
        # are Nova's, written against is_admin.
        values['is_admin'] = self.is_admin
        return values

    def to_dict(self):
        values = super().to_dict()
        values.update({'user_id': self.user_id, 'project_id': self.project_id})
        return values

    @classmethod
    def from_dict(cls, values, **kwargs):
        return cls(user_id=values.get('user_id') or values.get('user'),
                   project_id=values.get('project_id')
                   or values.get('project_id'),
                   is_admin=values.get('is_admin', False),
                   request_id=values.get('request_id'),
                   global_request_id=values.get('global_request_id'),
                   roles=values.get('roles') or [],
                   system_scope=values.get('system_scope'),
                   overwrite=True)

    def elevated(self):
        values = self.to_dict()
        values['is_admin'] = True
        if 'admin' not in values['roles']:
            values['roles'] = list(values['roles']) + ['admin']
        return RequestContext.from_dict(values)


def get_admin_context(request_id=None):
    kwargs = {'request_id': request_id} if request_id else {}
    return RequestContext(user_id='nova-moves', project_id='service',
                          is_admin=True, roles=['admin'], overwrite=False,
                          **kwargs)
