"""The hypervisors behind a compute host, each behind one interface
(virt/driver.py): the fake (virt/fake.py) and QEMU (virt/qemu/)."""
