"""os-instance_usage_audit_log (Nova's, admin): how far the periodic
usage audit (conductor/usage_audit.py, ``[DEFAULT]
instance_usage_audit``) got for the last completed audit period, by
compute host, from its task log.

GET /os-instance_usage_audit_log: the period completed before now;
GET /os-instance_usage_audit_log/{before_timestamp}: the one completed
before ``YYYY-MM-DD HH:MM:SS[.ffffff]`` (URL-encoded; anything else is
a 400). Disabled compute hosts count: they may hold servers.
"""
import datetime

import flask

from nova_moves.api import cell_lists
from nova_moves.api import request as api_req
from nova_moves.api import input_guard
from nova_moves.api import service_names
from nova_moves import audit_period
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import timeutil

RULE = 'os_compute_api:os-instance-usage-audit-log:%s'
TASK_NAME = 'instance_usage_audit'


def _time(value):
    if isinstance(value, str):
        value = datetime.datetime.fromisoformat(value)
    return str(value)


def _period(before):
    """The last audit period completed before ``before``; a 400 when
    none does (0001-01-31: the month before it would be in year 0)."""
    try:
        return audit_period.last_completed(
            conf.CONF.instance_usage_audit_period, before)
    except (ValueError, OverflowError):
        if before.year > 2:
            raise  # not the timestamp: a bad instance_usage_audit_period
        raise exception.ValidationError(
            detail='Invalid timestamp for date %s: no audit period '
                   'completes before it.' % before.isoformat(' '))


def report(before):
    """Nova's audit report of the period completed before ``before``."""
    begin, end = _period(before)
    # Every cell's task logs and compute hosts (api/cell_lists).
    logs = [log for _cell, log in cell_lists.gather_or_skip(
        db_api.task_log_get_all, TASK_NAME, begin, end)]
    hosts = {s['host'] for _cell, s in cell_lists.gather_or_skip(
        db_api.service_get_all, binary=service_names.COMPUTE_BINARY)}
    seen = {log['host'] for log in logs}
    done = {log['host'] for log in logs if log['state'] == 'DONE'}
    running = {log['host'] for log in logs if log['state'] == 'RUNNING'}
    errors = sum(log['errors'] or 0 for log in logs)
    return {
        'period_beginning': _time(begin), 'period_ending': _time(end),
        'num_hosts': len(hosts), 'num_hosts_done': len(done),
        'num_hosts_running': len(running),
        'num_hosts_not_run': len(hosts - seen),
        'hosts_not_run': sorted(hosts - seen),
        'total_instances': sum(log['task_items'] or 0 for log in logs),
        'total_errors': errors,
        'overall_status': '%s hosts done. %s errors.' % (
            'ALL' if len(done) == len(hosts)
            else '%s of %s' % (len(done), len(hosts)), errors),
        'log': {log['host']: {'state': log['state'],
                              'instances': log['task_items'] or 0,
                              'errors': log['errors'] or 0,
                              'message': log['message']} for log in logs}}


def index():
    api_req.authorize(RULE % 'list', {})
    return flask.jsonify(
        {'instance_usage_audit_logs': report(timeutil.utcnow())})


def show(before_timestamp):
    api_req.authorize(RULE % 'show', {})
    fmt = '%Y-%m-%d %H:%M:%S' + ('.%f' if '.' in before_timestamp else '')
    try:
        before = datetime.datetime.strptime(before_timestamp, fmt)
    except ValueError:
        raise exception.ValidationError(
            detail='Invalid timestamp for date %s'
                   % input_guard.excerpt(before_timestamp))
    return flask.jsonify({'instance_usage_audit_log': report(before)})
