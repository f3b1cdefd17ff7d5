"""Engines of the cells v2 API database, and short-lived connections to
a cell's database named by its cell mapping.

``[api_database] connection`` unset (a one-cell deployment): the API
tables are in the [database] database and its engines are used, so the
API process keeps one pool. Set: an engine of its own, built the same
way (SQLite's fair write lock, oslo.db's engine and pool options)."""
import contextlib

import sqlalchemy as sa
from sqlalchemy import pool as sa_pool

from nova_moves import conf
from nova_moves.db import session

CONF = conf.CONF


_API = session.EngineCache()


def separate():
    """True when the API tables have a database of their own."""
    return bool(CONF.api_database.connection)


def get_engine(writer=True):
    url = CONF.api_database.connection
    if not url:
        return session.get_engine(writer)
    return _API.get(url, writer)


def dispose_engines():
    _API.dispose()


@contextlib.contextmanager
def tx(writer=True):
    """One Core transaction on the API database."""
    with get_engine(writer).begin() as conn:
        yield conn


@contextlib.contextmanager
def cell_connection(url):
    """A connection to a cell's database, for the operator commands that
    read it (discover_hosts, delete_cell, map_instances): no pool, closed
    on exit, so a command touching many cells holds nothing open."""
    engine = sa.create_engine(url, poolclass=sa_pool.NullPool)
    try:
        with engine.begin() as conn:
            yield conn
    finally:
        engine.dispose()
