"""Which servers a scenario phase acts on: ``all``, or those matching
every given key of ``{"name": prefix, "host": h, "status": s,
"first": n}`` as the status poller last saw them (deleted ones never)."""


def select(servers, view_of, selection):
    """``view_of(server_id)``: the poller's last view of the server."""
    candidates = []
    for server in servers:
        view = view_of(server['id']) or {}
        if view.get('status') != 'DELETED':
            candidates.append((server, view))
    if selection == 'all':
        return [server for server, _ in candidates]
    out = []
    for server, view in candidates:
        if 'name' in selection and not server['name'].startswith(
                selection['name']):
            continue
        if 'host' in selection and view.get(
                'OS-EXT-SRV-ATTR:host') != selection['host']:
            continue
        if 'status' in selection and view.get('status') != \
                selection['status']:
            continue
        out.append(server)
    if 'first' in selection:
        out = out[:selection['first']]
    return out
