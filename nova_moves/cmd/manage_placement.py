"""nova-moves-manage placement audit [--delete] [--verbose]

Finds allocations held by no live server and no in-progress migration
(leaks) and, with --delete, removes them (each through the provider
generation compare-and-swap, like every other allocation write).
Exit codes follow ``nova-manage placement audit``: 0 nothing found,
3 leaks found (not deleted), 4 leaks found and deleted.
"""
from nova_moves.db import api as db_api

HELP = 'Placement (allocations) administration'


def _provider_names():
    return {entry['uuid']: name
            for name, entry in db_api.provider_usages().items()}


def audit(args):
    orphans = db_api.allocations_orphaned()
    if not orphans:
        print('No orphaned allocations.')
        return 0
    names = _provider_names()
    for consumer, allocations in sorted(orphans.items()):
        for provider, resources in sorted(allocations.items()):
            print('Orphaned allocation: consumer %s on provider %s (%s): %s'
                  % (consumer, names.get(provider, '?'), provider,
                     ', '.join('%s=%s' % kv for kv in sorted(
                         resources.items()))))
    if not args.delete:
        print('%d consumer(s) hold orphaned allocations; run with --delete '
              'to remove them.' % len(orphans))
        return 3
    deleted = 0
    for consumer in sorted(orphans):
        # Re-check right before deleting: a consumer may have been
        # claimed by a new migration row in between (it never is by a new
        # server: uuids are not reused).
        if consumer not in db_api.allocations_orphaned():
            continue
        if db_api.allocations_delete(consumer):
            deleted += 1
            print('Deleted allocations of consumer %s' % consumer)
    print('Deleted orphaned allocations of %d consumer(s).' % deleted)
    return 4


def setup(parser):
    sub = parser.add_subparsers(dest='action')
    sub.required = True
    audit_parser = sub.add_parser(
        'audit', help='Find (and with --delete remove) allocations held by '
                      'no live server and no in-progress migration')
    audit_parser.add_argument('--delete', action='store_true',
                              help='Remove the orphaned allocations found')
    audit_parser.set_defaults(func=audit)
