"""Free TCP ports for the processes the harness starts (API, private
RabbitMQ nodes, private PostgreSQL clusters), taken below the kernel's
ephemeral range.

A port the kernel hands out for bind(0) is also what it hands out as the
local port of every outgoing connection. A fault test kills a broker or
a database and starts it again on the same port; meanwhile any client on
the machine (the suite runs three workers) may be given that port for
its own connection, and the restarted server then cannot listen on it,
or a client reconnecting to it connects to itself. No outgoing
connection is ever given a port below the ephemeral range."""
import random
import socket

# The machine's own services: never chosen, even when free.
MACHINE_PORTS = frozenset({4369, 5432, 5672, 6379, 3306, 15672, 25672})
LOWEST = 10000


def _ephemeral_low():
    try:
        with open('/proc/sys/net/ipv4/ip_local_port_range') as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def free_port():
    """A port no process listens on now, below the ephemeral range."""
    high = max(LOWEST + 1000, _ephemeral_low())
    for _ in range(200):
        port = random.randrange(LOWEST, high)
        if port in MACHINE_PORTS:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(('127.0.0.1', port))
            except OSError:
                continue
        return port
    raise RuntimeError('no free port in [%d, %d)' % (LOWEST, high))
