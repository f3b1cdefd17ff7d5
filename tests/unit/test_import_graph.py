"""The import graph of nova_moves has no cycles: no strongly connected
component of more than one module. Every import counts, including one
inside a function (a late import hides a cycle, it does not remove it);
``from pkg import name`` is an edge to ``pkg`` and to ``pkg.name`` when
that is a module."""
import ast
import os

import testtools

import nova_moves

ROOT = os.path.dirname(nova_moves.__file__)


def modules(root=ROOT, package='nova_moves'):
    """{module name: path} of every .py file under ``root``."""
    found = {}
    for directory, _dirs, files in os.walk(root):
        for name in files:
            if not name.endswith('.py'):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)[:-3].split(os.sep)
            if relative[-1] == '__init__':
                relative = relative[:-1]
            found['.'.join([package] + relative)] = path
    return found


def edges(found):
    """{module: set of the package's modules it imports}."""
    graph = {}
    for module, path in found.items():
        package = module if path.endswith('__init__.py') else \
            module.rsplit('.', 1)[0]
        with open(path) as source:
            tree = ast.parse(source.read(), path)
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ''
                if node.level:
                    parts = package.split('.')
                    parts = parts[:len(parts) - node.level + 1]
                    base = '.'.join(parts + ([base] if base else []))
                targets.add(base)
                targets.update('%s.%s' % (base, alias.name)
                               for alias in node.names)
        graph[module] = {t for t in targets if t in found and t != module}
    return graph


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan's
    algorithm, iterative: the graph is deeper than Python's stack)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


class ImportGraphTest(testtools.TestCase):

    def test_no_cycles(self):
        found = cycles(edges(modules()))
        self.assertEqual([], found, '\n'.join(
            'cycle of %d: %s' % (len(c), ', '.join(c)) for c in found))

    def test_the_analysis_sees_a_cycle(self):
        # A test that could not fail proves nothing: a two-module and a
        # three-module cycle beside an acyclic part.
        graph = {'a': {'b'}, 'b': {'a'}, 'c': {'d'}, 'd': {'e'},
                 'e': {'c', 'f'}, 'f': set()}
        self.assertEqual([['a', 'b'], ['c', 'd', 'e']],
                         sorted(cycles(graph)))

    def test_late_and_from_imports_are_edges(self):
        graph = edges(modules())
        # api/app.py imports the routing table, which imports handlers.
        self.assertIn('nova_moves.api.routes', graph['nova_moves.api.app'])
        self.assertIn('nova_moves.api.request',
                      graph['nova_moves.api.common'])
