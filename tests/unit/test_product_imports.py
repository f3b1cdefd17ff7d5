"""The product never imports the harness: the harness drives the product
from outside, and a deployment need not install its extras."""
import ast
import os
import subprocess
import sys

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

    def test_compute_agent_loads_no_database_module(self):
        """Compute agents never open the database: importing the agent
        (a fresh interpreter) loads no nova_moves.db module."""
        code = ('import sys; import nova_moves.compute.manager; '
                'print(sorted(m for m in sys.modules '
                'if m.startswith("nova_moves.db")))')
        out = subprocess.run([sys.executable, '-c', code], check=True,
                             capture_output=True, text=True).stdout
        self.assertEqual('[]', out.strip())

    def test_image_store_loads_no_database_or_flask(self):
        """Compute agents boot from the image store, so it is as pure as
        they are: importing it loads no nova_moves.db module and no
        flask."""
        code = ('import sys; import nova_moves.image_store; '
                'print(sorted(m for m in sys.modules '
                'if m.startswith(("nova_moves.db", "nova_moves.api", '
                '"flask"))))')
        out = subprocess.run([sys.executable, '-c', code], check=True,
                             capture_output=True, text=True).stdout
        self.assertEqual('[]', out.strip())

    def test_step_tables_import_only_states(self):
        """nova_moves/moves is pure: it imports nova_moves.states and
        itself, nothing else of the product."""
        offenders = []
        folder = os.path.join(ROOT, 'moves')
        for name in os.listdir(folder):
            if not name.endswith('.py'):
                continue
            offenders += [
                '%s: %s' % (name, mod)
                for mod in _imports(os.path.join(folder, name))
                if mod.startswith('nova_moves')
                and mod not in ('nova_moves', 'nova_moves.states')
                and not mod.startswith('nova_moves.moves')]
        self.assertEqual([], offenders)
