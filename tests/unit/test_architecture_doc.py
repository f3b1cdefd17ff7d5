"""doc/architecture.md's pictures and step tables are generated from
nova_moves/moves (render.py): the committed document must be what the
tables render now."""
import testtools

from nova_moves.moves import render


class ArchitectureDocTest(testtools.TestCase):

    def test_the_document_is_what_the_tables_render(self):
        with open(render.DOC) as f:
            text = f.read()
        self.assertEqual(render.spliced(text), text,
                         'run: python -m nova_moves.moves.render --write')

    def test_every_table_is_drawn(self):
        out = render.render()
        for name, module in render.tables():
            self.assertIn('### `%s`' % name, out)
            for step in module.STEPS:
                self.assertIn('`%s`' % step.name, out)

    def test_a_changed_row_changes_the_document(self):
        # It can fail: a table edit without the document's.
        from nova_moves.moves import evacuate
        before = render.render()
        row = evacuate.STEPS[1]
        changed = row._replace(end=row.end._replace(to_status='completed'))
        self.patch(evacuate, 'STEPS',
                   (evacuate.STEPS[0], changed) + evacuate.STEPS[2:])
        self.assertNotEqual(before, render.render())
