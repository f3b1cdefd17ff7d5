"""The scheduler hints that place a server relative to other servers,
``same_host`` and ``different_host`` (Nova's SameHostFilter and
DifferentHostFilter): one normal form for the request spec, which the
scheduler resolves to hosts (scheduler/manager.py)."""

HOST_HINTS = ('same_host', 'different_host')


def host_hints(hints):
    """``{name: [server uuid, ...]}`` of the host hints in ``hints`` (a
    boot's, as kept on the server: each a uuid or a list of them); only
    those given, so a spec without them stays as it was."""
    found = {}
    for name in HOST_HINTS:
        value = (hints or {}).get(name)
        if value is None:
            continue
        found[name] = [value] if isinstance(value, str) else list(value)
    return found


def request_spec(instance, ignore_hosts=(), requested_host=None, **extra):
    """What the scheduler needs to place ``instance`` (a server row):
    its flavor, zone, owner and host hints; ``extra`` adds or replaces
    keys (a resize's new flavor, a drain's target hosts, the consumer
    generation a claim must see)."""
    spec = {'instance_uuid': instance['uuid'], 'flavor': instance['flavor'],
            'availability_zone': instance.get('requested_az'),
            'project_id': instance['project_id'],
            'user_id': instance['user_id'],
            'ignore_hosts': list(ignore_hosts),
            'requested_destination':
                {'host': requested_host} if requested_host else None}
    hints = host_hints(instance.get('scheduler_hints'))
    if hints:
        spec['scheduler_hints'] = hints
    spec.update(extra)
    return spec
