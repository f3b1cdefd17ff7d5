"""db/keyset: the database's order, the Python sort and ``after`` agree,
NULLs included (lowest), for every direction of every key: what lets a
list read from several databases be merged and paged by marker."""
import itertools
import random

import sqlalchemy as sa
import testtools

from nova_moves.db import keyset

_META = sa.MetaData()
_TABLE = sa.Table(
    't', _META,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('name', sa.String(8)),
    sa.Column('size', sa.Integer),
    sa.Column('uuid', sa.String(8), nullable=False))


class KeysetTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.engine = sa.create_engine('sqlite://')
        _META.create_all(self.engine)
        rng = random.Random(7)
        self.rows = [{'id': i, 'name': rng.choice([None, 'a', 'b', 'B']),
                      'size': rng.choice([None, 1, 2]),
                      'uuid': '%08d' % rng.randrange(10 ** 8)}
                     for i in range(1, 25)]
        with self.engine.begin() as conn:
            conn.execute(_TABLE.insert(), self.rows)

    def read(self, order, after=None):
        query = sa.select(_TABLE).order_by(*keyset.order_by(_TABLE, order))
        if after is not None:
            query = query.where(keyset.after(_TABLE, after, order))
        with self.engine.connect() as conn:
            return [row.id for row in conn.execute(query)]

    def test_every_order_agrees(self):
        for dirs in itertools.product(('asc', 'desc'), repeat=2):
            order = (('name', dirs[0]), ('size', dirs[1]), ('uuid', 'asc'))
            expected = [r['id'] for r in keyset.sort(self.rows, order)]
            self.assertEqual(expected, self.read(order), order)
            by_id = {r['id']: r for r in self.rows}
            for index, row_id in enumerate(expected):
                self.assertEqual(expected[index + 1:],
                                 self.read(order, after=by_id[row_id]),
                                 (order, row_id))

    def test_null_lowest(self):
        order = (('name', 'asc'), ('uuid', 'asc'))
        names = [r['name'] for r in keyset.sort(self.rows, order)]
        nulls = names.count(None)
        self.assertEqual([None] * nulls, names[:nulls])
        order = (('name', 'desc'), ('uuid', 'asc'))
        names = [r['name'] for r in keyset.sort(self.rows, order)]
        self.assertEqual([None] * nulls, names[len(names) - nulls:])
