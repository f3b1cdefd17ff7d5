"""The openstackclient plugin (``openstack host drain ...``, ``openstack
server move ...``): setup.cfg's ``openstack.cli.extension`` entry point
names nova_moves.osc.plugin, the commands are in ``openstack.moves.v1``.

It talks to the compute API through nova_moves.apiclient over the
openstack client's own keystoneauth session, not through openstacksdk:
the SDK pins live migration to microversion 2.30 and OSC's ``server
migration show`` hands the SDK its arguments in the wrong order, so
going around both is the workaround (doc/osc-plugin.md)."""
