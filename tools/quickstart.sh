#!/usr/bin/env bash
# Quickstart, command 1: install into .venv, make sure RabbitMQ is up and
# QEMU is installed (as root, tools/guest-packages.sh: qemu-system-x86,
# qemu-utils, busybox-static, cpio, when one is missing), then start
# api + conductor + scheduler + 2 computes running real QEMU guests, build
# and import the test guest (.test-guest/), boot a server from it, live
# migrate it, cold migrate it and confirm, printing the guest's console
# (its "beat N" counter) around each move and the timeline. Without QEMU
# (or with --fake) the computes run the fake hypervisor. Extra args go to
# the script (--keep leaves the stack and its guests running).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/ensure-env.sh
case " $* " in
    *" --fake "*|*" --stop "*|*" -h "*|*" --help "*) ;;
    *)
        # shellcheck source=tools/guest-packages.sh
        source tools/guest-packages.sh
        ensure_guest_packages ||
            echo "quickstart: QEMU is missing and cannot be installed" \
                 "($GUEST_PACKAGES; needs root and apt-get)" >&2
        ;;
esac
exec "$VENV/bin/python" -m nova_moves.harness.quickstart "$@"
