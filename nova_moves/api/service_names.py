"""Service binaries as the database and the processes name them and as
os-services shows them, and a service's availability zone (a leaf,
shared by os-services, os-availability-zone, os-hypervisors, evacuate
and host drains)."""

# os-services shows Nova's binary names, so clients filtering on them
# (``openstack compute service list --service nova-compute``, tempest)
# work; the database and the processes keep the console scripts' names.
# A filter or a legacy update naming either form finds the service.
NOVA_BINARIES = {'nova-moves-compute': 'nova-compute',
                 'nova-moves-conductor': 'nova-conductor',
                 'nova-moves-scheduler': 'nova-scheduler'}
_OUR_BINARIES = {nova: ours for ours, nova in NOVA_BINARIES.items()}
COMPUTE_BINARY = 'nova-moves-compute'


def api_binary(binary):
    """The name os-services shows for a service's binary."""
    return NOVA_BINARIES.get(binary, binary)


def db_binary(binary):
    """The stored name of a binary given either way (None stays None)."""
    return _OUR_BINARIES.get(binary, binary)


def zone(service):
    """A compute service's zone; every other service is 'internal'."""
    if service['binary'] != COMPUTE_BINARY:
        return 'internal'
    return service['availability_zone'] or 'nova'
