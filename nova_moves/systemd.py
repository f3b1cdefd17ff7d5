"""sd_notify without a dependency: one datagram to $NOTIFY_SOCKET, and
the WATCHDOG=1 pings a unit with WatchdogSec= expects."""
import os
import socket
import time


def notify(state):
    address = os.environ.get('NOTIFY_SOCKET')
    if not address:
        return False
    if address.startswith('@'):
        address = '\0' + address[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.connect(address)
        sock.sendall(state.encode())
    return True


def watchdog_interval():
    """Seconds between two WATCHDOG=1 (half of WatchdogSec=), or None when
    systemd watches no process, or another one (WATCHDOG_PID)."""
    usec = os.environ.get('WATCHDOG_USEC')
    pid = os.environ.get('WATCHDOG_PID')
    if not usec or not usec.isdigit() or int(usec) == 0:
        return None
    if pid and pid.isdigit() and int(pid) != os.getpid():
        return None
    return int(usec) / 2e6


def watchdog_ping(due):
    """Send WATCHDOG=1 if the monotonic time ``due`` has passed; return
    when the next one is due (a main loop calls this every turn)."""
    interval = watchdog_interval()
    if interval is None:
        return due
    now = time.monotonic()
    if now >= due:
        notify('WATCHDOG=1')
        return now + interval
    return due
