"""Without the [harness] extra (matplotlib, tqdm) the harness imports and
runs; only the pictures are skipped, with the install hint."""
import builtins
import contextlib
import importlib
import io
import sys

import testtools

MODULES = ('nova_moves.harness.timeline', 'nova_moves.harness.progress',
           'nova_moves.harness.cli')


class WithoutExtraTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        real = builtins.__import__

        def refuse(name, *args, **kwargs):
            if name.split('.')[0] in ('matplotlib', 'tqdm'):
                raise ImportError('No module named %r' % name)
            return real(name, *args, **kwargs)
        saved = {m: sys.modules.pop(m, None) for m in MODULES}
        self.addCleanup(self._restore, saved)
        builtins.__import__ = refuse
        self.addCleanup(setattr, builtins, '__import__', real)

    @staticmethod
    def _restore(saved):
        for name, module in saved.items():
            if module is not None:
                sys.modules[name] = module
            else:
                sys.modules.pop(name, None)

    def test_modules_import_and_pictures_are_skipped(self):
        timeline = importlib.import_module('nova_moves.harness.timeline')
        progress = importlib.import_module('nova_moves.harness.progress')
        cli = importlib.import_module('nova_moves.harness.cli')
        self.assertIsNone(progress.tqdm)
        self.assertRaises(ImportError, timeline.require)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual({}, cli._plot({}, '/nonexistent'))
        self.assertIn("nova_moves[harness]", err.getvalue())
