"""The scenarios shipped with nova-moves-harness (YAML files; see
doc/harness.md). A package so that installs from a wheel carry them."""
