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
    with open(tmp, 'w') as f:
        json.dump(data, f)
    os.replace(tmp, path)
