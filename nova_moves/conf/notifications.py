"""[notifications]: Nova's versioned notifications over oslo.messaging."""
from oslo_config import cfg

notifications_group = cfg.OptGroup(
    'notifications', title='Versioned notifications',
    help='Nova-shaped versioned notifications (instance.resize.start, '
         'instance.live_migration_pre.end, ...) sent by the compute agents '
         'through oslo.messaging\'s notifier on the same broker, for '
         'ceilometer or any other consumer.')

notifications_opts = [
    cfg.StrOpt('notification_format', default='none',
               choices=[('none', 'send no notification'),
                        ('versioned', 'send versioned notifications '
                                      '(nova_object.* payloads) on the '
                                      'versioned_notifications_topics')],
               help='Which notifications to send. Nova\'s legacy '
                    'unversioned format is not implemented. Off by '
                    'default: the notifier\'s queues are durable, so '
                    'messages nobody consumes pile up on the broker.'),
    cfg.ListOpt('versioned_notifications_topics',
                default=['versioned_notifications'],
                help='Topics the versioned notifications are sent on; a '
                     'consumer binds a queue to <topic>.info and '
                     '<topic>.error.'),
    cfg.StrOpt('driver', default='messagingv2',
               help='oslo.messaging notification driver (messagingv2 puts '
                    'them on the broker; log writes them to the service '
                    'log). The transport is [oslo_messaging_notifications] '
                    'transport_url, else [DEFAULT] transport_url.'),
]


def register_opts(conf):
    conf.register_group(notifications_group)
    conf.register_opts(notifications_opts, group=notifications_group)


def list_opts():
    return {notifications_group: notifications_opts}
