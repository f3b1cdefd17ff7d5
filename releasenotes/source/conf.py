# Sphinx configuration for the nova_moves release notes (reno).
# Build with: tox -e releasenotes

extensions = ['reno.sphinxext']

project = 'nova_moves Release Notes'
copyright = '2026, nova_moves developers'
author = 'nova_moves developers'

# reno reads the notes from git; the version shown comes from the tags.
version = ''
release = ''

master_doc = 'index'
source_suffix = '.rst'
exclude_patterns = ['_build']
templates_path = []

html_theme = 'alabaster'
html_static_path = []
