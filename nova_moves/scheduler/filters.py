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


FILTERS = {
    'ComputeFilter': compute_filter,
    'AvailabilityZoneFilter': availability_zone_filter,
    'RequestedHostFilter': requested_host_filter,
    'IgnoreHostsFilter': ignore_hosts_filter,
}


def get_filters(names):
    unknown = [n for n in names if n not in FILTERS]
    if unknown:
        raise ValueError('unknown scheduler filters: %s' % ', '.join(unknown))
    return [FILTERS[n] for n in names]


def reject_reasons(host_state, spec, filters):
    return [r for r in (f(host_state, spec) for f in filters) if r]
