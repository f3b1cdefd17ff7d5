from oslo_config import cfg

image_group = cfg.OptGroup('image', title='The local image store')

image_opts = [
    cfg.StrOpt('store_path', default='$state_path/images',
               help='Directory of the local image store (one directory per '
                    'image: image.json, kernel, initrd, disk), filled by '
                    '"nova-moves-manage image import" and by shelve '
                    'snapshots. A directory every host of the machine '
                    'reads: the API lists it and the compute agents boot '
                    'from it. On several machines, a shared mount (NFS, '
                    'CephFS) at the same path on every one.'),
    cfg.IntOpt('qemu_img_timeout', default=1800, min=1,
               help='Seconds one "qemu-img convert" of an import or a '
                    'snapshot may take before it is killed and the image '
                    'given up ("qemu-img info" and "check" get at most '
                    '60).'),
]


def register_opts(conf):
    conf.register_group(image_group)
    conf.register_opts(image_opts, group=image_group)


def list_opts():
    return {image_group: image_opts}
