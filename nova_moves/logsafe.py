"""One log record, one line: control characters escaped.

Request values (a path with ``%0A``, a header, a server name) reach log
messages; a raw CR/LF would let a client write a line of its own choosing
at column 0 of our logs, and ESC sequences would drive the terminal of
whoever reads them. ``escape`` renders C0, DEL, C1 and the Unicode line
separators as ``\\xNN``/``\\uNNNN``. ``install`` puts ``EscapeControl`` on
the root logger's handlers (oslo.log's), so every message, whichever
module and library logs it, is escaped once it is formatted. Tracebacks
are not part of the message: oslo.log's formatter prefixes each of their
lines itself.
"""
import logging
import re

_UNSAFE = re.compile('[\x00-\x1f\x7f-\x9f\u2028\u2029]')


def _code(match):
    char = ord(match.group())
    return '\\x%02x' % char if char <= 0xff else '\\u%04x' % char


def escape(text):
    """``text`` with every control character written as an escape."""
    return _UNSAFE.sub(_code, text)


class EscapeControl(logging.Filter):
    """Formats the record's message once and escapes it."""

    def filter(self, record):
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - logging reports it itself
            return True
        if not isinstance(message, str):
            message = str(message)
        if _UNSAFE.search(message):
            record.msg, record.args = escape(message), None
        return True


def install(logger=None):
    """Add EscapeControl to every handler of ``logger`` (root), once."""
    logger = logger or logging.getLogger()
    for handler in logger.handlers:
        if not any(isinstance(f, EscapeControl) for f in handler.filters):
            handler.addFilter(EscapeControl())
