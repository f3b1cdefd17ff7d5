"""Engines, sessions and the row helpers every db module shares."""
import contextlib
import datetime
import fcntl
import functools
import os
import re
import threading
import time

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import engines
from oslo_db.sqlalchemy import exc_filters
from oslo_log import log as logging
import sqlalchemy as sa
from sqlalchemy import orm

from nova_moves import cells
from nova_moves import conf
from nova_moves.db import engine_opts
from nova_moves.db import sqlstats

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class EngineCache:
    """One database's writer and reader engines, built on first use and
    rebuilt when its URL changes (the [database] one here, the
    [api_database] one in db/api_session)."""

    def __init__(self, other_cell=False):
        self.lock = threading.Lock()
        self.writer = self.reader = self.url = None
        self.other_cell = other_cell

    def get(self, url, writer=True):
        with self.lock:
            if self.writer is None or self.url != url:
                self.url = url
                self.writer = _make_engine(url, immediate=True,
                                           other_cell=self.other_cell)
                # SQLite readers must not take the write lock at BEGIN.
                self.reader = (_make_engine(url, immediate=False)
                               if url.startswith('sqlite') else self.writer)
        return self.writer if writer else self.reader

    def dispose(self):
        with self.lock:
            for engine in {self.writer, self.reader} - {None}:
                engine.dispose()
            self.writer = self.reader = self.url = None


_MAIN = EngineCache()


class _CellEngines:
    """The engines of the other cells' databases this process reaches
    inside cells.target (the API, per server), one EngineCache each."""
    lock = threading.Lock()
    by_url = {}

    @classmethod
    def get(cls, url, writer):
        with cls.lock:
            cache = cls.by_url.get(url)
            if cache is None:
                cache = cls.by_url[url] = EngineCache(other_cell=True)
        return cache.get(url, writer)

    @classmethod
    def dispose(cls):
        with cls.lock:
            caches, cls.by_url = list(cls.by_url.values()), {}
        for cache in caches:
            cache.dispose()


def _configure_sqlite(engine, immediate):
    @sa.event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, _record):
        # Let SQLAlchemy, not pysqlite, decide when transactions begin.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute('PRAGMA journal_mode=WAL')
        cursor.execute('PRAGMA busy_timeout=60000')
        cursor.execute('PRAGMA synchronous=NORMAL')
        cursor.close()

    @sa.event.listens_for(engine, 'begin')
    def _on_begin(conn):
        # A deferred transaction that reads and then writes fails at once
        # with SQLITE_BUSY when another process wrote in between; taking the
        # write lock up front makes writers queue on busy_timeout instead.
        if not immediate:
            conn.exec_driver_sql('BEGIN')
            return
        _fair_write_lock(conn, True)
        try:
            conn.exec_driver_sql('BEGIN IMMEDIATE')
        except Exception:
            _fair_write_lock(conn, False)
            raise

    if immediate and engine.url.database not in (None, '', ':memory:'):
        _add_fair_write_lock(engine, engine.url.database + '.writelock')


def _add_fair_write_lock(engine, lock_path):
    """SQLite's busy handler polls with a growing sleep (up to 100 ms), so
    under many concurrent writers an early waiter keeps losing the write
    lock to newcomers and waits seconds (the API's 202 waited up to 4 s
    behind conductor and compute writes). Writers first queue on a
    blocking flock of a lock file next to the database: the kernel wakes
    a waiter as soon as the holder commits, and nobody sleeps-and-polls.
    One open file per connection, so threads of one process queue too."""

    @sa.event.listens_for(engine, 'connect')
    def _open_lock(dbapi_conn, record):
        record.info['write_lock'] = open(lock_path, 'a+')

    @sa.event.listens_for(engine, 'close')
    def _close_lock(dbapi_conn, record):
        lock = record.info.pop('write_lock', None)
        if lock is not None:
            lock.close()

    @sa.event.listens_for(engine, 'commit')
    def _after_commit(conn):
        _fair_write_lock(conn, False)

    @sa.event.listens_for(engine, 'rollback')
    def _after_rollback(conn):
        _fair_write_lock(conn, False)


def _fair_write_lock(conn, take):
    lock = conn.connection.info.get('write_lock')
    if lock is None:
        return
    fcntl.flock(lock.fileno(), fcntl.LOCK_EX if take else fcntl.LOCK_UN)


# Drivers whose connect() takes libpq's options / MySQL's init_command.
_IDLE_DRIVERS = {('postgresql', 'psycopg2'), ('postgresql', 'psycopg'),
                 ('mysql', 'pymysql'), ('mysql', 'mysqldb'),
                 ('mariadb', 'pymysql'), ('mariadb', 'mysqldb')}


def _set_idle_timeout(engine, seconds):
    """Idle pooled connections are closed by the server after
    ``seconds``: a process keeps up to max_pool_size connections after a
    burst, and all of them together would hold max_connections forever,
    locking out a process that lost its own (an idle API worker
    answered 503 for minutes). The pre-ping reopens a closed one. Set
    when each connection opens (libpq / PyMySQL connect options)."""
    name = engine.dialect.name
    if not seconds or (name, engine.dialect.driver) not in _IDLE_DRIVERS:
        return

    @sa.event.listens_for(engine, 'do_connect')
    def _on_connect(_dialect, _record, _cargs, cparams):
        if name == 'postgresql':
            # libpq startup options (the setting needs PostgreSQL 14+;
            # older servers refuse the connection: set 0 there).
            cparams['options'] = ('%s -c idle_session_timeout=%d' % (
                cparams.get('options', ''), seconds * 1000)).strip()
        elif 'init_command' not in cparams:
            cparams['init_command'] = (
                'SET SESSION wait_timeout = %d' % seconds)

    # Reuse the connection given back last (LIFO): the periodic tasks of
    # an idle conductor then keep one or two connections busy and let
    # the rest time out, instead of touching each in turn (FIFO) and
    # keeping all of them alive. (oslo.db has no pool_use_lifo option.)
    queue = getattr(engine.pool, '_pool', None)
    if hasattr(queue, 'use_lifo'):
        queue.use_lifo = True
    # oslo.db opened one connection to test the URL, before this: drop
    # it so every pooled connection has the timeout.
    engine.dispose()


def _make_engine(url, immediate, other_cell=False):
    if url.startswith('sqlite'):
        path = sa.engine.make_url(url).database
        if path and path != ':memory:':
            # The embedded default lives under state_path: create it.
            os.makedirs(os.path.dirname(os.path.abspath(path)),
                        exist_ok=True)
        # oslo.db emits its own plain BEGIN for SQLite; we need IMMEDIATE
        # for writers, so SQLite engines are built here.
        engine = sa.create_engine(
            url, connect_args={'timeout': 60, 'check_same_thread': False},
            pool_size=CONF.database.max_pool_size or 5,
            max_overflow=CONF.database.max_overflow or 10)
        _configure_sqlite(engine, immediate)
        # oslo.db's translation (DBDuplicateEntry, DBDeadlock, ...), so
        # callers catch the same errors on every database.
        exc_filters.register_engine(engine)
    else:
        # oslo.db's engine pings each connection at checkout
        # (pool_pre_ping) and reopens one the server closed or lost.
        kwargs = engine_opts.engine_kwargs(CONF)
        if other_cell:
            # Another cell's database (the API's lists and per-server
            # reads): no connection test at build time, whose [database]
            # max_retries x retry_interval (100 s by default) would hold
            # every request reading a down cell; the first read fails at
            # once, and the engine reconnects once the cell is back.
            kwargs['max_retries'] = 0
        engine = engines.create_engine(url, **kwargs)
        _set_idle_timeout(engine, CONF.database.idle_connection_timeout)
    sqlstats.attach(engine)
    return engine


def get_engine(writer=True):
    cell = cells.current()
    own = CONF.database.connection
    if cell is None or cell.database_connection in (own, None, ''):
        return _MAIN.get(own, writer)
    return _CellEngines.get(cell.database_connection, writer)


def dispose_engines():
    _MAIN.dispose()
    _CellEngines.dispose()


@contextlib.contextmanager
def _session(writer=True):
    session = orm.Session(bind=get_engine(writer), expire_on_commit=False)
    try:
        with session.begin():
            yield session
    finally:
        session.close()


@contextlib.contextmanager
def _tx(writer=True):
    """A Core transaction on a plain Connection: what the move steps and
    hot reads use. It has the Session's execute/scalars but none of its
    bookkeeping, which cost the conductor ~10% of its CPU per move."""
    with get_engine(writer).begin() as conn:
        yield conn


def _retry_on_deadlock(fn):
    def wrapper(*args, **kwargs):
        for attempt in range(10):
            try:
                return fn(*args, **kwargs)
            except db_exc.DBDeadlock:
                if attempt == 9:
                    raise
                time.sleep(0.01 * (attempt + 1))
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _to_dict(row):
    if row is None:
        return None
    values = {}
    for column in row.__table__.columns:
        value = getattr(row, column.name)
        if isinstance(value, datetime.datetime):
            value = value.isoformat()
        values[column.name] = value
    return values


def _row_dict(row):
    """A Core result row as _to_dict would give its ORM object."""
    return {key: value.isoformat() if isinstance(value, datetime.datetime)
            else value for key, value in row._mapping.items()}


def _rows_dicts(result):
    """_row_dict of every row of a Core result, the keys read once (a
    row's _mapping costs more than its values: a list of 1,000 servers
    took 9 ms of row mapping, now 3)."""
    keys = list(result.keys())
    out = []
    for row in result:
        values = dict(zip(keys, row))
        for key, value in values.items():
            if isinstance(value, datetime.datetime):
                values[key] = value.isoformat()
        out.append(values)
    return out


def _parse_time(value):
    if value is None or isinstance(value, datetime.datetime):
        return value
    return datetime.datetime.fromisoformat(value)


def _id_or_uuid(ident, not_found):
    """('id', int) or ('uuid', str): the column a row is looked up by."""
    ident = str(ident)
    # ASCII digits only ('²'.isdigit() is true) and within the Integer
    # column: anything else is no row, not a database error.
    if re.fullmatch(r'[0-9]{1,10}', ident):
        if int(ident) > 2 ** 31 - 1:
            raise not_found()
        return 'id', int(ident)
    return 'uuid', ident


@functools.lru_cache(maxsize=64)
def _select_by(table, column):
    # Built once per table: statement building costs more than running it.
    return sa.select(table).where(table.c[column] == sa.bindparam('ident'))


def _row_by_id_or_uuid(session, table, ident, not_found):
    """A Core row by integer id or uuid; ``not_found()`` raises."""
    column, value = _id_or_uuid(ident, not_found)
    row = session.execute(_select_by(table, column),
                          {'ident': value}).first()
    if row is None:
        raise not_found()
    return row


def _get_by_id_or_uuid(model, ident, not_found):
    """A row by integer id or by uuid, as a dict; ``not_found()`` raises.
    Core, not the ORM: it is read on every move step."""
    with _tx(writer=False) as session:
        return _row_dict(_row_by_id_or_uuid(session, model.__table__, ident,
                                            not_found))
