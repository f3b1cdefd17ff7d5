"""Empty Neutron and Glance endpoints for tools/run_tempest.py.

tempest skips every compute test class that wants a default network when
Neutron is unavailable, and its admin base class builds a Glance client;
nova_moves needs neither. With Neutron and Glance "available" and no
isolated networks, tempest only asks them for lists (security groups to
clean up, the image the tests boot from): this answers those, empty or
with the one image the stack serves, on loopback. Test scaffolding, not
part of the product.
"""
import http.server
import json
import re
import threading


def _image(image_id, name):
    return {'id': image_id, 'name': name, 'status': 'active',
            'visibility': 'public', 'container_format': 'bare',
            'disk_format': 'raw', 'size': 0, 'min_disk': 0, 'min_ram': 0,
            'tags': [], 'created_at': '2026-01-01T00:00:00Z',
            'updated_at': '2026-01-01T00:00:00Z'}


class _Handler(http.server.BaseHTTPRequestHandler):
    images = {}

    def log_message(self, *args):
        pass

    def _reply(self, status, body=None):
        data = b'' if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split('?', 1)[0].rstrip('/')
        match = re.fullmatch(r'/v2/images/([^/]+)', path)
        if match:
            image = self.images.get(match.group(1))
            return self._reply(200, image) if image else self._reply(
                404, {'message': 'image not found'})
        if path == '/v2/images':
            return self._reply(200, {'images': list(self.images.values())})
        match = re.fullmatch(r'/v2\.0/([a-z-]+)', path)
        if match:
            return self._reply(200, {match.group(1).replace('-', '_'): []})
        return self._reply(404, {'message': 'not served by the stub'})

    def do_DELETE(self):
        self._reply(204)


def start(images):
    """Serve on an ephemeral loopback port; returns (server, base_url).
    ``images`` is {id: name}."""
    handler = type('Handler', (_Handler,), {'images': {
        i: _image(i, name) for i, name in images.items()}})
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, 'http://127.0.0.1:%d' % server.server_address[1]
