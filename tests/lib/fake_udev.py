# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for udevd's event broadcast, for machines without udev: it
hears the kernel's uevents and sends each one on, as udevd does after its
rules ran, to udev's netlink group in libudev's format, which sd-device
monitors (the daemon's --device-events=udev) read. It runs no rules and
keeps no database: only the message format and the delivery are udev's.

Format (systemd's sd-device/device-monitor.c, monitor_netlink_header):
"libudev\\0", magic 0xfeedcafe (big-endian), header size, properties
offset and length (native order), MurmurHash2 of SUBSYSTEM and DEVTYPE
(big-endian: socket filters compare them), two words of tag bloom filter,
then the KEY=VALUE strings."""

import select
import socket
import struct
import threading

NETLINK_KOBJECT_UEVENT = 15
GROUP_KERNEL, GROUP_UDEV = 1, 2
MAGIC = 0xFEEDCAFE
HEADER = struct.Struct("=8sIIIIIIII")


def murmur2(data, seed=0):
    """MurmurHash2, 32 bits, little-endian blocks: udev's string_hash32()."""
    m, h, n = 0x5BD1E995, (seed ^ len(data)) & 0xFFFFFFFF, len(data)
    i = 0
    while n - i >= 4:
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
        i += 4
    rest = data[i:]
    if len(rest) == 3:
        h ^= rest[2] << 16
    if len(rest) >= 2:
        h ^= rest[1] << 8
    if rest:
        h ^= rest[0]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h


def udev_message(kernel_msg):
    """The kernel's "ACTION@DEVPATH\\0KEY=VALUE\\0..." as udevd sends it."""
    fields = kernel_msg.split(b"\0")[1:]
    props = {f.split(b"=", 1)[0]: f.split(b"=", 1)[1] for f in fields if b"=" in f}
    body = b"".join(f + b"\0" for f in fields if b"=" in f)
    sub = murmur2(props.get(b"SUBSYSTEM", b""))
    devtype = murmur2(props[b"DEVTYPE"]) if b"DEVTYPE" in props else 0
    header = HEADER.pack(b"libudev\0", socket.htonl(MAGIC), HEADER.size, HEADER.size, len(body),
                         socket.htonl(sub), socket.htonl(devtype), 0, 0)
    return header + body


class FakeUdev:
    """Relays from start() until stop(); count says how many it sent."""

    def __init__(self):
        self.rx = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)
        self.rx.bind((0, GROUP_KERNEL))
        self.tx = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)
        self.tx.bind((0, 0))
        self.count = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            ready, _, _ = select.select([self.rx], [], [], 0.1)
            if not ready:
                continue
            msg, (pid, _) = self.rx.recvfrom(65536)
            if pid != 0:
                continue
            try:
                self.tx.sendto(udev_message(msg), (0, GROUP_UDEV))
            except ConnectionRefusedError:
                pass    # nobody listening to the group: as udevd, not an error
            self.count += 1

    def stop(self):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.rx.close()
        self.tx.close()
