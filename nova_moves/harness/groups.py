"""The scenario's server groups: created before the boot (2.64 bodies),
joined by the servers that name them, deleted by an attached run's
clean-up; the invariants check their policies after the run."""


def create(client, scenario):
    """{scenario name: group id} for ``scenario['server_groups']``."""
    return {group['name']: client.post(
        '/os-server-groups', {'server_group': group}, version='2.64',
        expect=200).json()['server_group']['id']
        for group in scenario.get('server_groups', [])}
