"""The API's writes of the cells v2 instance mappings (Nova's API writes
them too): at boot, the server mapped to the cell it was created in (in
a one-cell deployment the only cell, or none before ``cell_v2
simple_cell_setup``, which maps it then), with its request spec; at
delete, queued_for_delete (the spec goes). api/cell_routing.py reads
them to route a request: doc/cells.md."""
from nova_moves import conf
from nova_moves.db import mappings

CONF = conf.CONF


def map_new(instance_uuid, project_id, user_id, cell_id=None, spec=None):
    """The new server's mapping, in its cell: ``cell_id`` (the cell the
    API chose, api/boot_cells.py), else the one whose database is this
    API's [database] connection, where its row is written next. With
    ``spec`` (db/request_specs.build) its request spec, in the same
    transaction."""
    if cell_id is not None:
        mappings.instance_mapping_create(instance_uuid, cell_id, project_id,
                                         user_id, spec=spec)
        return
    mappings.instance_mapping_for_boot(
        instance_uuid, project_id, user_id, CONF.database.connection,
        spec=spec)


def unmap(instance_uuid):
    """A boot undone before it was answered: it never existed."""
    mappings.instance_mapping_delete(instance_uuid)


def queue_for_delete(instance_uuid):
    mappings.instance_mapping_queue_for_delete(instance_uuid)
