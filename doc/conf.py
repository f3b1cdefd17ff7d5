# Sphinx configuration for the documentation site (tox -e docs): the
# Markdown pages of doc/ as they are, through myst-parser.
extensions = ['myst_parser']

project = 'nova_moves'
copyright = '2026, nova_moves developers'
author = 'nova_moves developers'

root_doc = 'index'
source_suffix = {'.md': 'markdown'}
exclude_patterns = ['build', '_build']
templates_path = []
html_theme = 'alabaster'
html_static_path = []
# Pages link to the repository's own files (README.md, tools/, tests/);
# those are not pages of the site.
suppress_warnings = ['myst.xref_missing', 'myst.header',
                     'misc.highlighting_failure']
myst_heading_anchors = 3
