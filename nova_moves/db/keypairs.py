"""Key pairs (os-keypairs): a user's, unique by name per user, paged by
name as Nova pages them."""
from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_moves.db import models
from nova_moves import exception
from nova_moves.db.session import _session, _to_dict

__all__ = ['KeyPairExists', 'KeypairNotFound', 'KeypairLimitExceeded',
           'key_pair_create', 'key_pair_get', 'key_pair_get_all',
           'key_pair_count', 'key_pair_destroy']

_KP = models.KeyPair
# SQLite's plain engine raises IntegrityError, oslo.db's DBDuplicateEntry.
_DUPLICATE = (db_exc.DBDuplicateEntry, sa.exc.IntegrityError)


class KeyPairExists(exception.Conflict):
    msg_fmt = "Key pair '%(key_name)s' already exists."


class KeypairNotFound(exception.NotFound):
    msg_fmt = 'Keypair %(name)s not found for user %(user_id)s'


class KeypairLimitExceeded(exception.NovaMovesException):
    code = 403
    msg_fmt = 'Quota exceeded, too many key pairs.'


def _count(session, user_id):
    return session.scalar(sa.select(sa.func.count()).select_from(
        _KP.__table__).where(_KP.user_id == user_id))


def key_pair_create(values, allowed):
    """Insert one key pair when its user has fewer than ``allowed`` (-1:
    no limit), counted in the inserting transaction; a name the user
    already has is KeyPairExists (409)."""
    try:
        with _session() as session:
            if 0 <= allowed <= _count(session, values['user_id']):
                raise KeypairLimitExceeded()
            row = _KP(**values)
            session.add(row)
            session.flush()
            return _to_dict(row)
    except _DUPLICATE:
        raise KeyPairExists(key_name=values['name'])


def key_pair_get(user_id, name):
    with _session(writer=False) as session:
        row = session.scalars(sa.select(_KP).where(
            _KP.user_id == user_id, _KP.name == name)).first()
        if row is None:
            raise KeypairNotFound(name=name, user_id=user_id)
        return _to_dict(row)


def key_pair_get_all(user_id, limit=None, marker=None):
    """The user's key pairs by name; ``marker`` is the name the page
    before ended with (MarkerNotFound when the user has none of it)."""
    with _session(writer=False) as session:
        query = sa.select(_KP).where(_KP.user_id == user_id).order_by(
            _KP.name)
        if marker is not None:
            if session.scalar(sa.select(_KP.id).where(
                    _KP.user_id == user_id, _KP.name == marker)) is None:
                raise exception.MarkerNotFound(marker=marker)
            query = query.where(_KP.name > marker)
        if limit is not None:
            query = query.limit(limit)
        return [_to_dict(row) for row in session.scalars(query)]


def key_pair_count(user_id):
    with _session(writer=False) as session:
        return _count(session, user_id)


def key_pair_destroy(user_id, name):
    with _session() as session:
        deleted = session.execute(sa.delete(_KP).where(
            _KP.user_id == user_id, _KP.name == name)).rowcount
    if not deleted:
        raise KeypairNotFound(name=name, user_id=user_id)
