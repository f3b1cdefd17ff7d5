"""The openstack client's plugin interface (osc-lib conventions)."""
from osc_lib import utils

API_NAME = 'moves'
API_VERSION_OPTION = 'os_moves_api_version'
DEFAULT_API_VERSION = '1'
# Only a command group version: each command picks its compute
# microversion itself (nova_moves.osc.common.microversion).
API_VERSIONS = ('1',)


def make_client(instance):
    """client_manager.moves: an apiclient.Client on the compute
    endpoint, authenticated by the openstack client's session."""
    from nova_moves import apiclient
    endpoint = instance.get_endpoint_for_service_type(
        'compute', region_name=instance.region_name,
        interface=instance.interface)
    return apiclient.Client(endpoint, auth_session=instance.session)


def build_option_parser(parser):
    parser.add_argument(
        '--os-moves-api-version', metavar='<moves-api-version>',
        default=utils.env('OS_MOVES_API_VERSION',
                          default=DEFAULT_API_VERSION),
        help='nova_moves plugin command group version (default 1, env '
             'OS_MOVES_API_VERSION)')
    return parser
