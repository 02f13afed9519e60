# SPDX-License-Identifier: LGPL-2.1-or-later
"""Logging to the journal with structured fields (issue 4).

When stderr is the stream systemd connected (JOURNAL_STREAM names its
device and inode), the daemon logs over journald's native protocol. These
machines run no journald, so the test stands in for it: it binds the
native socket, /run/systemd/journal/socket, and reads the datagrams the
daemon sends. Skips where a real journald owns that socket."""

import os
import socket
import struct
import threading
import time

import pytest

from tests.lib import fio

SOCKET = "/run/systemd/journal/socket"


def parse_native(data):
    """Fields of one native-protocol entry: KEY=value lines, or KEY, a
    newline, a 64-bit little-endian length and the binary value."""
    fields, i = {}, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            fields[k.decode()] = v.decode()
            i = nl + 1
        else:
            n = struct.unpack_from("<Q", data, nl + 1)[0]
            start = nl + 9
            fields[line.decode()] = data[start:start + n].decode()
            i = start + n + 1
    return fields


class FakeJournald:
    """Receives datagrams on the journal socket in a thread, as journald
    does: a unix datagram socket queues only net.unix.max_dgram_qlen (10)
    of them, and a sender past that blocks."""

    def __init__(self, sock):
        self.sock = sock
        self.got = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                self.got.append(parse_native(self.sock.recv(65536)))
            except socket.timeout:
                pass

    def close(self):
        self._stop.set()
        self._thread.join()


@pytest.fixture
def fake_journald():
    if os.path.exists(SOCKET):
        pytest.skip(f"{SOCKET} exists: a real journald runs here; not standing in for it")
    made_dir = not os.path.isdir(os.path.dirname(SOCKET))
    os.makedirs(os.path.dirname(SOCKET), exist_ok=True)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(SOCKET)
    s.settimeout(0.2)
    fake = FakeJournald(s)
    try:
        yield fake
    finally:
        fake.close()
        s.close()
        os.unlink(SOCKET)
        if made_dir:
            for d in (os.path.dirname(SOCKET), os.path.dirname(os.path.dirname(SOCKET))):
                try:
                    os.rmdir(d)
                except OSError:
                    pass


def entries(fake):
    """What reached the socket so far, once it has been quiet for 0.5 s."""
    n = -1
    while n != len(fake.got):
        n = len(fake.got)
        time.sleep(0.5)
    return list(fake.got)


def test_journal_fields(daemon_factory, device_factory, fake_journald, tmp_path):
    dev = device_factory("shm", size_mib=16)
    # The daemon's stderr is this file; JOURNAL_STREAM names it, as systemd
    # does for StandardError=journal.
    stderr_file = tmp_path / "stderr"
    stderr_file.touch()
    st = os.stat(stderr_file)
    # A goal no loop device meets: the tuner changes the targets at once.
    d = daemon_factory(["--foreground", "--interval", "200ms", "--settle", "50ms", "--config=",
                        "--goal", f"{dev.name}:read-p99=1us scheduler=kyber"],
                       env={"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}, stderr_path=str(stderr_file))
    assert d.ready(), d.stderr()
    with fio.io_lock():
        fio.run(dev.path, fio.pair(write_qd=32, pinned=False), runtime_s=2, ramp_s=0)
    assert d.stop() == 0, d.stderr()
    got = entries(fake_journald)
    assert got, f"nothing reached the journal socket; stderr: {d.stderr()}"
    assert d.stderr() == "", "messages went to stderr as well as the journal"
    switched = [e for e in got if e.get("MESSAGE") == f"{dev.name}: scheduler none -> kyber"]
    assert switched, got
    e = switched[0]
    assert e["KYBER_DEVICE"] == dev.name
    assert e["PRIORITY"] == "6"
    assert e["SYSLOG_IDENTIFIER"] == "kyber-tuned"
    assert e["CODE_FILE"].endswith("device.c") and int(e["CODE_LINE"]) > 0 and e["CODE_FUNC"]
    changed = [e for e in got if e.get("MESSAGE_ID") == "091c90aed03643d7b2931618a9dcd061"]
    assert changed, got
    c = changed[0]
    assert c["MESSAGE"].startswith(f"{dev.name}: targets ")
    assert c["KYBER_DEVICE"] == dev.name
    for k in ("KYBER_OLD_READ_TARGET_NSEC", "KYBER_OLD_WRITE_TARGET_NSEC", "KYBER_READ_TARGET_NSEC",
              "KYBER_WRITE_TARGET_NSEC", "KYBER_READ_P99_NSEC", "KYBER_WRITE_P99_NSEC"):
        assert int(c[k]) >= 0, k
    assert (c["KYBER_OLD_READ_TARGET_NSEC"], c["KYBER_OLD_WRITE_TARGET_NSEC"]) != \
        (c["KYBER_READ_TARGET_NSEC"], c["KYBER_WRITE_TARGET_NSEC"])
    assert c["KYBER_REASON"] and c["KYBER_REASON"] in c["MESSAGE"]
    assert c["KYBER_STATE"] in ("learning", "tracking", "holding", "infeasible")
    restored = [e for e in got if e.get("MESSAGE_ID") == "1674a13f0db943dcb4434d0650ffd7ae"]
    assert restored and restored[0]["KYBER_DEVICE"] == dev.name, got


def test_no_journal_when_stderr_is_elsewhere(daemon_factory, device_factory, fake_journald):
    """JOURNAL_STREAM inherited by a process whose stderr is not that
    stream (e.g. started from a shell inside the unit): plain stderr."""
    dev = device_factory("shm", size_mib=16)
    d = daemon_factory(["--foreground", "--interval", "200ms", "--settle", "50ms", "--config=",
                        "--goal", f"{dev.name}:read-p99=2ms scheduler=kyber"], env={"JOURNAL_STREAM": "1:1"})
    assert d.ready(), d.stderr()
    assert d.stop() == 0, d.stderr()
    assert entries(fake_journald) == []
    assert f"{dev.name}: scheduler none -> kyber" in d.stderr()
