"""GET /limits: the project's absolute limits and what it uses, in Nova's
names (``openstack limits show --absolute``). Rate limits are gone from
Nova since Newton: ``rate`` is always empty."""
import flask

from nova_moves.api import request as api_req
from nova_moves.api import quota_rules

# quota name -> Nova's limit names; quota_rules.limits() already leaves out
# what a microversion removed (network ones at 2.36, personality at 2.57).
_MAX = (('ram', 'maxTotalRAMSize'), ('instances', 'maxTotalInstances'),
        ('cores', 'maxTotalCores'), ('key_pairs', 'maxTotalKeypairs'),
        ('floating_ips', 'maxTotalFloatingIps'),
        ('metadata_items', 'maxServerMeta'),
        ('metadata_items', 'maxImageMeta'),
        ('injected_files', 'maxPersonality'),
        ('injected_file_content_bytes', 'maxPersonalitySize'),
        ('security_groups', 'maxSecurityGroups'),
        ('security_group_rules', 'maxSecurityGroupRules'),
        ('server_groups', 'maxServerGroups'),
        ('server_group_members', 'maxServerGroupMembers'))
_USED = (('ram', 'totalRAMUsed'), ('instances', 'totalInstancesUsed'),
         ('cores', 'totalCoresUsed'),
         ('floating_ips', 'totalFloatingIpsUsed'),
         ('security_groups', 'totalSecurityGroupsUsed'),
         ('server_groups', 'totalServerGroupsUsed'))


def absolute(project_id, version):
    allowed = quota_rules.limits(project_id, version)
    used = quota_rules.usage(project_id)
    body = {name: allowed[quota] for quota, name in _MAX if quota in allowed}
    if version >= '2.39':  # image metadata left with the image proxy
        body.pop('maxImageMeta', None)
    body.update({name: used.get(quota, 0) for quota, name in _USED
                 if quota in allowed})
    return body


def show():
    ctxt = api_req.context()
    api_req.authorize('os_compute_api:limits')
    project_id = flask.request.args.get('tenant_id')
    if project_id and project_id != ctxt.project_id:
        api_req.authorize('os_compute_api:limits:other_project',
                          {'project_id': project_id})
    project_id = quota_rules.project(project_id or ctxt.project_id)
    return flask.jsonify({'limits': {
        'absolute': absolute(project_id, api_req.version()), 'rate': []}})
