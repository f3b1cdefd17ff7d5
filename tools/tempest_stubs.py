"""Neutron and Glance endpoints for tools/run_tempest.py.

tempest skips every compute test class that wants a default network when
Neutron is unavailable, and its admin base class builds a Glance client;
nova_moves needs neither. With Neutron and Glance "available" and no
isolated networks, tempest only asks Neutron for lists (security groups
to clean up), answered empty, and Glance for images: those requests are
passed, with the caller's token, to the stack's own images view
(GET /v2.1/images[/{id}], nova_moves/api/images.py), which serves the
images the stack boots and the snapshots shelve leaves, so tempest sees
what the compute API says exists. Loopback only. Test scaffolding, not
part of the product.
"""
import http.server
import json
import re
import threading
import urllib.error
import urllib.request


class _Handler(http.server.BaseHTTPRequestHandler):
    compute = None  # the stack's endpoint, .../v2.1

    def log_message(self, *args):
        pass

    def _reply(self, status, body=None):
        data = b'' if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _images(self):
        """GET /v2/images[/{id}][?query] -> the stack's /v2.1/images..."""
        request = urllib.request.Request(
            self.compute + self.path[len('/v2'):],
            headers={'X-Auth-Token': self.headers.get('X-Auth-Token', '')})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return self._reply(response.status, json.load(response))
        except urllib.error.HTTPError as exc:
            return self._reply(exc.code, {'message': exc.read().decode(
                'utf-8', 'replace')[:500]})

    def do_GET(self):
        path = self.path.split('?', 1)[0].rstrip('/')
        if re.fullmatch(r'/v2/images(/[^/]+)?', path):
            return self._images()
        match = re.fullmatch(r'/v2\.0/([a-z-]+)', path)
        if match:
            return self._reply(200, {match.group(1).replace('-', '_'): []})
        return self._reply(404, {'message': 'not served by the stub'})

    def do_DELETE(self):
        self._reply(204)


def start(compute_endpoint):
    """Serve on an ephemeral loopback port; returns (server, base_url).
    Image requests go to ``compute_endpoint`` (the stack's, .../v2.1)."""
    handler = type('Handler', (_Handler,), {
        'compute': compute_endpoint.rstrip('/')})
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, 'http://127.0.0.1:%d' % server.server_address[1]
