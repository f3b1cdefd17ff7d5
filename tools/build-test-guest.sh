#!/bin/bash
# Build the nova_moves test guest (doc/test-guest.md) into OUTDIR:
#   OUTDIR/vmlinuz     Debian's cloud kernel (linux-image-cloud-amd64's
#                      linux-image-*-cloud-amd64)
#   OUTDIR/initrd.img  busybox-static, the power button's and virtio-blk's
#                      modules and tools/test-guest/init (cpio newc, gzip)
# From Debian packages only (apt-get download + dpkg-deb -x); nothing is
# installed. Idempotent: when OUTDIR already has both, built from the same
# inputs (OUTDIR/build-stamp), it only prints their paths.
# Usage: tools/build-test-guest.sh OUTDIR
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/test-guest
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
KERNEL_META=linux-image-cloud-amd64

# What the guest is built from besides the packages: a change to any of
# these rebuilds it.
stamp=$(cat "$0" "$SRC/init" "$SRC/power-button" | sha256sum | cut -d' ' -f1)
if [ -s "$OUT/vmlinuz" ] && [ -s "$OUT/initrd.img" ] &&
        [ "$(cat "$OUT/build-stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$OUT/vmlinuz"
    echo "$OUT/initrd.img"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt_updated=
apt_update() {
    # Only when apt does not know a package (a fresh CI image has no lists).
    if [ -z "$apt_updated" ] && [ "$(id -u)" = 0 ]; then
        apt-get -q update >&2 || true
        apt_updated=1
        return 0
    fi
    return 1
}

# The versioned kernel package the meta package depends on now.
kernel_package() {
    apt-cache depends "$KERNEL_META" 2>/dev/null |
        awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }'
}

download() {  # download PACKAGE into the current directory
    apt-get -q download "$1" >&2 ||
        { apt_update && apt-get -q download "$1" >&2; }
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# apt's _apt user downloads into it (otherwise a warning, as root).
chmod 755 "$work"
cd "$work"

kpkg=$(kernel_package)
if [ -z "$kpkg" ] && apt_update; then
    kpkg=$(kernel_package)
fi
if [ -z "$kpkg" ]; then
    echo "build-test-guest: apt knows no $KERNEL_META" >&2
    exit 1
fi
download "$kpkg"
dpkg-deb -x "$kpkg"_*.deb kernel
kver=$(ls kernel/lib/modules)
if [ "$(echo "$kver" | wc -w)" -ne 1 ]; then
    echo "build-test-guest: no single kernel in $kpkg: $kver" >&2
    exit 1
fi

# busybox-static: the installed one when its package is installed (the
# same Debian binary), else downloaded.
if [ "$(dpkg-query -W -f='${Status}' busybox-static 2>/dev/null)" = \
        "install ok installed" ] && [ -x /bin/busybox ]; then
    busybox=/bin/busybox
    bbver=$(dpkg-query -W -f='${Version}' busybox-static)
else
    download busybox-static
    dpkg-deb -x busybox-static_*.deb bb
    busybox=$work/bb/bin/busybox
    bbver=$(dpkg-deb -f busybox-static_*.deb Version)
fi

root=$work/root
mkdir -p "$root"/bin "$root"/dev "$root"/proc "$root"/sys "$root"/run \
    "$root"/tmp "$root"/lib/modules "$root"/etc/acpi/PWRF
cp "$busybox" "$root"/bin/busybox
ln -s busybox "$root"/bin/sh
install -m 755 "$SRC/init" "$root"/init
install -m 755 "$SRC/power-button" "$root"/etc/acpi/PWRF/00000080
# The power button's input device (button) and busybox acpid's way to
# read it (evdev); virtio-blk and what it depends on (/init loads them in
# order: there is no modprobe database).
for mod in drivers/input/evdev.ko drivers/acpi/button.ko \
        drivers/virtio/virtio_ring.ko drivers/virtio/virtio.ko \
        drivers/virtio/virtio_pci_modern_dev.ko \
        drivers/virtio/virtio_pci_legacy_dev.ko drivers/virtio/virtio_pci.ko \
        drivers/block/virtio_blk.ko; do
    cp "kernel/lib/modules/$kver/kernel/$mod" "$root"/lib/modules/
done
# The kernel opens /dev/console for /init before /init mounts devtmpfs
# (/init falls back to reopening it when this node is missing).
if [ "$(id -u)" = 0 ]; then
    mknod -m 600 "$root"/dev/console c 5 1
fi

(cd "$root" && find . | LC_ALL=C sort |
    cpio -o -H newc -R 0:0 --reproducible --quiet) | gzip -9 -n > initrd.img
cp "kernel/boot/vmlinuz-$kver" vmlinuz

mv -f vmlinuz "$OUT/vmlinuz"
mv -f initrd.img "$OUT/initrd.img"
printf 'kernel %s %s\nbusybox-static %s\n' "$kpkg" \
    "$(dpkg-deb -f "$kpkg"_*.deb Version)" "$bbver" > "$OUT/versions"
echo "$stamp" > "$OUT/build-stamp"
echo "$OUT/vmlinuz"
echo "$OUT/initrd.img"
