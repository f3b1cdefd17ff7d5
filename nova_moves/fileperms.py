"""Files a service writes (the SQLite database, the fake hypervisor's and
the file:// coordination backend's state, log files, RPC statistics) are
not for other users of the host: 0640 files, 0750 directories, however
the service was started (systemd's UMask=0027 says the same for the
units in etc/systemd)."""
import os

UMASK = 0o027


def restrict():
    """Add UMASK to the process's umask (never loosens a stricter one).
    Once, at start, before any file is opened."""
    os.umask(os.umask(UMASK) | UMASK)
