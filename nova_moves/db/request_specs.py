"""The request specs in the API database (Nova's RequestSpec, trimmed to
what the API needs when a server's cell does not answer: the 2.69 show's
flavor, image, zone and owner), as plain dicts.

A spec is written with the server's instance mapping, in the same
transaction (db/mappings.py), and goes with it at delete. Like the
mappings it lives in the [database] database in a one-cell deployment
(db/api_session). Servers booted before the table have none."""
import json

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from nova_moves.db import api_models
from nova_moves.db import api_session
from nova_moves.db import session

LOG = logging.getLogger(__name__)

_SPECS = api_models.RequestSpec.__table__
# The flavor columns the server views render (api/views.flavor_in_server:
# Nova's 2.47 embedded flavor, and the id and link below 2.47).
FLAVOR_KEYS = ('flavorid', 'name', 'vcpus', 'memory_mb', 'root_gb',
               'ephemeral_gb', 'swap')


def flavor_of(flavor):
    """The spec's copy of a flavor (a flavors row or a server's; a key it
    lacks stays out, so the view's defaults apply as for the server)."""
    return {key: flavor[key] for key in FLAVOR_KEYS if key in flavor}


def build(flavor, image_ref, availability_zone, project_id, user_id):
    """A new server's spec: ``image_ref`` None for a volume-backed one,
    ``availability_zone`` None when none was asked for."""
    return {'flavor': flavor_of(flavor), 'image_id': image_ref or None,
            'availability_zone': availability_zone or None,
            'project_id': project_id, 'user_id': user_id}


def insert(conn, instance_uuid, spec):
    """The spec written in the caller's transaction on the API database
    (the instance mapping's)."""
    conn.execute(_SPECS.insert().values(
        instance_uuid=instance_uuid, spec=json.dumps(spec),
        created_at=session.utcnow()))


def delete(conn, instance_uuid):
    """The server's spec gone, in the caller's transaction."""
    conn.execute(_SPECS.delete().where(
        _SPECS.c.instance_uuid == instance_uuid))


def create(instance_uuid, spec):
    """A spec of its own (the instance mapping written before); False
    when the server has one already."""
    try:
        with api_session.tx() as conn:
            insert(conn, instance_uuid, spec)
    except db_exc.DBDuplicateEntry:
        return False
    return True


def fill(cell_id, instances):
    """Specs for those of ``instances`` (a cell's rows: uuid, project_id,
    user_id, deleted, flavor, image_ref, requested_az) that are live,
    mapped to that cell and have none: the servers booted before the
    table (``cell_v2 map_instances``, ``simple_cell_setup``). A copy of a
    server mapped to another cell (a cross-cell move's) is left out. The
    number written."""
    mappings_ = api_models.InstanceMapping.__table__
    written = 0
    with api_session.tx() as conn:
        mapped = {row[0] for row in conn.execute(
            sa.select(mappings_.c.instance_uuid).where(
                mappings_.c.cell_id == cell_id))}
        have = {row[0] for row in conn.execute(
            sa.select(_SPECS.c.instance_uuid))}
        for inst in instances:
            if inst['deleted'] or inst['uuid'] not in mapped - have:
                continue
            flavor = inst['flavor']
            if isinstance(flavor, str):
                flavor = json.loads(flavor)
            insert(conn, inst['uuid'], build(
                flavor or {}, inst['image_ref'], inst['requested_az'],
                inst['project_id'], inst['user_id']))
            written += 1
    return written


def get(instance_uuid):
    """The server's spec (a dict), or None."""
    with api_session.tx(writer=False) as conn:
        text = conn.execute(sa.select(_SPECS.c.spec).where(
            _SPECS.c.instance_uuid == instance_uuid)).scalar()
    return None if text is None else json.loads(text)


def update(instance_uuid, **changes):
    """The spec's ``flavor`` (a resize confirmed or reverted) and/or
    ``availability_zone`` (the zone asked for changed: a 2.104 pin, an
    unshelve into a zone) replaced; False when the server has no spec."""
    if 'flavor' in changes:
        changes['flavor'] = flavor_of(changes['flavor'])
    with api_session.tx() as conn:
        text = conn.execute(sa.select(_SPECS.c.spec).where(
            _SPECS.c.instance_uuid == instance_uuid)).scalar()
        if text is None:
            return False
        conn.execute(_SPECS.update().where(
            _SPECS.c.instance_uuid == instance_uuid).values(
                spec=json.dumps(dict(json.loads(text), **changes)),
                updated_at=session.utcnow()))
    return True


def keep(instance_uuid, **changes):
    """update for a caller whose own change is made already and must not
    fail on this one (a confirm's start, also in a conductor; the API
    after a cell's write): the spec only feeds the show of a server whose
    cell is down, so a write that fails -- a cells conductor without
    [api_database] connection, whose own database has no such table --
    is logged and the caller goes on."""
    try:
        update(instance_uuid, **changes)
    except (sa.exc.SQLAlchemyError, db_exc.DBError) as exc:
        LOG.warning('Could not update the request spec of %s (%s): %s',
                    instance_uuid, ', '.join(sorted(changes)), exc)
