"""What an instance fault and an Error event say, and to whom.

As Nova stores them (compute/utils exception_to_dict): the message is the
exception's own formatted message (a class name for an exception of
someone else's, whose text may hold anything), at most 255 characters;
the code is the exception's, 500 for NoValidHost and its kind (the API
answers a synchronous NoValidHost with 400, but the fault Nova records
for a failed build or move says 500); the traceback goes to ``details``,
which only admins see.

The owner of an ERROR server sees the message, so it must not carry a
traceback (oslo.messaging appends the remote one to ``str()`` of an
exception that crossed RPC), install paths or the names of our hosts:
``owner_text`` keeps the first line and masks host names. The database
writes go through it (nova_moves/db/fault_text.py, with every known host
name), and so does what the API shows a non-admin (older rows).
"""
import re
import traceback

from nova_moves import exception

MESSAGE_MAX = 255
HOST_MASK = '***'
# Nova records these as 500 whatever the API would answer.
_SERVER_SIDE = (exception.NoValidHost,)


def code(exc):
    if isinstance(exc, _SERVER_SIDE):
        return 500
    return getattr(exc, 'code', None) or 500


def message(exc):
    """The exception's own message, first line only; the class name when
    it is not one of ours."""
    text = getattr(exc, 'message', None)
    if not isinstance(exc, exception.NovaMovesException) or \
            not isinstance(text, str) or not text.strip():
        # A remote exception's class carries oslo.messaging's suffix.
        return type(exc).__name__.replace('_Remote', '')
    return text.strip().splitlines()[0][:MESSAGE_MAX]


def details(exc):
    """The traceback (a remote exception's str() holds the remote one)."""
    return ''.join(traceback.format_exception(type(exc), exc,
                                              exc.__traceback__))


def from_exc(exc, host=None):
    """{code, message, details, host}: a fault as the db move functions
    and instance_fault_create take it."""
    return {'code': code(exc), 'message': message(exc),
            'details': details(exc), 'host': host}


def owner_text(text, hosts=()):
    """``text`` fit for a non-admin: its first line, every name in
    ``hosts`` masked (as a whole word), at most MESSAGE_MAX characters."""
    if not text:
        return text
    lines = text.strip().splitlines()
    first = lines[0] if lines else ''
    names = sorted({h for h in hosts if h}, key=len, reverse=True)
    if names:
        pattern = r'(?<![\w.-])(%s)(?![\w-]|\.\w)' % '|'.join(
            re.escape(name) for name in names)
        first = re.sub(pattern, HOST_MASK, first)
    return first[:MESSAGE_MAX]


_LAST_LINE = re.compile(r'^([A-Za-z_][\w.]*): (.*)$')


def message_from_traceback(text):
    """An Error event's message from its traceback when the writer gave
    none: the exception line's message for one of ours, else the class
    name (as ``message``)."""
    lines = [line for line in (text or '').strip().splitlines()
             if line.strip()]
    if not lines:
        return None
    match = _LAST_LINE.match(lines[-1].strip())
    if not match:
        return None
    name, text = match.groups()
    if name.startswith('nova_moves.') and text.strip():
        return text.strip()[:MESSAGE_MAX]
    return name.rsplit('.', 1)[-1].replace('_Remote', '')
