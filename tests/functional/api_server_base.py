"""What the API server tests (test_api_server, test_api_http) share:
nova-moves-api as an operator runs it, gunicorn with 2 workers x 4
threads, short connection timeouts and oslo.middleware's options on."""
from tests.functional import base


class APIServerTestCase(base.StackTestCase):
    EXTRA_CONF = {'DEFAULT': {'debug': 'false'},
                  'api': {'workers': 2, 'threads': 4,
                          'graceful_shutdown_timeout': 30,
                          'keep_alive_timeout': 3, 'body_timeout': 6},
                  'cors': {'allowed_origin': 'https://dashboard.example'},
                  'oslo_middleware': {'enable_proxy_headers_parsing': 'true',
                                      'max_request_body_size': 4096}}
