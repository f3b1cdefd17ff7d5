"""GET /servers/{id}/diagnostics (Nova's os-server-diagnostics, admin):
what the server's hypervisor knows of it, asked of its host with a short
RPC call (compute RPC 1.9, compute/console.py).

From 2.48 Nova's standard format: every field present, null where the
driver does not know it. Below 2.48 Nova returned whatever its driver
gave; here that is the same numbers flattened libvirt's old way
(``cpu0_time``, ``memory``, ``vda_read`` ...), so an old client sees the
keys it used to.

409 when the server has no host, its guest is not on that host, or the
guest is not running (as Nova's compute manager); 501 when the
hypervisor gives no diagnostics.
"""
import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves import exception

RULE = 'os_compute_api:os-server-diagnostics'
# Nova's view (nova/api/openstack/compute/views/server_diagnostics.py).
PRIMITIVE_FIELDS = ('state', 'driver', 'hypervisor', 'hypervisor_os',
                    'uptime', 'config_drive', 'num_cpus', 'num_nics',
                    'num_disks')
LIST_FIELDS = {
    'cpu_details': ('id', 'time', 'utilisation'),
    'nic_details': ('mac_address', 'rx_octets', 'rx_errors', 'rx_drop',
                    'rx_packets', 'rx_rate', 'tx_octets', 'tx_errors',
                    'tx_drop', 'tx_packets', 'tx_rate'),
    'disk_details': ('read_bytes', 'read_requests', 'write_bytes',
                     'write_requests', 'errors_count')}
OBJECT_FIELDS = {'memory_details': ('maximum', 'used')}
# Below 2.48: libvirt's old key of each 2.48 field.
_OLD_DISK = {'read_bytes': 'read', 'read_requests': 'read_req',
             'write_bytes': 'write', 'write_requests': 'write_req',
             'errors_count': 'errors'}
_OLD_NIC = {'rx_octets': 'rx', 'rx_packets': 'rx_packets',
            'rx_errors': 'rx_errors', 'rx_drop': 'rx_drop',
            'tx_octets': 'tx', 'tx_packets': 'tx_packets',
            'tx_errors': 'tx_errors', 'tx_drop': 'tx_drop'}


def standard(diagnostics):
    """Nova's 2.48 body: every field, null where the driver is silent
    (and nothing else the driver may have added)."""
    diagnostics = diagnostics or {}
    body = {name: diagnostics.get(name) for name in PRIMITIVE_FIELDS}
    for name, fields in LIST_FIELDS.items():
        body[name] = [{field: (item or {}).get(field) for field in fields}
                      for item in diagnostics.get(name) or []]
    for name, fields in OBJECT_FIELDS.items():
        body[name] = {field: (diagnostics.get(name) or {}).get(field)
                      for field in fields}
    return body


def flat(diagnostics):
    """Below 2.48: the same numbers under libvirt's old flat keys."""
    body = {}
    for index, cpu in enumerate(diagnostics['cpu_details']):
        cpu_id = index if cpu['id'] is None else cpu['id']
        body['cpu%s_time' % cpu_id] = cpu['time']
    body['memory'] = diagnostics['memory_details']['maximum']
    body['memory-actual'] = diagnostics['memory_details']['used']
    for index, disk in enumerate(diagnostics['disk_details']):
        device = 'vd' + chr(ord('a') + index % 26)
        for field, old in _OLD_DISK.items():
            body['%s_%s' % (device, old)] = disk[field]
    for index, nic in enumerate(diagnostics['nic_details']):
        for field, old in _OLD_NIC.items():
            body['nic%d_%s' % (index, old)] = nic[field]
    return body


def index(server_id):
    instance = common.get_instance(server_id, RULE)
    if not instance['host']:
        raise exception.InstanceNotReady(
            instance_id=instance['uuid'], reason='it is on no host')
    try:
        diagnostics = api_req.services().compute.get_diagnostics(
            api_req.context(), instance['host'], instance['uuid'])
    except NotImplementedError:
        raise exception.FeatureNotSupported(feature='Server diagnostics',
                                            host=instance['host'])
    body = standard(diagnostics)
    if api_req.version() < '2.48':
        body = flat(body)
    return flask.jsonify(body)
