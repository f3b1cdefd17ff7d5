"""kombu's ``Connection.autoretry`` without a class built per call.

oslo.messaging's rabbit driver runs every publish and every consume
iteration through ``kombu.Connection.autoretry`` (impl_rabbit
``Connection.ensure``), and kombu's autoretry defines a class
(``Revival``) inside the function: one new class per message. A class
is a reference cycle (its ``__mro__``, its ``__dict__``), so each one is
garbage only the cyclic collector frees: ~2,850 of them in ~20 s of
moves in one compute (``gc.DEBUG_SAVEALL``, doc/performance.md), and
building them was 3-4 % of a compute's CPU (py-spy). Neither
oslo.messaging nor kombu has an option for it.

install() replaces autoretry with the same logic around one module-level
class. The one path it does not copy — a call made without a channel,
which kombu 5.7 connects with the call's own retry policy — is left to
kombu's own function (oslo.messaging passes its current channel; it is
None only after a connection error). It is installed only when kombu's
function is the one this was written against (it defines ``Revival``);
tests/unit/test_kombu_autoretry.py fails when a kombu upgrade changes
that, so the copy is looked at again rather than silently kept.
"""
import kombu

_ORIGINAL = kombu.Connection.autoretry


class _Revival:
    """What kombu's per-call ``Revival`` class is, as instances: the
    operation, and the channel it runs on (replaced by ``revive`` when
    ``Connection.ensure`` reconnects)."""

    def __init__(self, fun, channel):
        self.fun = fun
        self.channel = channel
        # Connection.ensure names its wrapper after these.
        self.__name__ = getattr(fun, '__name__', None)
        self.__module__ = getattr(fun, '__module__', None)
        self.__doc__ = getattr(fun, '__doc__', None)

    def revive(self, channel):
        self.channel = channel

    def __call__(self, *args, **kwargs):
        return self.fun(*args, channel=self.channel, **kwargs), self.channel


def autoretry(self, fun, channel=None, **ensure_options):
    if channel is None:
        return _ORIGINAL(self, fun, channel=channel, **ensure_options)
    revive = _Revival(fun, channel)
    return self.ensure(revive, revive, **ensure_options)


def known():
    """True when kombu's autoretry is the one copied here (it builds a
    ``Revival`` class per call)."""
    return any(getattr(const, 'co_name', None) == 'Revival'
               for const in _ORIGINAL.__code__.co_consts)


def install():
    """Idempotent; does nothing on a kombu whose autoretry is not the
    known one."""
    if known():
        kombu.Connection.autoretry = autoretry
    return kombu.Connection.autoretry is autoretry
