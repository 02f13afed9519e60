# SPDX-License-Identifier: LGPL-2.1-or-later
"""Respect the operator (issue 14 (a)-(d)): a goal set at run time stands
over the configured one across restarts; a setting changed by hand while
the daemon stood aside (reset, or not running after a crash) is never
undone; a new disk under an old loop number is not the old one. Each case
exactly as the issue reproduced it, on a private system bus with loop
devices over /dev/shm. No I/O load: these are properties of the daemon's
bookkeeping, not of timing."""

import json
import os
import signal
import subprocess
import tempfile
import time

import pytest

from tests.integration.dbus_helpers import (KYBER_TUNECTL, FakePolkit, dbus_send_error, has_python_dbus, ok, run,
                                            start_service, status_json, tunectl)
from tests.lib.daemon import wait_for
from tests.lib.require import require_tool


@pytest.fixture
def tmp():
    with tempfile.TemporaryDirectory(prefix="kt-operator-") as t:
        yield t


def service(daemon_factory, bus, tmp, conf=None):
    return start_service(daemon_factory, bus, tmp, conf)


def test_runtime_goal_stands_over_config_across_restart(bus, tmp, device_factory, daemon_factory):
    """(a) The configuration gives the device 5 ms, set-goal 1 ms at run
    time: after SIGTERM and a start with the same configuration, 1 ms is in
    force (source runtime) and the journal says the configured goal stands
    behind it; clear-goal brings the configured 5 ms back."""
    dev = device_factory("shm", size_mib=16)
    conf = f"{tmp}/kyber-tuned.conf"
    with open(conf, "w") as f:
        f.write(f"[Goals]\n{dev.name}=read-p99=5ms scheduler=kyber\n")
    d = service(daemon_factory, bus, tmp, conf)
    st = status_json(bus, dev.name)
    assert (st["goal"], st["goal_source"]) == ("read-p99=5ms mode=latency scheduler=kyber", "config"), st
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=1ms scheduler=kyber"))
    st = status_json(bus, dev.name)
    assert (st["goal"], st["goal_source"]) == ("read-p99=1ms mode=latency scheduler=kyber", "runtime"), st
    assert "replaces the configured goal read-p99=5ms" in d.stderr(), d.stderr()
    assert d.stop() == 0, d.stderr()

    d2 = service(daemon_factory, bus, tmp, conf)
    st = status_json(bus, dev.name)
    assert (st["goal"], st["goal_source"]) == ("read-p99=1ms mode=latency scheduler=kyber", "runtime"), d2.stderr()
    assert "the configured goal read-p99=5ms mode=latency scheduler=kyber stands behind" in d2.stderr(), d2.stderr()
    assert "(set at run time)" in ok(tunectl(bus, "status", dev.name)).stdout

    ok(tunectl(bus, "clear-goal", dev.name))
    st = status_json(bus, dev.name)
    assert (st["goal"], st["goal_source"]) == ("read-p99=5ms mode=latency scheduler=kyber", "config"), d2.stderr()
    assert "applies again" in d2.stderr(), d2.stderr()
    assert dev.scheduler() == "kyber"
    assert d2.stop() == 0, d2.stderr()
    assert dev.scheduler() == "none"


def test_hand_change_after_reset_survives_stop(bus, tmp, device_factory, daemon_factory):
    """(b) reset, then the operator writes mq-deadline: SIGTERM leaves
    mq-deadline, and says why."""
    dev = device_factory("shm", size_mib=16)
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=2ms scheduler=kyber"))
    assert dev.scheduler() == "kyber"
    ok(tunectl(bus, "reset", dev.name))
    assert dev.scheduler() == "none"
    dev.set_scheduler("mq-deadline")
    assert d.stop() == 0, d.stderr()
    assert dev.scheduler() == "mq-deadline", d.stderr()
    assert "changed by someone else (scheduler mq-deadline where kyber-tuned left none)" in d.stderr(), \
        d.stderr()


def test_hand_change_after_reset_is_the_original_on_resume(bus, tmp, device_factory, daemon_factory):
    """After reset and a hand change, resume tunes again, and what the
    operator set is what clear-goal goes back to."""
    dev = device_factory("shm", size_mib=16)
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=2ms scheduler=kyber"))
    ok(tunectl(bus, "reset", dev.name))
    dev.set_scheduler("mq-deadline")
    ok(tunectl(bus, "resume", dev.name))
    assert dev.scheduler() == "kyber"
    assert status_json(bus, dev.name)["original_scheduler"] == "mq-deadline"
    ok(tunectl(bus, "clear-goal", dev.name))
    assert dev.scheduler() == "mq-deadline", d.stderr()
    assert d.stop() == 0, d.stderr()


def test_hand_change_after_crash_is_left(bus, tmp, device_factory, daemon_factory):
    """(c) SIGKILL, the operator writes mq-deadline, the daemon starts: the
    device stays on mq-deadline, overridden, its goal kept; on stop
    mq-deadline is still there."""
    dev = device_factory("shm", size_mib=16)
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=2ms scheduler=kyber"))
    assert dev.scheduler() == "kyber"
    d.stop(signal.SIGKILL)
    dev.set_scheduler("mq-deadline")

    d2 = service(daemon_factory, bus, tmp)
    st = status_json(bus, dev.name)
    assert dev.scheduler() == "mq-deadline", d2.stderr()
    assert st["state"] == "overridden" and st["goal"] == "read-p99=2ms mode=latency scheduler=kyber", st
    assert st["original_scheduler"] == "mq-deadline", st
    assert "changed by someone else since the previous instance stopped" in d2.stderr(), d2.stderr()
    assert "scheduler mq-deadline where kyber-tuned left kyber" in d2.stderr(), d2.stderr()
    time.sleep(0.6)  # intervals go by: still hands off
    assert dev.scheduler() == "mq-deadline"
    assert d2.stop() == 0, d2.stderr()
    assert dev.scheduler() == "mq-deadline", d2.stderr()


def test_hand_change_after_crash_without_goal_is_left(bus, tmp, device_factory, daemon_factory):
    """A device tuned by a killed instance whose goal is gone (cleared in
    the state file's absence: a fresh state directory), changed by hand
    before the next start: not restored over."""
    dev = device_factory("shm", size_mib=16)
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=2ms scheduler=kyber"))
    d.stop(signal.SIGKILL)
    os.unlink(f"{tmp}/state/state.pb")
    dev.set_scheduler("mq-deadline")
    d2 = service(daemon_factory, bus, tmp)
    assert dev.scheduler() == "mq-deadline", d2.stderr()
    assert "changed by someone else since" in d2.stderr(), d2.stderr()
    assert d2.stop() == 0, d2.stderr()
    assert dev.scheduler() == "mq-deadline"


def swap_backing_file(dev, size_mib=16):
    """losetup -d, and another file attached to the same loop number at
    once. The test device then owns the new file (its teardown detaches
    it and removes it)."""
    fd, new = tempfile.mkstemp(prefix="kyber-shm-swap-", suffix=".img", dir="/dev/shm")
    os.posix_fallocate(fd, 0, size_mib << 20)
    os.close(fd)
    old = dev.state["file"]
    dev.state["file"] = new
    os.unlink(old)
    subprocess.run(["losetup", "-d", dev.path], check=True)
    deadline = time.monotonic() + 5
    while os.path.exists(f"{dev.sysfs}/loop/backing_file"):
        assert time.monotonic() < deadline, f"{dev.path} still attached"
        time.sleep(0.01)
    subprocess.run(["losetup", "--direct-io=on", dev.path, new], check=True)
    dev.state["backing"] = os.path.realpath(new)


def test_new_disk_under_old_loop_number(tmp, device_factory, daemon_factory):
    """(d) losetup -d and a new file on the same loop number: within a few
    intervals the daemon drops the old disk ("another disk took its
    name"), stops tuning it, and on exit leaves the new disk as it is.
    Without device events, so the interval's own check is what sees it
    (test_hotplug.py: the same with events)."""
    require_tool("losetup")
    a = device_factory("shm", size_mib=16)
    b = device_factory("shm", size_mib=16)
    d = daemon_factory(["--foreground", "--interval=200ms", "--settle=50ms", "--config=", "--device-events=off",
                        f"--state-dir={tmp}/state", f"--runtime-dir={tmp}/run",
                        "--goal", f"{a.name}:read-p99=2ms scheduler=kyber", "--goal", f"{b.name}:read-p99=2ms scheduler=kyber"])
    assert d.ready(), d.stderr()
    seq = int(open(f"{a.sysfs}/diskseq").read())
    swap_backing_file(a)
    assert int(open(f"{a.sysfs}/diskseq").read()) != seq
    wait_for(lambda: f"{a.name}: another disk took its name" in d.stderr(), timeout=5,
             what="the new disk noticed")
    # The new disk keeps what the loop queue had (the scheduler belongs to
    # the queue, not the file); kyber-tuned no longer writes to it.
    a.set_scheduler("mq-deadline")
    before = a.scheduler()
    assert d.stop() == 0, d.stderr()
    assert a.scheduler() == before == "mq-deadline", d.stderr()
    assert b.scheduler() == "none"


# ---------------------------------------------------------------- names users type
@pytest.fixture
def mounted(device_factory, tmp):
    """An ext4 file system on a shm loop device, mounted under tmp;
    unmounted after the test (before the device is torn down)."""
    require_tool("mkfs.ext4")
    dev = device_factory("shm", size_mib=32)
    subprocess.run(["mkfs.ext4", "-q", "-F", dev.path], check=True, capture_output=True)
    mnt = f"{tmp}/mnt"
    os.mkdir(mnt)
    subprocess.run(["mount", dev.path, mnt], check=True)
    try:
        os.mkdir(f"{mnt}/db")
        yield dev, f"{mnt}/db"
    finally:
        subprocess.run(["umount", mnt], check=True)


def test_goal_on_a_mounted_path_tunes_the_disk_under_it(bus, tmp, mounted, daemon_factory):
    """set-goal /mnt/db: the disk under the file system is tuned, and the
    journal says which."""
    dev, path = mounted
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", path, "read-p99=2ms scheduler=kyber"))
    assert dev.scheduler() == "kyber"
    assert status_json(bus, dev.name)["device"] == dev.name
    assert f"{path} is on {dev.name}: tuning {dev.name}" in d.stderr(), d.stderr()
    ok(tunectl(bus, "clear-goal", dev.name))
    assert d.stop() == 0, d.stderr()
    assert dev.scheduler() == "none"


def test_goal_on_a_dev_link(bus, tmp, device_factory, daemon_factory):
    """A link under /dev (as /dev/disk/by-id/...) names its disk."""
    dev = device_factory("shm", size_mib=16)
    link = f"/dev/kt-test-{os.getpid()}"
    os.symlink(dev.path, link)
    try:
        d = service(daemon_factory, bus, tmp)
        ok(tunectl(bus, "set-goal", link, "read-p99=2ms scheduler=kyber"))
        assert dev.scheduler() == "kyber"
        assert status_json(bus, link)["device"] == dev.name
        assert d.stop() == 0, d.stderr()
    finally:
        os.unlink(link)


def test_lookups_do_not_stat_arbitrary_paths(bus, tmp, device_factory, daemon_factory):
    """GetDevice, status and the other lookups take a device name or a /dev
    path only: a path elsewhere is refused without being looked at, for
    anyone; set-goal (authorized) may name one."""
    dev = device_factory("shm", size_mib=16)
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=2ms scheduler=kyber"))
    for path in ("/etc/shadow", "/root", "/dev/../etc/shadow"):
        res = tunectl(bus, "status", path, user="nobody")
        assert res.returncode == 1 and "has no goal" in res.stderr, res.stderr
    res = tunectl(bus, "set-goal", "/proc/self", "read-p99=2ms scheduler=kyber")
    assert res.returncode == 1 and "not a block device" in res.stderr, res.stderr
    assert d.stop() == 0, d.stderr()


# ---------------------------------------------------------------- bounded, lossless
def test_unreadable_state_file_is_kept(bus, tmp, device_factory, daemon_factory):
    """A state file that cannot be read for a reason other than corruption
    (here a symlink in its place, which is never followed: ELOOP) is left
    as it is and not overwritten in that run; the daemon still works."""
    dev = device_factory("shm", size_mib=16)
    os.makedirs(f"{tmp}/state")
    with open(f"{tmp}/elsewhere.pb", "wb") as f:
        f.write(b"kept")
    os.symlink(f"{tmp}/elsewhere.pb", f"{tmp}/state/state.pb")
    d = service(daemon_factory, bus, tmp)
    assert f"Failed to read state file {tmp}/state/state.pb" in d.stderr(), d.stderr()
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=2ms scheduler=kyber"))
    assert d.stop() == 0, d.stderr()
    assert os.path.islink(f"{tmp}/state/state.pb")
    assert not os.path.exists(f"{tmp}/state/state.pb.corrupt")
    with open(f"{tmp}/elsewhere.pb", "rb") as f:
        assert f.read() == b"kept"


FLOOD = r'''
import json, sys
import dbus, dbus.mainloop.glib
from gi.repository import GLib

address, device, connections, per = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
loop, results, total = GLib.MainLoop(), {}, connections * per

def done(kind):
    results[kind] = results.get(kind, 0) + 1
    if sum(results.values()) == total:
        loop.quit()

buses = [dbus.bus.BusConnection(address) for _ in range(connections)]
for b in buses:
    mgr = b.get_object("org.kybertune.KyberTune1", "/org/kybertune/KyberTune1")
    for _ in range(per):
        mgr.Pause(device, dbus_interface="org.kybertune.KyberTune1.Manager", timeout=4,
                  reply_handler=lambda: done("ok"), error_handler=lambda e: done(e.get_dbus_name()))
GLib.timeout_add(8000, loop.quit)
loop.run()
print(json.dumps(results))
'''


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def test_unauthorized_flood_is_bounded(bus, tmp, device_factory, daemon_factory):
    """500 concurrent unauthorized calls as nobody, from 10 connections,
    with a polkit that never answers: at most 64 wait (8 per caller), the
    rest are refused with LimitsExceeded at once; the daemon's memory stays
    bounded, an authorized call is still served and the device is still
    tuned. An over-long argument is refused before polkit is asked."""
    if not has_python_dbus():
        pytest.skip("python3-dbus and python3-gi are needed for the flood and the fake polkit")
    dev = device_factory("shm", size_mib=16)
    pk = FakePolkit(bus, [], silent=True)
    try:
        d = service(daemon_factory, bus, tmp)
        ok(tunectl(bus, "set-goal", dev.name, "read-p99=2ms scheduler=kyber"))
        before = rss_kib(d.proc.pid)
        script = f"{tmp}/flood.py"
        with open(script, "w") as f:
            f.write(FLOOD)
        os.chmod(tmp, 0o755)
        res = run(bus, ["/usr/bin/python3", script, bus.address, dev.name, "10", "50"], user="nobody",
                  timeout=60)
        assert res.returncode == 0, res.stderr
        results = json.loads(res.stdout)
        print(f"\nflood: {results}; polkit asked {len(pk.calls())} times; "
              f"RSS {before} -> {rss_kib(d.proc.pid)} KiB")
        assert "ok" not in results, results
        assert results.get("org.freedesktop.DBus.Error.LimitsExceeded", 0) >= 500 - 64, results
        assert len(pk.calls()) <= 64, len(pk.calls())
        assert rss_kib(d.proc.pid) - before < 16 * 1024
        # Root needs no polkit: served at once, while the queries wait.
        ok(tunectl(bus, "pause", dev.name))
        ok(tunectl(bus, "resume", dev.name))
        assert dev.scheduler() == "kyber"
        assert status_json(bus, dev.name)["state"] != "paused"
        name, msg = dbus_send_error(bus, "SetGoal", "x" * 5000, "read-p99=2ms scheduler=kyber", user="nobody")
        assert name == "org.freedesktop.DBus.Error.InvalidArgs" and "Invalid device: longer than" in msg, \
            (name, msg)
        assert d.stop() == 0, d.stderr()
    finally:
        pk.stop()


def test_flight_record_is_capped(tmp, device_factory, daemon_factory):
    """--record-max-size 5k: the record rotates to FILE.1 and neither file
    passes the cap; kyber-tunectl replay reads both, whole records only;
    a bad size is refused at start naming it."""
    dev = device_factory("shm", size_mib=16)
    record = f"{tmp}/record.pb"
    args = ["--foreground", "--interval=100ms", "--settle=20ms", "--config=", f"--state-dir={tmp}/state",
            f"--runtime-dir={tmp}/run", f"--record={record}", "--goal", f"{dev.name}:read-p99=2ms scheduler=kyber"]
    bad = daemon_factory(args + ["--record-max-size", "4095"])
    assert bad.proc.wait(10) == 2
    assert "Invalid --record-max-size '4095'" in bad.stderr(), bad.stderr()
    d = daemon_factory(args + ["--record-max-size", "5k"])
    assert d.ready(), d.stderr()
    wait_for(lambda: os.path.exists(record + ".1") and os.path.getsize(record) > 0, timeout=30,
             what="the record to rotate")
    assert d.stop() == 0, d.stderr()
    sizes = (os.path.getsize(record), os.path.getsize(record + ".1"))
    print(f"\nrecord sizes {sizes}")
    assert max(sizes) <= 5000, sizes
    for path in (record + ".1", record):
        res = subprocess.run([KYBER_TUNECTL, "replay", path, "--json"], capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 0 and res.stdout.count("\n") >= 1, res.stderr
