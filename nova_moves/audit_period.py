"""Nova's audit periods (nova.utils.last_completed_audit_period): the
usage audit (conductor/usage_audit.py) and the audit log API agree on
them. A leaf."""
import datetime


def _month_before(year, month):
    return (year - 1, 12) if month == 1 else (year, month - 1)


def last_completed(unit, before):
    """(begin, end), naive UTC, of the last ``unit`` period ('hour',
    'day', 'month' or 'year', optionally '@offset') completed before
    ``before``."""
    offset = 0
    if '@' in unit:
        unit, offset = unit.split('@', 1)
        offset = int(offset)
    if unit == 'month':
        offset = offset or 1
        end = datetime.datetime(before.year, before.month, offset)
        if end >= before:
            end = datetime.datetime(*_month_before(end.year, end.month),
                                    offset)
        begin = datetime.datetime(*_month_before(end.year, end.month),
                                  offset)
    elif unit == 'year':
        offset = offset or 1
        end = datetime.datetime(before.year, offset, 1)
        if end >= before:
            end = datetime.datetime(before.year - 1, offset, 1)
        begin = datetime.datetime(end.year - 1, offset, 1)
    elif unit == 'day':
        end = datetime.datetime(before.year, before.month, before.day,
                                offset)
        if end >= before:
            end -= datetime.timedelta(days=1)
        begin = end - datetime.timedelta(days=1)
    elif unit == 'hour':
        end = before.replace(minute=offset, second=0, microsecond=0)
        if end >= before:
            end -= datetime.timedelta(hours=1)
        begin = end - datetime.timedelta(hours=1)
    else:
        raise ValueError('Time period must be hour, day, month or year')
    return begin, end
