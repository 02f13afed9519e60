# SPDX-License-Identifier: LGPL-2.1-or-later
"""Disks that come and go (issue 14, hotplug): a goal set or configured for
a disk that is not here waits for it and applies when it appears; a disk
that goes away releases its observer slot and its D-Bus object and comes
back with its goal; DeviceAdded and DeviceRemoved say so on the bus.

The disks are real: loop devices created and removed through
/dev/loop-control (the kernel's add and remove events) and attached to and
detached from files in /dev/shm (change events; a detached loop device has
no medium). This machine runs no udev, so the daemon hears the kernel's
uevents (--device-events=kernel, what auto picks here). Each step waits for
its effect with a deadline; the interval is a minute, so what is seen came
from the event, not from the interval's own check."""

import fcntl
import json
import os
import signal
import subprocess
import tempfile
import time

import pytest

from tests.integration.dbus_helpers import (BUS_NAME, MANAGER_IFACE, MANAGER_PATH, SignalWatch, dbus_send_error, ok, run,
                                            start_service, status_json, tunectl)
from tests.lib.daemon import wait_for
from tests.lib.fake_udev import FakeUdev
from tests.lib.require import require_tool

LOOP_CTL_ADD = 0x4C80
LOOP_CTL_REMOVE = 0x4C81
# Loop numbers tried for a disk of our own: above what losetup -f hands out.
LOOP_FIRST, LOOP_LAST = 200, 4000
IMAGE_MIB = 8
# Events sent while the daemon is stopped, to overflow its receive buffer.
EVENT_FLOOD = 5000


class AddedLoop:
    """A loop device this test creates (LOOP_CTL_ADD), attaches, detaches
    and removes; close() undoes whatever is left, also after a failure."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.number = None
        self.attached = False
        self.ctl = os.open("/dev/loop-control", os.O_RDWR | os.O_CLOEXEC)

    @property
    def name(self):
        return f"loop{self.number}"

    def add(self):
        for n in range(LOOP_FIRST, LOOP_LAST):
            if os.path.exists(f"/sys/class/block/loop{n}"):
                continue
            try:
                self.number = fcntl.ioctl(self.ctl, LOOP_CTL_ADD, n)
                break
            except OSError:
                continue
        assert self.number is not None, "no free loop number to add"
        wait_for(lambda: os.path.exists(f"/dev/{self.name}"), what=f"/dev/{self.name}")

    def image(self, label):
        path = os.path.join(self.tmp, f"{label}.img")
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.truncate(IMAGE_MIB << 20)
        return path

    def attach(self, label):
        subprocess.run(["losetup", "--direct-io=on", f"/dev/{self.name}", self.image(label)], check=True)
        self.attached = True

    def detach(self):
        subprocess.run(["losetup", "-d", f"/dev/{self.name}"], check=True)
        self.attached = False
        wait_for(lambda: self.size() == 0, what=f"{self.name} detached")

    def size(self):
        with open(f"/sys/class/block/{self.name}/size") as f:
            return int(f.read())

    def scheduler(self):
        with open(f"/sys/class/block/{self.name}/queue/scheduler") as f:
            return f.read().split("[")[1].split("]")[0]

    def remove(self):
        fcntl.ioctl(self.ctl, LOOP_CTL_REMOVE, self.number)
        self.number = None

    def close(self):
        try:
            if self.number is not None:
                if self.attached:
                    subprocess.run(["losetup", "-d", f"/dev/{self.name}"], check=False)
                    wait_for(lambda: self.size() == 0, what=f"{self.name} detached")
                with open(f"/sys/class/block/{self.name}/queue/scheduler", "w") as f:
                    f.write("none")
                self.remove()
        finally:
            os.close(self.ctl)


@pytest.fixture
def tmp():
    with tempfile.TemporaryDirectory(prefix="kt-hotplug-", dir="/dev/shm") as t:
        yield t


@pytest.fixture
def loops(tmp):
    require_tool("losetup")
    if not os.path.exists("/dev/loop-control"):
        pytest.skip("no /dev/loop-control: loop devices cannot be added here")
    made = []

    def make():
        lo = AddedLoop(tmp)
        made.append(lo)
        lo.add()
        return lo

    yield make
    for lo in reversed(made):
        lo.close()


def service(daemon_factory, bus, tmp, conf=None, extra=("--device-events=kernel",)):
    return start_service(daemon_factory, bus, tmp, conf, interval="60s", extra=extra)


def listed(bus):
    out = ok(tunectl(bus, "list", "--json")).stdout
    return {o["device"]: o["state"] for o in map(json.loads, out.splitlines())}


def waiting_all(bus):
    """WaitingGoals: [device, goal, source] each."""
    out = ok(run(bus, ["busctl", f"--address={bus.address}", "--json=short", "get-property", BUS_NAME,
                       MANAGER_PATH, MANAGER_IFACE, "WaitingGoals"])).stdout
    return json.loads(out)["data"]


def waiting(bus):
    return {dev: (goal, source) for dev, goal, source in waiting_all(bus)}


def tune_other(bus, watch, other):
    """A goal set on other (attached here) tunes it: its DeviceAdded comes."""
    other.attach("other")
    ok(tunectl(bus, "set-goal", other.name, "read-p99=3ms scheduler=kyber"))
    assert watch.wait("DeviceAdded", other.name), watch.signals()


def test_goal_waits_for_its_disk_and_follows_it(bus, tmp, loops, daemon_factory):
    """set-goal for a loop number with no file: waiting (CLI says so, status
    lists it). A file attached: tuned, DeviceAdded. Detached: DeviceRemoved,
    no object, its observer slot free (MaxDevices=1: another disk can take
    it), the goal waiting again. The same file back: tuned again with its
    goal. A different file on that number is another disk: untouched."""
    conf = os.path.join(tmp, "kyber-tuned.conf")
    with open(conf, "w") as f:
        f.write("[Tuner]\nMaxDevices=1\n")
    d = service(daemon_factory, bus, tmp, conf)
    watch = SignalWatch(bus)
    try:
        lo, other = loops(), loops()
        tune_other(bus, watch, other)
        ok(tunectl(bus, "clear-goal", other.name))

        res = ok(tunectl(bus, "set-goal", lo.name, "read-p99=1ms scheduler=kyber"))
        assert "is not here" in res.stdout, res.stdout
        assert waiting(bus) == {lo.name: ("read-p99=1ms mode=latency scheduler=kyber", "runtime")}
        assert "waiting for the disk" in ok(tunectl(bus, "status")).stdout
        assert "waiting for the disk" in ok(tunectl(bus, "status", f"/dev/{lo.name}")).stdout
        assert json.loads(ok(tunectl(bus, "status", lo.name, "--json")).stdout)["state"] == "waiting"
        res = tunectl(bus, "pause", lo.name)
        assert res.returncode == 1 and "is not tuned: its goal read-p99=1ms mode=latency scheduler=kyber waits for the disk " \
            "to appear" in res.stderr, res.stderr
        assert listed(bus) == {lo.name: "waiting"}
        assert lo.scheduler() == "none"

        t0 = time.time()
        lo.attach("a")
        assert watch.wait("DeviceAdded", lo.name), (watch.signals(), d.stderr())
        added_s = watch.time_of("DeviceAdded", lo.name) - t0
        st = status_json(bus, lo.name)
        assert (st["goal"], st["goal_source"]) == ("read-p99=1ms mode=latency scheduler=kyber", "runtime"), st
        assert lo.scheduler() == "kyber"
        assert waiting(bus) == {}

        t0 = time.time()
        lo.detach()
        assert watch.wait("DeviceRemoved", lo.name), (watch.signals(), d.stderr())
        print(f"\nattach -> DeviceAdded {added_s * 1e3:.0f} ms, detach -> DeviceRemoved "
              f"{(watch.time_of('DeviceRemoved', lo.name) - t0) * 1e3:.0f} ms (interval 60 s)")
        assert listed(bus) == {lo.name: "waiting"}
        assert waiting(bus) == {lo.name: ("read-p99=1ms mode=latency scheduler=kyber", "runtime")}
        assert "its medium went away" in d.stderr(), d.stderr()
        # Its slot is free: the one slot MaxDevices=1 allows takes another disk.
        ok(tunectl(bus, "set-goal", other.name, "read-p99=3ms scheduler=kyber"))
        ok(tunectl(bus, "clear-goal", other.name))

        # Another file on the same number is another disk.
        lo.attach("b")
        # Its event is queued before losetup returns; give the daemon a
        # moment to act on it wrongly.
        time.sleep(1)
        assert listed(bus) == {lo.name: "waiting"}, d.stderr()
        assert lo.scheduler() == "none"
        lo.detach()

        n_added = watch.signals().count(("DeviceAdded", lo.name))
        lo.attach("a")
        wait_for(lambda: watch.signals().count(("DeviceAdded", lo.name)) == n_added + 1,
                 what="DeviceAdded on return")
        st = status_json(bus, lo.name)
        assert (st["goal"], st["goal_source"]) == ("read-p99=1ms mode=latency scheduler=kyber", "runtime"), st
        assert lo.scheduler() == "kyber"
    finally:
        watch.stop()
    assert d.stop() == 0, d.stderr()
    assert lo.scheduler() == "none"


def test_waiting_goals_across_restart_and_removal(bus, tmp, loops, daemon_factory):
    """A configured goal and a run-time goal for disks not here wait, and
    still wait after a restart (the run-time one from the state file). The
    disks appear: each is tuned with its goal and its source. A loop device
    removed altogether (the kernel's remove event) goes the same way; and
    clear-goal on a goal that waits forgets it."""
    cfg_lo, rt_lo = loops(), loops()
    conf = os.path.join(tmp, "kyber-tuned.conf")
    with open(conf, "w") as f:
        f.write(f"[Goals]\n{cfg_lo.name}=read-p99=5ms scheduler=kyber\n")
    d = service(daemon_factory, bus, tmp, conf)
    # A run-time goal over a configured one that waits: clearing it
    # leaves the configured one waiting, as for a tuned disk.
    ok(tunectl(bus, "set-goal", cfg_lo.name, "read-p99=1ms scheduler=kyber"))
    assert len(waiting_all(bus)) == 2, waiting_all(bus)
    ok(tunectl(bus, "clear-goal", cfg_lo.name))
    assert waiting(bus) == {cfg_lo.name: ("read-p99=5ms mode=latency scheduler=kyber", "config")}, d.stderr()
    ok(tunectl(bus, "set-goal", rt_lo.name, "read-p99=2ms scheduler=kyber"))
    expect = {cfg_lo.name: ("read-p99=5ms mode=latency scheduler=kyber", "config"),
              rt_lo.name: ("read-p99=2ms mode=latency scheduler=kyber", "runtime")}
    assert waiting(bus) == expect
    assert d.stop() == 0, d.stderr()

    d = service(daemon_factory, bus, tmp, conf)
    assert waiting(bus) == expect, d.stderr()
    cfg_lo.attach("cfg")
    rt_lo.attach("rt")
    wait_for(lambda: waiting(bus) == {}, what="both goals applied")
    assert status_json(bus, cfg_lo.name)["goal_source"] == "config"
    assert status_json(bus, rt_lo.name)["goal_source"] == "runtime"

    # Removed altogether: the kernel's remove event.
    rt_name = rt_lo.name
    rt_lo.detach()
    rt_lo.remove()
    wait_for(lambda: rt_name in waiting(bus), what="goal waiting after removal")
    assert not os.path.exists(f"/sys/class/block/{rt_name}")
    ok(tunectl(bus, "clear-goal", rt_name))
    assert waiting(bus) == {}, d.stderr()
    assert d.stop() == 0, d.stderr()
    assert cfg_lo.scheduler() == "none"

    # Cleared: gone from the state file too.
    d = service(daemon_factory, bus, tmp, conf)
    assert waiting(bus) == {}, d.stderr()
    assert d.stop() == 0, d.stderr()


def test_new_disk_on_old_number_seen_at_once(bus, tmp, loops, daemon_factory):
    """(d) with events: a tuned loop device detached and at once attached
    to another file is dropped when its events come, not at the next
    interval (a minute here), and the new disk is then left as it is.
    (Whether the queue got its original scheduler back in between depends
    on whether the daemon read the detach before the attach: both are
    right, and not asserted.)"""
    lo = loops()
    lo.attach("old")
    d = service(daemon_factory, bus, tmp)
    watch = SignalWatch(bus)
    try:
        ok(tunectl(bus, "set-goal", lo.name, "read-p99=1ms scheduler=kyber"))
        assert watch.wait("DeviceAdded", lo.name), watch.signals()
        assert lo.scheduler() == "kyber"
        subprocess.run(["losetup", "-d", f"/dev/{lo.name}"], check=True)
        lo.attached = False
        lo.attach("new")
        assert watch.wait("DeviceRemoved", lo.name, timeout=20), (watch.signals(), d.stderr())
    finally:
        watch.stop()
    # The goal waits for the old file.
    assert listed(bus) == {lo.name: "waiting"}
    with open(f"/sys/class/block/{lo.name}/queue/scheduler", "w") as f:
        f.write("mq-deadline")
    assert d.stop() == 0, d.stderr()
    assert lo.scheduler() == "mq-deadline"


def test_udev_events(bus, tmp, loops, daemon_factory):
    """--device-events=udev (what auto picks where udev runs): the same
    goal waiting and following its disk, heard through an sd-device monitor
    on udev's netlink group. No udevd here: tests/lib/fake_udev.py sends
    the kernel's events on in udev's format."""
    relay = FakeUdev().start()
    try:
        d = service(daemon_factory, bus, tmp, extra=("--device-events=udev",))
        watch = SignalWatch(bus)
        try:
            lo, other = loops(), loops()
            tune_other(bus, watch, other)
            ok(tunectl(bus, "set-goal", lo.name, "read-p99=1ms scheduler=kyber"))
            assert waiting(bus) == {lo.name: ("read-p99=1ms mode=latency scheduler=kyber", "runtime")}
            lo.attach("a")
            assert watch.wait("DeviceAdded", lo.name), (watch.signals(), relay.count, d.stderr())
            assert lo.scheduler() == "kyber"
            lo.detach()
            assert watch.wait("DeviceRemoved", lo.name), (watch.signals(), relay.count, d.stderr())
            assert lo.scheduler() == "none", d.stderr()
        finally:
            watch.stop()
        assert d.stop() == 0, d.stderr()
    finally:
        relay.stop()


@pytest.mark.parametrize("value", ["", "UDEV", "kernel,udev", "none"])
def test_bad_device_events_value(bus, tmp, daemon_factory, value):
    """--device-events takes auto, udev, kernel or off: anything else stops
    the start with a message that names the value and the choices."""
    d = daemon_factory(["--config=", f"--state-dir={tmp}/state", f"--runtime-dir={tmp}/run",
                        f"--device-events={value}"], env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address})
    assert d.proc.wait(timeout=15) == 2
    assert f"Invalid --device-events '{value}': auto, udev, kernel or off" in d.stderr(), d.stderr()


def test_disk_plugged_while_daemon_down(bus, tmp, loops, daemon_factory):
    """A goal set for a disk that was not here, the daemon stopped, the disk
    attached meanwhile: the next start tunes it with that goal, and from
    then on the state file keeps the goal under the disk's own id (it
    follows the disk, not the name)."""
    lo = loops()
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", lo.name, "read-p99=2ms scheduler=kyber"))
    assert d.stop() == 0, d.stderr()
    lo.attach("a")

    d = service(daemon_factory, bus, tmp)
    st = status_json(bus, lo.name)
    assert (st["goal"], st["goal_source"]) == ("read-p99=2ms mode=latency scheduler=kyber", "runtime"), d.stderr()
    assert waiting(bus) == {}
    assert lo.scheduler() == "kyber"
    assert d.stop() == 0, d.stderr()
    assert lo.scheduler() == "none"

    # Another file on that number is another disk: the goal waits for "a".
    lo.detach()
    lo.attach("b")
    d = service(daemon_factory, bus, tmp)
    assert waiting(bus) == {lo.name: ("read-p99=2ms mode=latency scheduler=kyber", "runtime")}, d.stderr()
    assert lo.scheduler() == "none"
    assert d.stop() == 0, d.stderr()


NO_SUCH_DEVICE = "org.kybertune.KyberTune1.Error.NoSuchDevice"
INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"


@pytest.mark.parametrize("device,error,says", [
    ("/dev/a b", NO_SUCH_DEVICE, "No such block device: /dev/a b (No such file or directory)"),
    ("/dev/x\x1b[31m", NO_SUCH_DEVICE, "No such block device: /dev/x\x1b[31m (No such file"),
    ("/dev/./nvme9n1", NO_SUCH_DEVICE, "No such block device: /dev/./nvme9n1 (No such file"),
    ("/dev/" + "x" * 300, INVALID_ARGS, "(File name too long)"),
    ("a b", INVALID_ARGS, "Invalid device name 'a b'"),
    ("/var/nosuchdir/x", NO_SUCH_DEVICE, "No such block device or path: /var/nosuchdir/x"),
])
def test_goal_for_what_cannot_be_a_disk(bus, tmp, daemon_factory, device, error, says):
    """Only a valid name or a plain /dev path may wait for its disk; any
    other text that does not resolve is refused at once, naming it, and
    nothing waits."""
    d = service(daemon_factory, bus, tmp)
    name, msg = dbus_send_error(bus, "SetGoal", device, "read-p99=1ms scheduler=kyber")
    assert (name, says in msg) == (error, True), (name, msg)
    assert waiting(bus) == {}
    assert d.stop() == 0, d.stderr()


def test_missed_events_rescan(bus, tmp, loops, daemon_factory):
    """Events lost to an overflowing socket (the daemon stopped while
    thousands of events are sent) are noticed (ENOBUFS) and made up for by
    looking at every disk: a goal waiting for a disk that was attached
    meanwhile applies, a tuned disk detached meanwhile is dropped."""
    tuned, waits = loops(), loops()
    tuned.attach("tuned")
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", tuned.name, "read-p99=1ms scheduler=kyber"))
    ok(tunectl(bus, "set-goal", waits.name, "read-p99=2ms scheduler=kyber"))
    d.proc.send_signal(signal.SIGSTOP)
    try:
        # Synthetic change events of our own device (each a socket buffer
        # of about a kilobyte to the receiver): far past the daemon's 1 MiB,
        # so the events that matter, sent after them, are lost.
        with open(f"/sys/class/block/{waits.name}/uevent", "w") as f:
            for _ in range(EVENT_FLOOD):
                f.write("change")
                f.flush()
        tuned.detach()
        waits.attach("waits")
    finally:
        d.proc.send_signal(signal.SIGCONT)
    wait_for(lambda: "Missed block device events" in d.stderr(), what="the overflow noticed")
    wait_for(lambda: listed(bus).get(waits.name) not in (None, "waiting"), what="the waiting goal applied")
    assert listed(bus)[tuned.name] == "waiting", d.stderr()
    assert tuned.scheduler() == "none", d.stderr()
    assert waits.scheduler() == "kyber"
    assert d.stop() == 0, d.stderr()
