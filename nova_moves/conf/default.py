import socket

from oslo_config import cfg

default_opts = [
    cfg.StrOpt('host', default=socket.gethostname(),
               sample_default='<hostname>',
               help='Name of this node. Compute agents are addressed on the '
                    'message bus by this name, and servers report it as '
                    'OS-EXT-SRV-ATTR:host.'),
    cfg.StrOpt('state_path', default='/var/lib/nova_moves',
               help='Directory for the embedded SQLite database and the '
                    'file:// coordination backend.'),
    cfg.IntOpt('cell_worker_thread_pool_size', default=5, min=1,
               help='Nova\'s option: threads one API process reads its '
                    'cells with at once, one per cell, when a list is '
                    'gathered from every cell (cells v2 with more than '
                    'one cell).'),
    cfg.IntOpt('report_interval', default=10, min=1,
               help='Seconds between two liveness reports of a service.'),
    cfg.IntOpt('service_down_time', default=60, min=1,
               help='A service whose last report is older than this many '
                    'seconds is considered down.'),
    cfg.IntOpt('graceful_shutdown_timeout', default=60, min=0,
               help='On SIGTERM, how long to wait for in-flight RPC handlers '
                    'before exiting anyway.'),
    cfg.IntOpt('migrate_max_retries', default=-1, min=-1,
               help='How many other destinations a live migration tries after '
                    'a failed pre-check. -1 means as many as the scheduler '
                    'returns, 0 means no retry.'),
    cfg.IntOpt('max_concurrent_live_migrations', default=1, min=0,
               help='Live migrations run at once by one compute host; more '
                    'wait in status queued. 0 means unlimited.'),
    cfg.IntOpt('resize_confirm_window', default=0, min=0,
               help='Confirm a resize or cold migration automatically after '
                    'this many seconds in VERIFY_RESIZE. 0 disables.'),
    cfg.BoolOpt('allow_resize_to_same_host', default=False,
                help='Let the scheduler pick the current host for a resize.'),
    cfg.StrOpt('rpc_stats_dir',
               help='When set, this process times its RPC calls, casts and '
                    'handlers per method and writes the aggregate as JSON '
                    'to <dir>/<program>-<host>-<pid>.json every 0.2 s while '
                    'busy, every 2 s while idle and on exit, with the '
                    'handlers still running. nova-moves-harness sums the '
                    'directory into its report and tells from it which '
                    'processes died.'),
    cfg.FloatOpt('rpc_ack_interval', default=0.05, min=0.001, max=5.0,
                 help='Seconds an RPC consumer waits on the broker after a '
                      'message before it wakes with nothing to read, doubled '
                      'on each empty wake-up up to 5 s (oslo.messaging '
                      'starts at 0.001). A message wakes it at once; a '
                      'received message\'s ack waits at most this long. '
                      'Every empty wake-up costs CPU (0.2-0.45 ms on a lab '
                      'VM). Ignored (0.001) when [oslo_messaging_rabbit] '
                      'rabbit_qos_prefetch_count is set.'),
    cfg.IntOpt('stuck_move_timeout', default=120, min=0,
               help='A move step that has not touched its migration for '
                    'this many seconds (unless move_step_timeouts names its '
                    'step) is looked at by the conductors\' sweep: the '
                    'host running the step is asked first (a short call, '
                    'move_step_status_timeout) and a step it still runs is '
                    'left alone; otherwise the step is re-sent once, then '
                    'the move is rolled back. Trade-off: a short timeout '
                    'notices a dead service or a lost message sooner but '
                    'costs a question (or a re-sent step) per slow move, '
                    'and a step whose host does not answer in time -- '
                    'dead, or too busy -- is re-sent, then rolled back; a '
                    'long one leaves a move whose service died stuck that '
                    'much longer. Keep it well above the slowest step\'s '
                    'normal duration under load. 0 disables the sweep.'),
    cfg.DictOpt('move_step_timeouts', default={},
                help='Per-step overrides of stuck_move_timeout, keyed by '
                     'the migration status a step leaves behind: '
                     'pre-migrating (the conductor or prep_resize), '
                     'migrating (resize_instance), post-migrating '
                     '(finish_resize), confirming, reverting, accepted '
                     '(a live migration or evacuation not scheduled yet), '
                     'queued, preparing, running, post-migrating (live '
                     'migration). The host running the step is asked '
                     'first; a step that has not moved for its timeout '
                     'and that no host still runs is re-sent once, then '
                     'rolled back with an Error event. Give a step that is '
                     'slow by nature (a big disk copy in migrating) a '
                     'longer timeout rather than raising them all. '
                     'Example: running:600,migrating:300'),
    cfg.IntOpt('move_step_status_timeout', default=5, min=1,
               help='Seconds the stuck-move sweep waits for a host to say '
                    'whether it still runs a step. A host that does not '
                    'answer counts as not running it (its step is re-sent, '
                    'then rolled back) and is not asked again in the same '
                    'sweep.'),
    cfg.IntOpt('move_step_cast_retries', default=3, min=0,
               help='How often a cast carrying a move step is retried '
                    'while the broker is unreachable before the sender '
                    'gives up (the stuck-move sweep then re-sends the '
                    'step). Such casts are published with the mandatory '
                    'flag, so one no queue takes is an error too.'),
    cfg.IntOpt('move_step_cast_wait', default=60, min=0,
               help='Seconds a cast carrying a move step (or the API\'s '
                    'start of a move, cross-cell confirm or revert, '
                    'unshelve or server action) keeps trying '
                    'while the broker is unreachable (a broker restart) '
                    'before the sender gives up and the move is rolled '
                    'back or left to the stuck-move sweep (the API undoes '
                    'the request and answers 503). The thread '
                    'sending it waits meanwhile. 0: give up after '
                    'move_step_cast_retries.'),
    cfg.BoolOpt('instance_usage_audit', default=False,
                help='Audit the servers of every compute host once per '
                     'instance_usage_audit_period (Nova\'s option; here a '
                     'conductor does it for each host, so it is set on the '
                     'conductors). The audit writes the task log that GET '
                     '/os-instance_usage_audit_log reports.'),
    cfg.StrOpt('instance_usage_audit_period', default='month',
               regex='^(hour|month|day|year)(@([0-9]+))?$',
               help='The period the usage audit and the usage audit log '
                    'cover: hour, day, month or year, with an optional '
                    'offset after @ (month@15: from the 15th of each '
                    'month; day@18: from 18:00 UTC).'),
]


def register_opts(conf):
    conf.register_opts(default_opts)


def list_opts():
    return {'DEFAULT': default_opts}
