"""[api_database]: where the cells v2 mappings live (Nova's API database).

Unset (the default) means a one-cell deployment: the API tables are kept
in the [database] connection database next to the cell's own tables, so
a deployment made before cells needs no new option.
"""
from oslo_config import cfg

api_db_group = cfg.OptGroup('api_database', title='API database options',
                            help='The cells v2 API database: cell, host '
                                 'and instance mappings.')

api_db_opts = [
    cfg.StrOpt('connection', secret=True,
               help='SQLAlchemy URL of the API database (cell_mappings, '
                    'host_mappings, instance_mappings), as Nova\'s '
                    '[api_database] connection. Unset: the API tables live '
                    'in the [database] connection database (a one-cell '
                    'deployment), and "nova-moves-manage db sync" creates '
                    'them there too. Set: run "nova-moves-manage api_db '
                    'sync" for it; the engine takes its pool settings from '
                    '[database].'),
]


def register_opts(conf):
    conf.register_group(api_db_group)
    conf.register_opts(api_db_opts, group=api_db_group)


def list_opts():
    return {api_db_group: api_db_opts}
