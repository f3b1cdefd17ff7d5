# Sourced by tools/test-setup.sh (CI) and tools/quickstart.sh: install the
# packages real guests need (QEMU, qemu-img, and what
# tools/build-test-guest.sh packs the test guest with; bindep.txt lists
# them too) when one is missing, as root (or sudo -n). Defines
# GUEST_PACKAGES, as_root, guest_packages_missing and
# ensure_guest_packages (returns 1 when they are missing and cannot be
# installed: no apt-get, not root, no network).
# shellcheck shell=bash
GUEST_PACKAGES="qemu-system-x86 qemu-utils busybox-static cpio"

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@"
    else
        return 1
    fi
}

guest_packages_missing() {
    ! command -v qemu-system-x86_64 >/dev/null 2>&1 ||
        ! command -v qemu-img >/dev/null 2>&1 ||
        ! command -v cpio >/dev/null 2>&1 ||
        ! dpkg-query -W -f='${Status}' busybox-static 2>/dev/null |
            grep -q 'install ok installed'
}

apt_install() {
    # The lists only when the install fails without them (a fresh image).
    # shellcheck disable=SC2086  # a list of package names
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            --no-install-recommends $GUEST_PACKAGES </dev/null ||
        { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q \
              </dev/null &&
          as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
              --no-install-recommends $GUEST_PACKAGES </dev/null; }
}

ensure_guest_packages() {
    guest_packages_missing || return 0
    command -v apt-get >/dev/null 2>&1 || return 1
    echo "Installing $GUEST_PACKAGES (apt-get) ..." >&2
    apt_install
}
