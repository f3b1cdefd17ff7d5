from oslo_config import cfg

conductor_group = cfg.OptGroup('conductor', title='Conductor options')

conductor_opts = [
    cfg.IntOpt('max_concurrent_migrations_per_cluster', default=5, min=1,
               help='Moves (live and cold migrations, resizes, '
                    'evacuations) in progress at once in the whole '
                    'cluster, counted by the conductors from admission '
                    'until the migration settles (completed, finished, '
                    'done, error...). A move over the limit waits with '
                    'migration status "queued" and starts when a slot '
                    'frees up; it is never refused.'),
    cfg.IntOpt('max_outbound_migrations_per_host', default=2, min=1,
               help='Moves in progress at once out of one source host '
                    '(same counting and queueing as '
                    'max_concurrent_migrations_per_cluster).'),
    cfg.FloatOpt('queue_poll_interval', default=1.0, min=0.1,
                 help='Seconds between two passes of a conductor over the '
                      'move queue and the host drains it runs. A '
                      'conductor also passes over the queue at once when '
                      'a move it handles settles, so a freed slot starts '
                      'the next queued move without waiting for this '
                      'interval.'),
    cfg.IntOpt('drain_max_attempts', default=2, min=1,
               help='Times a host drain tries to move one server before '
                    'it reports the server failed (a move rolled back '
                    'because its conductor died is retried).'),
    cfg.IntOpt('drain_busy_timeout', default=300, min=0,
               help='A server of a drained host that is busy with another '
                    'task (task_state set) for longer than this many '
                    'seconds after the drain started is reported failed.'),
    cfg.IntOpt('drain_host_down_wait', default=600, min=0,
               help='A drain whose host goes down after the drain began '
                    '(and was not asked to force_down_if_dead) keeps the '
                    'servers it has not moved yet pending, reason '
                    '"waiting: host ... is down", and moves them when the '
                    'host is back; a host silent for longer than this '
                    'many seconds fails them. A host already down when '
                    'the drain began fails them at once. 0: never wait.'),
    cfg.IntOpt('unknown_hosts_wait', default=60, min=0,
               help='A move for which every host that fits is "unknown" '
                    '(its heartbeat could not be seen because the '
                    'scheduler, the conductors or the broker were away: '
                    'every compute heartbeat stale together, or the '
                    'service\'s own broker connection or heartbeat '
                    'failed; such hosts stay unknown until they had '
                    'service_down_time to report after the outage) asks '
                    'the scheduler again for up to this many seconds '
                    'instead of failing with NoValidHost (Nova fails '
                    'it); a scheduler call whose reply a broker outage '
                    'lost is asked again within the same time. Capped '
                    'at half of stuck_move_timeout. 0: fail at once.'),
]


def register_opts(conf):
    conf.register_group(conductor_group)
    conf.register_opts(conductor_opts, group=conductor_group)


def list_opts():
    return {conductor_group: conductor_opts}
