"""The product never imports the harness: the harness drives the product
from outside, and a deployment need not install its extras."""
import ast
import os

import testtools

import nova_moves

ROOT = os.path.dirname(nova_moves.__file__)
# The harness itself and its console script.
HARNESS = (os.path.join(ROOT, 'harness'),
           os.path.join(ROOT, 'cmd', 'harness.py'))


def _imports(path):
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            for alias in node.names:
                yield '%s.%s' % (node.module, alias.name)


class ProductImportsTest(testtools.TestCase):

    def test_no_product_module_imports_the_harness(self):
        offenders = []
        for dirpath, _, files in os.walk(ROOT):
            for name in files:
                path = os.path.join(dirpath, name)
                if not name.endswith('.py') or path.startswith(HARNESS):
                    continue
                offenders += ['%s: %s' % (os.path.relpath(path, ROOT), mod)
                              for mod in _imports(path)
                              if mod.startswith('nova_moves.harness')]
        self.assertEqual([], offenders)
