"""Host filters. Each takes a host state and the request spec and returns
None when the host passes, or the reason it is rejected."""


def compute_filter(host_state, spec):
    service = host_state.get('service')
    if service is None:
        return 'no nova-moves-compute service on %s' % host_state['host']
    if service['disabled']:
        return 'ComputeFilter: service on %s is disabled (%s)' % (
            host_state['host'], service.get('disabled_reason') or 'no reason')
    if not host_state['up']:
        return 'ComputeFilter: service on %s is down' % host_state['host']
    return None


def availability_zone_filter(host_state, spec):
    wanted = spec.get('availability_zone')
    if not wanted:
        return None
    have = (host_state.get('service') or {}).get('availability_zone')
    if have != wanted:
        return 'AvailabilityZoneFilter: %s is in zone %s, not %s' % (
            host_state['host'], have, wanted)
    return None


def requested_host_filter(host_state, spec):
    wanted = (spec.get('requested_destination') or {}).get('host')
    if wanted and wanted != host_state['host']:
        return 'RequestedHostFilter: %s is not the requested host %s' % (
            host_state['host'], wanted)
    # A host drain's target_hosts (os-host-drains).
    targets = spec.get('target_hosts')
    if targets and host_state['host'] not in targets:
        return 'RequestedHostFilter: %s is not one of the target hosts ' \
            '%s' % (host_state['host'], ', '.join(targets))
    return None


def ignore_hosts_filter(host_state, spec):
    if host_state['host'] in (spec.get('ignore_hosts') or []):
        return 'IgnoreHostsFilter: %s is excluded from this request' % (
            host_state['host'])
    return None


def server_group_anti_affinity_filter(host_state, spec):
    """Hard anti-affinity: at most ``max_server_per_host`` members (2.64
    rules; 1 by default) on one host, the server being placed included."""
    group = spec.get('group')
    if not group or group['policy'] != 'anti-affinity':
        return None
    most = group.get('max_server_per_host') or 1
    there = group['hosts'].get(host_state['host'], 0)
    if there >= most:
        return ('ServerGroupAntiAffinityFilter: %s already holds %d '
                'member(s) of anti-affinity server group %s (at most %d '
                'per host)' % (host_state['host'], there, group['uuid'],
                               most))
    return None


def server_group_affinity_filter(host_state, spec):
    """Hard affinity: once a member is placed, every other goes where
    the members are."""
    group = spec.get('group')
    if not group or group['policy'] != 'affinity' or not group['hosts']:
        return None
    if host_state['host'] not in group['hosts']:
        return ('ServerGroupAffinityFilter: the members of affinity server '
                'group %s are on %s, not %s' % (
                    group['uuid'], ', '.join(sorted(group['hosts'])),
                    host_state['host']))
    return None


def same_host_filter(host_state, spec):
    """The ``same_host`` hint: only a host holding one of the servers
    named (Nova's SameHostFilter; none of them anywhere: no host)."""
    named = (spec.get('hint_hosts') or {}).get('same_host')
    if named is None:
        return None
    if host_state['host'] not in named['hosts']:
        return ('SameHostFilter: %s holds none of the servers %s' % (
            host_state['host'], ', '.join(named['servers'])))
    return None


def different_host_filter(host_state, spec):
    """The ``different_host`` hint: no host holding one of the servers
    named (Nova's DifferentHostFilter)."""
    named = (spec.get('hint_hosts') or {}).get('different_host')
    if named is None:
        return None
    if host_state['host'] in named['hosts']:
        return ('DifferentHostFilter: %s holds one of the servers %s' % (
            host_state['host'], ', '.join(named['servers'])))
    return None


FILTERS = {
    'ComputeFilter': compute_filter,
    'AvailabilityZoneFilter': availability_zone_filter,
    'RequestedHostFilter': requested_host_filter,
    'IgnoreHostsFilter': ignore_hosts_filter,
    'ServerGroupAntiAffinityFilter': server_group_anti_affinity_filter,
    'ServerGroupAffinityFilter': server_group_affinity_filter,
    'SameHostFilter': same_host_filter,
    'DifferentHostFilter': different_host_filter,
}


def get_filters(names):
    unknown = [n for n in names if n not in FILTERS]
    if unknown:
        raise ValueError('unknown scheduler filters: %s' % ', '.join(unknown))
    return [FILTERS[n] for n in names]


def reject_reasons(host_state, spec, filters):
    return [r for r in (f(host_state, spec) for f in filters) if r]
