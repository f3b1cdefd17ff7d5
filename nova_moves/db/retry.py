"""Riding out a database that is briefly unreachable (restarted, failed
over): which errors mean "the database is not there", and oslo.db's
retry around every call through nova_moves.db.api.

Services (conductor, scheduler, manage) retry with oslo.db's bounded
backoff ([database] use_db_reconnect, db_retry_interval,
db_inc_retry_interval, db_max_retry_interval, db_max_retries), so an
outage shorter than that fails no move. The API does not wait: it
answers 503 with Retry-After (nova_moves.api.app) and keeps its workers
free."""
import functools

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_moves import conf

CONF = conf.CONF

# What libpq, PyMySQL and the servers say when the database is not there
# (yet, or any more). oslo.db only maps some of them (its PostgreSQL
# filter knows libpq's older "could not connect to server").
_UNAVAILABLE = (
    'connection refused', 'could not connect', 'server closed the '
    'connection', 'terminating connection', 'the database system is',
    'connection to server at', "can't connect to mysql", 'lost connection',
    'server has gone away', 'connection reset', 'broken pipe',
    'ssl connection has been closed', 'connection already closed',
    'no connection to the server', 'too many connections',
    'cannot connect now')


def is_unavailable(exc):
    """True when ``exc`` means the database could not be reached (as
    opposed to a bad statement or a constraint): worth waiting for."""
    if isinstance(exc, db_exc.DBConnectionError):
        return True
    if isinstance(exc, db_exc.DBError):
        exc = exc.inner_exception
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    if not isinstance(exc, (sa.exc.OperationalError,
                            sa.exc.InterfaceError)):
        return False
    message = str(exc.orig).lower()
    return any(text in message for text in _UNAVAILABLE)


def _never(exc):
    return False


def _with_retry(fn, reconnect, interval, max_retries, inc_interval,
                max_interval):
    # A deadlock (MySQL/InnoDB: two first heartbeats inserting their
    # service rows) rolled the whole transaction back: run it again,
    # whether or not reconnects are retried.
    return oslo_db_api.wrap_db_retry(
        retry_interval=interval,
        max_retries=max_retries if reconnect else 5,
        inc_retry_interval=inc_interval, max_retry_interval=max_interval,
        retry_on_disconnect=reconnect, retry_on_deadlock=True,
        exception_checker=is_unavailable if reconnect else _never)(fn)


def retrying(fn):
    """``fn`` re-run by oslo.db's wrap_db_retry while the database is
    unreachable, when [database] use_db_reconnect is on (read per call,
    so a process can turn it off after import). Every public db function
    is one transaction, so running it again starts from scratch."""
    # oslo.db's wrapper of ``fn`` for each set of option values, built
    # once: building it (the decorator and functools.wraps) on every
    # call cost more than the call's own Python (~10 us, twice per API
    # request). A built wrapper keeps no state between calls.
    built = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        opts = CONF.database
        key = (opts.use_db_reconnect, opts.db_retry_interval,
               opts.db_max_retries, opts.db_inc_retry_interval,
               opts.db_max_retry_interval)
        call = built.get(key)
        if call is None:
            call = built.setdefault(key, _with_retry(fn, *key))
        return call(*args, **kwargs)
    wrapper.retrying = True
    return wrapper


def wrap_module(namespace, exclude=()):
    """Wrap the public db functions in ``namespace`` (a module's
    globals()) with :func:`retrying`, once."""
    for name, value in list(namespace.items()):
        if (name.startswith('_') or name in exclude
                or not callable(value) or isinstance(value, type)
                or not getattr(value, '__module__', '').startswith(
                    'nova_moves.db.')
                or getattr(value, 'retrying', False)):
            continue
        namespace[name] = retrying(value)
