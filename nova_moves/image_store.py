"""The local image store: the images the QEMU driver boots.

``<[image] store_path>/<image id>/`` holds ``image.json`` (the image's
record, in Glance v2's terms), ``kernel``, ``initrd`` and ``disk``
(qcow2). Every host of the machine reads that directory (several
machines: a shared mount), so the directory is the store: no database,
no service. The API lists it and compute agents boot from it; computes
never open the database, so this module imports neither the database nor
flask.

An image appears whole or not at all: import and snapshot build it in a
dot-directory of the store (the same filesystem, so the final rename is
atomic), write ``image.json`` last, and rename the directory to the id.
Delete renames it away before removing it. Readers skip dot-directories
and directories without an ``image.json``. A listed image is never
modified, which is what lets snapshots share the base's kernel and
initrd by hard link and lets ``verify`` read a disk a guest has open.
"""
import contextlib
import errno
import json
import os
import shutil
import subprocess
import uuid

from oslo_log import log as logging

from nova_moves import conf
from nova_moves import exception
from nova_moves import timeutil

LOG = logging.getLogger(__name__)
CONF = conf.CONF

METADATA = 'image.json'
FILES = ('kernel', 'initrd', 'disk')
EMPTY_DISK_BYTES = 64 * 1024 * 1024
QEMU_IMG = 'qemu-img'
# info, check and create read headers or write a few KiB: a minute means
# the storage is stuck, not slow.
QUICK_TIMEOUT = 60
VISIBILITIES = ('public', 'private')
_QCOW2_MAGIC = b'QFI\xfb'
# qemu-img check: 0 clean, 3 only leaked clusters (wasted space, the data
# is intact); 1 could not check, 2 corrupt.
_CHECK_OK = (0, 3)


SHELVE_NAMESPACE = uuid.UUID('7c1e0b5a-3f2d-4b8e-9a61-2d5c8f0e4b17')
MOVE_NAMESPACE = uuid.UUID('d3f1a6c2-58b4-4e07-b9a2-6c0e7f13a845')


def shelve_snapshot_id(instance_uuid):
    """The id of the image a shelve offload made of a server's disk (one
    per server: unshelve and the server's deletion remove it)."""
    return str(uuid.uuid5(SHELVE_NAMESPACE, instance_uuid))


def move_snapshot_id(migration_uuid):
    """The id of the image a cross-cell move's source made of the
    server's disk (named cross-cell-<migration uuid>; an id of the store
    is a UUID): confirm, revert or the move's undo removes it."""
    return str(uuid.uuid5(MOVE_NAMESPACE, migration_uuid))


class ImageStore:

    def __init__(self, path=None):
        self.path = os.path.abspath(path or CONF.image.store_path)

    # Reading.

    def list(self):
        """Every complete image, oldest first (then by name)."""
        try:
            entries = sorted(os.scandir(self.path), key=lambda e: e.name)
        except FileNotFoundError:
            return []
        images = []
        for entry in entries:
            if entry.name.startswith('.') or not entry.is_dir():
                continue
            try:
                images.append(self._read(entry.name))
            except exception.ImageNotFound:
                continue  # deleted meanwhile, or not an image directory
            except exception.ImageCorrupt as exc:
                # One damaged record must not hide the others.
                LOG.warning('Skipping %s: %s', entry.path, exc)
        return sorted(images, key=lambda i: (i['created_at'], i['name']))

    def get(self, image_id):
        return self._read(_lookup_id(image_id))

    def paths(self, image_id):
        """{'kernel', 'initrd', 'disk'}: each file's absolute path."""
        record = self.get(image_id)
        folder = os.path.join(self.path, record['id'])
        return {what: os.path.join(folder, record[what]) for what in FILES}

    def verify(self, image_id):
        """The image's files are there and its disk is sound qcow2 that
        stands alone; the record, else ImageCorrupt saying what is wrong.
        The driver calls it before it boots from the image."""
        record = self.get(image_id)
        paths = self.paths(record['id'])
        for what in FILES:
            try:
                size = os.path.getsize(paths[what])
            except OSError as exc:
                raise exception.ImageCorrupt(
                    image_id=record['id'], reason='its %s %s: %s' % (
                        what, paths[what], exc.strerror))
            if not size:
                raise exception.ImageCorrupt(
                    image_id=record['id'], reason='its %s %s is empty' % (
                        what, paths[what]))
        disk = paths['disk']
        try:
            info = _info(disk, 'qcow2')
        except exception.ImageInvalid as exc:
            raise exception.ImageCorrupt(image_id=record['id'],
                                         reason=exc.kwargs['reason'])
        if info.get('backing-filename'):
            raise exception.ImageCorrupt(
                image_id=record['id'], reason='its disk %s has a backing '
                'file (%s); a store disk stands alone' % (
                    disk, info['backing-filename']))
        # -U: see _info.
        proc = _qemu_img(['check', '-U', '-f', 'qcow2', disk],
                         QUICK_TIMEOUT)
        if proc.returncode not in _CHECK_OK:
            raise exception.ImageCorrupt(
                image_id=record['id'], reason='qemu-img check of %s: %s' % (
                    disk, _last_line(proc)))
        return record

    # Writing.

    def import_image(self, name, kernel, initrd, disk=None, cmdline='',
                     image_id=None, visibility='public', owner=None,
                     disk_format=None, properties=None):
        """A new image from an operator's files: kernel and initrd copied,
        ``disk`` (any format qemu-img reads; ``disk_format`` None lets it
        probe, fine for the operator's own files) converted to qcow2, or
        an empty 64 MiB qcow2 disk; ``properties`` Glance's custom ones
        (hw_rescue_bus...). ImageInvalid names a bad input; nothing is
        left in the store after any failure."""
        image_id = _new_id(image_id)
        _check_fields(name, cmdline, visibility)
        properties = _check_properties(properties or {})
        sources = {'kernel': _source('kernel', kernel),
                   'initrd': _source('initrd', initrd)}
        if disk is not None:
            sources['disk'] = _source('disk', disk)
        self._check_free(image_id)
        with self._building(image_id) as folder:
            for what in ('kernel', 'initrd'):
                shutil.copyfile(sources[what], os.path.join(folder, what))
            target = os.path.join(folder, 'disk')
            if disk is None:
                _run_ok(['create', '-q', '-f', 'qcow2', target,
                         str(EMPTY_DISK_BYTES)], QUICK_TIMEOUT, target)
            else:
                _convert(sources['disk'], disk_format, target)
            record = _record(folder, image_id, name, cmdline, visibility,
                             owner, properties)
            return self._publish(folder, record)

    def snapshot(self, name, disk_path, base_image_id, owner=None,
                 visibility='private', image_id=None, disk_format='qcow2',
                 properties=None):
        """A new image of a server's disk (shelve): the base image's
        kernel, initrd and cmdline, the disk flattened into one qcow2 (no
        backing file: the snapshot outlives the server's files and the
        base). ``disk_format`` is never probed: a guest writes its disk's
        contents, and a raw disk it made look like qcow2 would have
        qemu-img open a backing file of the guest's choosing."""
        image_id = _new_id(image_id)
        base = self.get(base_image_id)
        base_paths = self.paths(base['id'])
        _check_fields(name, base['cmdline'], visibility)
        source = _source('disk', disk_path)
        self._check_free(image_id)
        extra = {'image_type': 'snapshot', 'base_image_ref': base['id']}
        extra.update(properties or {})
        with self._building(image_id) as folder:
            for what in ('kernel', 'initrd'):
                _link_or_copy(base_paths[what], os.path.join(folder, what))
            _convert(source, disk_format, os.path.join(folder, 'disk'))
            record = _record(folder, image_id, name, base['cmdline'],
                             visibility, owner, extra)
            record['min_disk'] = base['min_disk']
            record['min_ram'] = base['min_ram']
            return self._publish(folder, record)

    def discard(self, image_id):
        """delete() that is quiet when the image is not there."""
        try:
            self.delete(image_id)
        except exception.ImageNotFound:
            pass

    def delete(self, image_id):
        image_id = _lookup_id(image_id)
        folder = os.path.join(self.path, image_id)
        # Renamed away first: a reader sees the whole image or none.
        doomed = os.path.join(self.path, '.deleted-%s-%s' % (
            image_id, uuid.uuid4().hex))
        try:
            os.rename(folder, doomed)
        except FileNotFoundError:
            raise exception.ImageNotFound(image_id=image_id)
        shutil.rmtree(doomed, ignore_errors=True)

    # Helpers.

    def _read(self, image_id):
        path = os.path.join(self.path, image_id, METADATA)
        try:
            with open(path) as f:
                record = json.load(f)
        except (FileNotFoundError, NotADirectoryError):
            raise exception.ImageNotFound(image_id=image_id)
        except (OSError, ValueError) as exc:
            raise exception.ImageCorrupt(image_id=image_id,
                                         reason='%s: %s' % (path, exc))
        if not isinstance(record, dict) or record.get('id') != image_id:
            raise exception.ImageCorrupt(
                image_id=image_id, reason='%s names another id' % path)
        return record

    def _check_free(self, image_id):
        if os.path.lexists(os.path.join(self.path, image_id)):
            raise exception.ImageExists(image_id=image_id)

    @contextlib.contextmanager
    def _building(self, image_id):
        """A fresh dot-directory in the store, removed unless published.
        os.mkdir rather than mkdtemp: mkdtemp's 0700 would outlive the
        rename and hide the image from the hosts' other users (qemu's);
        the process umask decides, as for every file we write."""
        os.makedirs(self.path, exist_ok=True)
        folder = os.path.join(self.path, '.building-%s-%s' % (
            image_id, uuid.uuid4().hex))
        os.mkdir(folder)
        try:
            yield folder
        finally:
            if os.path.exists(folder):
                shutil.rmtree(folder, ignore_errors=True)

    def _publish(self, folder, record):
        tmp = os.path.join(folder, METADATA + '.tmp')
        with open(tmp, 'w') as f:
            json.dump(record, f, indent=2, sort_keys=True)
            f.write('\n')
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(folder, METADATA))
        try:
            os.rename(folder, os.path.join(self.path, record['id']))
        except OSError as exc:
            # Another import of the same id won the race.
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise exception.ImageExists(image_id=record['id'])
            raise
        return record


def _new_id(image_id):
    if image_id is None:
        return str(uuid.uuid4())
    try:
        return str(uuid.UUID(str(image_id)))
    except ValueError:
        raise exception.ImageInvalid(
            reason='image id %r is not a UUID' % (image_id,))


def _lookup_id(image_id):
    # Only a UUID names a directory: an id from a URL never reaches the
    # filesystem as a path ("../..").
    try:
        return str(uuid.UUID(str(image_id)))
    except ValueError:
        raise exception.ImageNotFound(image_id=image_id)


def _check_fields(name, cmdline, visibility):
    if not isinstance(name, str) or not name.strip() or len(name) > 255:
        raise exception.ImageInvalid(
            reason='the name must be 1 to 255 characters')
    if not isinstance(cmdline, str) or any(
            ord(c) < 32 for c in cmdline):
        raise exception.ImageInvalid(
            reason='the kernel command line must be one line of text')
    if visibility not in VISIBILITIES:
        raise exception.ImageInvalid(reason='visibility %r is not one of '
                                     '%s' % (visibility, VISIBILITIES))


# Glance's own fields: a custom property of one of these names would be
# hidden behind the field (the API shows properties as top-level keys).
CORE_FIELDS = frozenset((
    'id', 'name', 'status', 'visibility', 'protected', 'os_hidden',
    'owner', 'container_format', 'disk_format', 'size', 'virtual_size',
    'min_disk', 'min_ram', 'checksum', 'os_hash_algo', 'os_hash_value',
    'tags', 'created_at', 'updated_at', 'self', 'file', 'schema',
    'links', 'locations', 'direct_url', 'kernel', 'initrd', 'disk',
    'cmdline', 'properties'))


def _check_properties(properties):
    """``properties`` as Glance takes custom ones: names of 1 to 255
    characters that are not core fields, string values of at most 255
    (Glance's limit is 255 for both)."""
    for key, value in properties.items():
        if not isinstance(key, str) or not key.strip() or len(key) > 255:
            raise exception.ImageInvalid(
                reason='a property name must be 1 to 255 characters')
        if key in CORE_FIELDS:
            raise exception.ImageInvalid(
                reason='%s is an image field, not a property' % key)
        if not isinstance(value, str) or len(value) > 255 or any(
                ord(c) < 32 for c in value):
            raise exception.ImageInvalid(
                reason='property %s: a value is one line of at most 255 '
                       'characters' % key)
    return dict(properties)


def _source(what, path):
    """``path``, absolute, if it is a non-empty readable regular file;
    else ImageInvalid naming it."""
    if not path:
        raise exception.ImageInvalid(reason='no %s file given' % what)
    bad = '%s file %s' % (what, path)
    if not os.path.exists(path):
        raise exception.ImageInvalid(reason='%s does not exist' % bad)
    if not os.path.isfile(path):
        raise exception.ImageInvalid(reason='%s is not a regular file' % bad)
    try:
        with open(path, 'rb') as f:
            head = f.read(4)
    except OSError as exc:
        raise exception.ImageInvalid(reason='%s cannot be read: %s' % (
            bad, exc.strerror))
    if not head:
        raise exception.ImageInvalid(reason='%s is empty' % bad)
    # The likeliest mix-up: a disk given where a kernel or initrd goes.
    if what != 'disk' and head == _QCOW2_MAGIC:
        raise exception.ImageInvalid(reason='%s is a qcow2 disk image' % bad)
    return os.path.abspath(path)


def _link_or_copy(source, target):
    # Listed images never change, so a snapshot may share its base's
    # kernel and initrd; a filesystem without hard links gets copies.
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _qemu_img(args, timeout):
    try:
        return subprocess.run([QEMU_IMG] + args, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise exception.ImageStoreError(reason='%s is not installed'
                                        % QEMU_IMG)
    except subprocess.TimeoutExpired:
        raise exception.ImageStoreError(reason='qemu-img %s %s took more '
                                        'than %ss' % (args[0], args[-1],
                                                      timeout))


def _last_line(proc):
    lines = [line.strip() for line in (proc.stderr or proc.stdout or '')
             .splitlines() if line.strip()]
    return lines[-1] if lines else 'exit code %d' % proc.returncode


def _run_ok(args, timeout, target):
    proc = _qemu_img(args, timeout)
    if proc.returncode:
        raise exception.ImageStoreError(reason='qemu-img %s %s: %s' % (
            args[0], target, _last_line(proc)))
    return proc


def _info(path, disk_format=None):
    """qemu-img info as a dict; ImageInvalid naming ``path`` when qemu-img
    cannot read it. -U (force share): store images are never written
    once listed, and a guest booted from one holds qemu's lock on it."""
    args = ['info', '-U', '--output=json']
    if disk_format:
        args += ['-f', disk_format]
    proc = _qemu_img(args + [path], QUICK_TIMEOUT)
    if proc.returncode:
        raise exception.ImageInvalid(reason='disk file %s: %s' % (
            path, _last_line(proc)))
    try:
        return json.loads(proc.stdout)
    except ValueError:
        raise exception.ImageInvalid(reason='disk file %s: qemu-img info '
                                     'printed no JSON' % path)


def _convert(source, disk_format, target):
    """``source`` as one standalone qcow2 at ``target``. The source is
    read as the format qemu-img info found (or was told), so the two
    agree; no -U: a disk a running guest still writes must fail, not be
    copied half-written."""
    fmt = disk_format or _info(source)['format']
    if disk_format:
        _info(source, disk_format)  # a clear error before any copying
    _run_ok(['convert', '-f', fmt, '-O', 'qcow2', source, target],
            CONF.image.qemu_img_timeout, source)


def _record(folder, image_id, name, cmdline, visibility, owner, properties):
    now = timeutil.api_time_z(timeutil.utcnow())
    disk = os.path.join(folder, 'disk')
    return {
        'id': image_id, 'name': name, 'status': 'active',
        'created_at': now, 'updated_at': now,
        'kernel': 'kernel', 'initrd': 'initrd', 'disk': 'disk',
        'cmdline': cmdline,
        'size': sum(os.path.getsize(os.path.join(folder, what))
                    for what in FILES),
        'virtual_size': _info(disk, 'qcow2')['virtual-size'],
        'disk_format': 'qcow2', 'container_format': 'bare',
        'visibility': visibility, 'owner': owner,
        'min_disk': 0, 'min_ram': 0, 'properties': dict(properties)}
