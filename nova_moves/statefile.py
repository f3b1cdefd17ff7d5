"""A small JSON file of a process's local state (the fake hypervisor's
guests, a compute's fence record): read whole, replaced atomically, so a
reader (or a restart) never sees half of it."""
import json
import os


def load(path):
    """Its content, {} when missing or unreadable (being first written)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def save(path, data):
    tmp = path + '.tmp'
    # dumps, not dump: json.dump streams through the pure-Python
    # encoder; dumps encodes in C in one pass (the fake hypervisor
    # rewrites its file on every guest change: half a compute's JSON).
    text = json.dumps(data)
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)
