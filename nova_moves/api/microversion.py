"""Compute API microversions: negotiation and comparisons."""
import re

from nova_moves import exception

MIN_VERSION = '2.1'
MAX_VERSION = '2.104'
# One line per version nova_moves behaves differently at (or that Nova
# introduced and we accept); everything else carries over from Nova.
HISTORY = """
2.1   - the base v2.1 API
2.2   - os-keypairs: type (ssh, x509); create 201, delete 204
2.10  - os-keypairs: an admin names the user_id
2.11  - os-services: forced_down field and force-down action
2.14  - evacuate: onSharedStorage removed; adminPass only in the body
2.22  - server migrations: force_complete
2.23  - os-migrations: migration_type, links; server migrations list/show
2.24  - server migrations: abort (DELETE) of a running live migration
2.25  - os-migrateLive: block_migration may be "auto"; disk_over_commit gone
2.29  - evacuate: force
2.30  - os-migrateLive: force
2.34  - os-migrateLive: checks run asynchronously, reported as events
2.35  - os-keypairs: paging (limit, marker)
2.47  - servers: flavor embedded instead of a link
2.51  - instance actions: non-admins see events (without traceback)
2.53  - os-services and os-hypervisors identified by uuid
2.54  - rebuild: key_name (null unsets)
2.55  - flavors: description
2.56  - migrate: host (checked by the scheduler unless forced)
2.58  - instance actions: updated_at, paging, changes-since
2.59  - os-migrations: uuid, paging, changes-since
2.62  - instance action events: host (admin) and hostId
2.65  - server migrations: abort queued and preparing live migrations
2.66  - os-migrations and instance actions: changes-before
2.68  - os-migrateLive and evacuate: force removed
2.80  - os-migrations: user_id and project_id
2.84  - instance action events: details
2.88  - os-hypervisors: usage fields removed
2.92  - os-keypairs: public_key required (no generation); @ and . in names
2.95  - evacuate: the server is left stopped on the destination
2.96  - servers: pinned_availability_zone (show, detail, update, rebuild)
2.97  - server shares (Manila): not served here, the version only
2.98  - servers: the image's properties embedded in the server's image
2.99  - spice-direct consoles: not served here, the version only
2.100 - servers: the boot's scheduler_hints (show, detail, update, rebuild)
2.101 - volume attach answers 202: no volume API served here, the version only
2.102 - flavors: name filter, no rxtx_factor/disabled; unknown queries 400
2.103 - /os-volumes_boot removed: never served here (404 at every version)
2.104 - servers: PUT pinned_availability_zone (null unpins; re-pin in place)
"""

_FORMAT = re.compile(r'^([1-9]\d*)\.([1-9]\d*|0)$')


class APIVersion:

    def __init__(self, text):
        match = _FORMAT.match(text or '')
        if not match:
            raise exception.Invalid(
                reason='API version string %s format is not valid. It must '
                       'be MajorNum.MinorNum or latest.' % text)
        self.major, self.minor = int(match.group(1)), int(match.group(2))

    def _key(self):
        return (self.major, self.minor)

    def __eq__(self, other):
        return self._key() == APIVersion._coerce(other)._key()

    def __lt__(self, other):
        return self._key() < APIVersion._coerce(other)._key()

    def __le__(self, other):
        return self._key() <= APIVersion._coerce(other)._key()

    def __gt__(self, other):
        return self._key() > APIVersion._coerce(other)._key()

    def __ge__(self, other):
        return self._key() >= APIVersion._coerce(other)._key()

    def __hash__(self):
        return hash(self._key())

    @staticmethod
    def _coerce(value):
        return value if isinstance(value, APIVersion) else APIVersion(value)

    def __str__(self):
        return '%d.%d' % (self.major, self.minor)


class NotAcceptableVersion(exception.NovaMovesException):
    code = 406
    msg_fmt = ('Version %(version)s is not supported by the API. Minimum is '
               '%(min)s and maximum is %(max)s.')


def from_headers(headers):
    """The requested version; 2.1 when none is asked for."""
    text = None
    header = headers.get('OpenStack-API-Version')
    if header:
        for item in header.split(','):
            parts = item.strip().split()
            if len(parts) == 2 and parts[0].lower() == 'compute':
                text = parts[1]
    if text is None:
        text = headers.get('X-OpenStack-Nova-API-Version')
    if text is None:
        return APIVersion(MIN_VERSION)
    text = text.strip()
    if text.lower() == 'latest':
        return APIVersion(MAX_VERSION)
    version = APIVersion(text)
    if not APIVersion(MIN_VERSION) <= version <= APIVersion(MAX_VERSION):
        raise NotAcceptableVersion(version=text, min=MIN_VERSION,
                                   max=MAX_VERSION)
    return version
