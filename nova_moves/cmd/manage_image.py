"""nova-moves-manage image: the local image store ([image] store_path).

  image import NAME --kernel FILE --initrd FILE [--disk FILE]
               [--disk-format FMT] [--cmdline TEXT] [--id UUID]
               [--private --owner PROJECT] [--property KEY=VALUE ...]
                                 add an image; prints its id
  image list                     the store's images
  image delete ID                remove one

The store is a directory, not a service: run it on a host that mounts
[image] store_path (the API lists what is there at once). Bad input
exits 1 with one line naming the problem, and leaves nothing behind.
"""
import sys

from nova_moves.cmd import tables
from nova_moves import exception
from nova_moves import image_store
from nova_moves.virt import rescue_devices

HELP = 'The local image store: import, list, delete'
# What a bad argument, a full disk or a missing qemu-img looks like here:
# one line, no traceback.
_FAILURES = (exception.NovaMovesException, OSError)


def _fail(action, exc):
    text = getattr(exc, 'message', None) or str(exc)
    print('nova-moves-manage image %s: %s' % (action, text),
          file=sys.stderr)
    return 1


# Nova's values for the stable rescue's properties (its image meta takes
# no others): a typo is refused at import, not at the first rescue.
_CHOICES = {rescue_devices.DEVICE: rescue_devices.DEVICES,
            rescue_devices.BUS: rescue_devices.BUSES}


def _properties(pairs):
    """{key: value} of the --property KEY=VALUE arguments; a later one
    of the same key wins (Glance's image-create does the same)."""
    properties = {}
    for pair in pairs or ():
        key, sep, value = pair.partition('=')
        if not sep or not key:
            raise exception.ImageInvalid(
                reason='--property takes KEY=VALUE, not %r' % pair)
        choices = _CHOICES.get(key)
        if choices and value not in choices:
            raise exception.ImageInvalid(
                reason='%s=%s: Nova takes one of %s' % (
                    key, value, ', '.join(choices)))
        properties[key] = value
    return properties


def _import(args):
    if args.private and not args.owner:
        return _fail('import', 'a --private image needs --owner PROJECT '
                     '(only that project and admins see it)')
    try:
        image = image_store.ImageStore().import_image(
            args.image_name, args.kernel, args.initrd, disk=args.disk,
            cmdline=args.cmdline, image_id=args.id,
            visibility='private' if args.private else 'public',
            owner=args.owner, disk_format=args.disk_format,
            properties=_properties(args.property))
    except _FAILURES as exc:
        return _fail('import', exc)
    print(image['id'])
    return 0


def _list(args):
    try:
        images = image_store.ImageStore().list()
    except _FAILURES as exc:
        return _fail('list', exc)
    print(tables.render(
        ('ID', 'Name', 'Visibility', 'Owner', 'Size', 'Virtual size',
         'Created'),
        [(i['id'], i['name'], i['visibility'], i['owner'] or '',
          i['size'], i['virtual_size'], i['created_at']) for i in images]))
    return 0


def _delete(args):
    try:
        image_store.ImageStore().delete(args.image_id)
    except _FAILURES as exc:
        return _fail('delete', exc)
    print('Deleted image %s' % args.image_id)
    return 0


def setup(parser):
    sub = parser.add_subparsers(dest='action')
    sub.required = True
    imp = sub.add_parser('import', help='Add an image to the store; prints '
                                        'its id')
    # Not dest 'name': oslo.config's sub-command namespace answers .name
    # with the command's own name.
    imp.add_argument('image_name', metavar='NAME', help='The image name')
    imp.add_argument('--kernel', required=True, metavar='FILE',
                     help='The kernel the guest boots (copied)')
    imp.add_argument('--initrd', required=True, metavar='FILE',
                     help='Its initial ramdisk (copied)')
    imp.add_argument('--disk', metavar='FILE', default=None,
                     help='The root disk, any format qemu-img reads '
                          '(converted to qcow2); default: an empty 64 MiB '
                          'qcow2')
    imp.add_argument('--disk-format', metavar='FMT', default=None,
                     help='The --disk format (raw, qcow2, vmdk ...); '
                          'default: qemu-img detects it')
    imp.add_argument('--cmdline', default='', metavar='TEXT',
                     help='Extra kernel command line, e.g. "dirty=10"')
    imp.add_argument('--id', default=None, metavar='UUID',
                     help='The image id (default: a new UUID)')
    imp.add_argument('--private', action='store_true',
                     help='Visible to --owner\'s project and admins only '
                          '(default: public)')
    imp.add_argument('--owner', default=None, metavar='PROJECT',
                     help='The owning project id')
    imp.add_argument('--property', action='append', metavar='KEY=VALUE',
                     help='A custom image property, repeatable; e.g. '
                          'hw_rescue_bus=virtio (or hw_rescue_device=cdrom) '
                          'makes a rescue from this image a stable device '
                          'rescue (Nova 2.87): the server\'s disk keeps its '
                          'address, the rescue disk comes after it on that '
                          'bus')
    imp.set_defaults(func=_import)
    sub.add_parser('list', help='List the store\'s images').set_defaults(
        func=_list)
    delete = sub.add_parser('delete', help='Remove an image from the store')
    delete.add_argument('image_id', metavar='ID')
    delete.set_defaults(func=_delete)
