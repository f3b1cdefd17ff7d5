"""Timestamps: naive UTC from oslo.utils (what the database stores), and
Nova's two formats for API bodies."""
import datetime

from oslo_utils import timeutils


def utcnow():
    # timeutils.set_time_override() in a test moves this clock too.
    return timeutils.utcnow()


def utcnow_iso():
    return utcnow().isoformat()


def api_time(value):
    """Nova's timestamp format in API bodies: 2024-01-01T00:00:00.000000."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.datetime.fromisoformat(value)
    return value.strftime('%Y-%m-%dT%H:%M:%S.%f')


def api_time_z(value):
    """Servers' created/updated: 2024-01-01T00:00:00Z."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.datetime.fromisoformat(value)
    return value.strftime('%Y-%m-%dT%H:%M:%SZ')
