"""Integer query parameters: the one place a view turns one into an int.

Every integer a client can put in a query string is declared in
``INTEGERS`` with the range the API accepts; ``int_arg`` reads it and
answers a 400 naming the parameter when it is not a plain decimal
integer or lies outside that range. The ranges are what every database
column and OFFSET/LIMIT clause holds on SQLite, MySQL and PostgreSQL
(32-bit), so no value that passes can become a database error (a 500).

A leaf module: handlers import it, it imports no handler."""
import re

import flask

from nova_moves.api import input_guard
from nova_moves import exception

INT32_MAX = 2 ** 31 - 1
INT32_MIN = -2 ** 31

# name -> (lowest, highest) accepted.
INTEGERS = {
    # Paging: limit is then capped by [api] max_limit (Nova's min()).
    'limit': (0, INT32_MAX),
    'offset': (0, INT32_MAX),
    # GET /flavors filters, compared with the flavors' Integer columns.
    'minRam': (INT32_MIN, INT32_MAX),
    'minDisk': (INT32_MIN, INT32_MAX),
}
# ASCII digits only ('²'.isdigit() is true and int() refuses it; int()
# also takes ' 1', '1_000' and '+1', which no client means).
_INTEGER = re.compile(r'-?[0-9]{1,40}')


def invalid(name, value):
    low, high = INTEGERS[name]
    return exception.ValidationError(
        detail='Invalid input for query parameters %s. Value: %s. It must '
               'be an integer from %d to %d.'
               % (name, input_guard.excerpt(value), low, high))


def parse_int(name, value):
    """``value`` (a query string's text) as parameter ``name``'s int, or
    the 400 naming it."""
    low, high = INTEGERS[name]
    if not isinstance(value, str) or not _INTEGER.fullmatch(value):
        raise invalid(name, value)
    number = int(value)
    if not low <= number <= high:
        raise invalid(name, value)
    return number


def int_arg(name, default=None):
    """Query parameter ``name`` of the current request as an int
    (``default`` when absent), range-checked against ``INTEGERS``."""
    value = flask.request.args.get(name)
    if value is None:
        return default
    return parse_int(name, value)
