"""The QEMU compute driver: one daemonized QEMU process per server,
driven over QMP (the QEMU project's qemu.qmp library)."""
